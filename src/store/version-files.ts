import type SQLite from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.ts';

export type VersionFileRow = DB['version_files'];

/** Rows per multi-row INSERT through Kysely (9 columns: 4,500 parameters). */
const ROWS_PER_INSERT = 500;

/** Prepared statements per SQLite connection (compiled once, run per row). */
const statements = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>();
function prepared(sqlite: SQLite.Database, text: string): SQLite.Statement {
  let m = statements.get(sqlite);
  if (!m) {
    m = new Map();
    statements.set(sqlite, m);
  }
  let st = m.get(text);
  if (!st) {
    st = sqlite.prepare(text);
    m.set(text, st);
  }
  return st;
}

const INSERT_FILE =
  'insert into version_files (version_id, path, source_sha256, source_size, sha256, size, content_type, encodings, removed) values (?, ?, ?, ?, ?, ?, ?, ?, ?)';
const UPDATE_FILE =
  'update version_files set sha256 = ?, size = ?, content_type = ?, encodings = ? where version_id = ? and path = ?';

/**
 * Inserts file rows inside `trx`. On SQLite (`sqlite` = the connection `trx` holds) one prepared
 * statement runs per row: a publish of 10,000 files spent more time building and compiling
 * 500-row INSERTs than SQLite spent storing them. Elsewhere, batched multi-row INSERTs.
 */
export async function insertVersionFiles(
  trx: Transaction<DB>,
  rows: VersionFileRow[],
  sqlite?: SQLite.Database,
): Promise<void> {
  if (sqlite) {
    const st = prepared(sqlite, INSERT_FILE);
    for (const r of rows) {
      st.run(
        r.version_id,
        r.path,
        r.source_sha256,
        r.source_size,
        r.sha256,
        r.size,
        r.content_type,
        r.encodings,
        r.removed,
      );
    }
    return;
  }
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await trx
      .insertInto('version_files')
      .values(rows.slice(i, i + ROWS_PER_INSERT))
      .execute();
  }
}

/** Rewrites the served bytes, content type and encodings of existing rows inside `trx` (as above). */
export async function updateVersionFiles(
  trx: Transaction<DB>,
  rows: VersionFileRow[],
  sqlite?: SQLite.Database,
): Promise<void> {
  const st = sqlite ? prepared(sqlite, UPDATE_FILE) : null;
  for (const r of rows) {
    if (st) st.run(r.sha256, r.size, r.content_type, r.encodings, r.version_id, r.path);
    else
      await trx
        .updateTable('version_files')
        .set({ sha256: r.sha256, size: r.size, content_type: r.content_type, encodings: r.encodings })
        .where('version_id', '=', r.version_id)
        .where('path', '=', r.path)
        .execute();
  }
}

/** What a query needs to know of a version to list its files. */
export interface LayeredVersion {
  id: string;
  base_id: string | null;
}

/**
 * Every file of a version, as rows of `version_files`. A flat version's own rows; a layered version's
 * rows (added and changed files) plus the rows of its base that it neither overrides nor removes.
 * Inherited rows keep the base's `version_id`. Order is not defined: wrap it (`.as('f')`) to sort.
 */
export function versionFilesQuery(db: Kysely<DB> | Transaction<DB>, v: LayeredVersion) {
  const own = db
    .selectFrom('version_files')
    .selectAll()
    .where('version_id', '=', v.id)
    .where('removed', '=', 0);
  if (!v.base_id) return own;
  const baseId = v.base_id;
  return own.unionAll(
    db
      .selectFrom('version_files as b')
      .selectAll('b')
      .where('b.version_id', '=', baseId)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('version_files as o')
              .select('o.path')
              .where('o.version_id', '=', v.id)
              .whereRef('o.path', '=', 'b.path'),
          ),
        ),
      ),
  );
}
