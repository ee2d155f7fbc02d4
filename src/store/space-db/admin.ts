import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { refusedSql, sqlSkeleton } from './guard.ts';
import { type SpaceDatabase, SpaceDbError } from './space-db.ts';

/**
 * The owner's side of a space database (issue 26, behaviour §10): inspect, dump, keyset export,
 * import of an export, and migrations with a ledger. Everything here runs on the instance that owns
 * the space's database (see ../../domain/database/host.ts); the HTTP layer never opens the file.
 */

/** The ledger of applied migrations (a table of the space's own database). */
export const MIGRATIONS_TABLE = '_spaces_migrations';
export const EXPORT_FORMAT = 'spaces.db-export';
export const EXPORT_VERSION = 1;
/** Largest export page (rows are added until the page's JSON would pass this). */
export const EXPORT_PAGE_BYTES = 16 * 1024 * 1024;
export const DUMP_DEFAULT_ROWS = 25;
export const DUMP_MAX_ROWS = 100;

export interface ColumnInfo {
  name: string;
  type: string;
  notNull: boolean;
  /** 1-based position in the primary key; 0 when the column is not part of it. */
  primaryKey: number;
  default: string | null;
}
export interface IndexInfo {
  name: string;
  unique: boolean;
  columns: string[];
  /** `c` made by CREATE INDEX, `u` by a UNIQUE constraint, `pk` by the primary key. */
  origin: string;
}
export interface TableInfo {
  name: string;
  rowCount: number;
  withoutRowid: boolean;
  columns: ColumnInfo[];
  indexes: IndexInfo[];
  sql: string;
}
export interface DbInspection {
  sizeBytes: number;
  tables: TableInfo[];
  views: { name: string; sql: string }[];
  triggers: { name: string; table: string; sql: string }[];
  migrations: { name: string; sha256: string; appliedAt: string }[];
}

/** A value as exported: JSON for what JSON holds exactly; tagged objects for the rest. */
export type ExportValue = string | number | null | { $blob: string } | { $int: string } | { $real: string };
export interface ExportTable {
  name: string;
  columns: string[];
  rows: ExportValue[][];
}
export interface SchemaEntry {
  type: 'table' | 'index' | 'view' | 'trigger';
  name: string;
  table: string;
  sql: string;
}
export interface ExportPage {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  exportedAt: string;
  /** Only on the first page (no cursor): how to make the tables again, in order. */
  schema?: SchemaEntry[];
  tables: ExportTable[];
  /** The cursor of the next page; null on the last. */
  next: string | null;
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const isInternal = (name: string): boolean => name.startsWith('sqlite_');

function userTables(db: Database.Database): { name: string; sql: string; withoutRowid: boolean }[] {
  const list = db.pragma('table_list') as { schema: string; name: string; type: string; wr: number }[];
  const sqlOf = new Map(
    (
      db.prepare(`SELECT name, sql FROM sqlite_schema WHERE type = 'table'`).all() as {
        name: string;
        sql: string;
      }[]
    ).map((r) => [r.name, r.sql]),
  );
  return list
    .filter((t) => t.schema === 'main' && t.type === 'table' && !isInternal(t.name))
    .map((t) => ({ name: t.name, sql: sqlOf.get(t.name) ?? '', withoutRowid: t.wr === 1 }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function columnsOf(db: Database.Database, table: string): ColumnInfo[] {
  const rows = db.pragma(`table_info(${quote(table)})`) as {
    name: string;
    type: string;
    notnull: number;
    pk: number;
    dflt_value: string | null;
  }[];
  return rows.map((c) => ({
    name: c.name,
    type: c.type,
    notNull: c.notnull === 1,
    primaryKey: c.pk,
    default: c.dflt_value,
  }));
}

function indexesOf(db: Database.Database, table: string): IndexInfo[] {
  const list = db.pragma(`index_list(${quote(table)})`) as { name: string; unique: number; origin: string }[];
  return list.map((i) => ({
    name: i.name,
    unique: i.unique === 1,
    origin: i.origin,
    columns: (db.pragma(`index_info(${quote(i.name)})`) as { name: string | null }[]).map(
      (c) => c.name ?? '<expression>',
    ),
  }));
}

function countRows(db: Database.Database, table: string): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number }).n;
}

function ledger(db: Database.Database): DbInspection['migrations'] {
  const has = db
    .prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`)
    .get(MIGRATIONS_TABLE);
  if (!has) return [];
  return (
    db
      .prepare(`SELECT name, sha256, applied_at FROM ${MIGRATIONS_TABLE} ORDER BY applied_at, name`)
      .all() as {
      name: string;
      sha256: string;
      applied_at: string;
    }[]
  ).map((r) => ({ name: r.name, sha256: r.sha256, appliedAt: r.applied_at }));
}

/** What the database holds: tables (without the migrations ledger) with columns, indexes and row counts. */
export function inspect(sdb: SpaceDatabase): DbInspection {
  const { db } = sdb;
  const tables = userTables(db)
    .filter((t) => t.name !== MIGRATIONS_TABLE)
    .map((t) => ({
      name: t.name,
      rowCount: countRows(db, t.name),
      withoutRowid: t.withoutRowid,
      columns: columnsOf(db, t.name),
      indexes: indexesOf(db, t.name),
      sql: t.sql,
    }));
  const others = db
    .prepare(
      `SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE type IN ('view', 'trigger') ORDER BY name`,
    )
    .all() as { type: string; name: string; tbl_name: string; sql: string }[];
  return {
    sizeBytes: sdb.size(),
    tables,
    views: others.filter((o) => o.type === 'view').map((o) => ({ name: o.name, sql: o.sql })),
    triggers: others
      .filter((o) => o.type === 'trigger')
      .map((o) => ({ name: o.name, table: o.tbl_name, sql: o.sql })),
    migrations: ledger(db),
  };
}

function exportValue(v: unknown): ExportValue {
  if (v === null || typeof v === 'string') return v;
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : { $int: v.toString() };
  if (typeof v === 'number') return Number.isFinite(v) ? v : { $real: String(v) };
  if (Buffer.isBuffer(v)) return { $blob: v.toString('base64') };
  return String(v);
}

function importValue(v: unknown, where: string): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.$blob === 'string') return Buffer.from(o.$blob, 'base64');
    if (typeof o.$int === 'string' && /^-?\d{1,20}$/.test(o.$int)) return BigInt(o.$int);
    if (o.$real === 'Infinity') return Number.POSITIVE_INFINITY;
    if (o.$real === '-Infinity') return Number.NEGATIVE_INFINITY;
  }
  throw new SpaceDbError(
    'db_import_invalid',
    `${where}: a value must be null, a number, a string or a tagged value`,
  );
}

/** How a table's rows are walked in a stable order: the rowid, or the primary key of a WITHOUT ROWID table. */
function keyOf(table: { name: string; withoutRowid: boolean }, cols: ColumnInfo[]): string[] {
  if (table.withoutRowid)
    return cols
      .filter((c) => c.primaryKey > 0)
      .sort((a, b) => a.primaryKey - b.primaryKey)
      .map((c) => c.name);
  const names = new Set(cols.map((c) => c.name.toLowerCase()));
  const alias = ['rowid', '_rowid_', 'oid'].find((a) => !names.has(a));
  if (!alias)
    throw new SpaceDbError('db_export_failed', `table ${table.name} hides its rowid behind columns`);
  return [alias];
}

interface Cursor {
  t: string;
  k: ExportValue[];
}
function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}
function decodeCursor(s: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString()) as Cursor;
    if (typeof c.t === 'string' && Array.isArray(c.k)) return c;
  } catch {}
  throw new SpaceDbError('db_export_cursor_invalid', 'the cursor is not one an export page gave');
}

function schemaOf(db: Database.Database, only: string | null): SchemaEntry[] {
  const rows = db
    .prepare(
      `SELECT type, name, tbl_name, sql FROM sqlite_schema
        WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
        ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, rowid`,
    )
    .all() as { type: SchemaEntry['type']; name: string; tbl_name: string; sql: string }[];
  return rows
    .filter((r) => only === null || r.tbl_name === only)
    .map((r) => ({ type: r.type, name: r.name, table: r.tbl_name, sql: r.sql }));
}

/**
 * One page of the export (behaviour §10): the schema on the first page, then each table's rows in
 * key order until the page's JSON reaches `maxBytes`; `next` continues where it stopped. `only`
 * exports one table. The migrations ledger is exported like any table, so an import restores it.
 */
export function exportPage(
  sdb: SpaceDatabase,
  opts: { table: string | null; cursor: string | null; now: string; maxBytes?: number },
): ExportPage {
  const { db } = sdb;
  const maxBytes = opts.maxBytes ?? EXPORT_PAGE_BYTES;
  let tables = userTables(db);
  if (opts.table !== null) {
    tables = tables.filter((t) => t.name === opts.table);
    if (!tables.length)
      throw new SpaceDbError('db_table_not_found', `the database has no table ${opts.table}`);
  }
  const cursor = opts.cursor ? decodeCursor(opts.cursor) : null;
  let start = 0;
  if (cursor) {
    start = tables.findIndex((t) => t.name === cursor.t);
    if (start < 0)
      throw new SpaceDbError('db_export_cursor_invalid', `table ${cursor.t} is gone since the last page`);
  }
  const page: ExportPage = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: opts.now,
    ...(cursor ? {} : { schema: schemaOf(db, opts.table) }),
    tables: [],
    next: null,
  };
  let bytes = JSON.stringify(page).length;
  for (let i = start; i < tables.length; i++) {
    const table = tables[i]!;
    const info = columnsOf(db, table.name);
    const key = keyOf(table, info);
    const columns = info.map((c) => c.name);
    const out: ExportTable = { name: table.name, columns, rows: [] };
    page.tables.push(out);
    bytes += JSON.stringify(out).length + 1;
    const after =
      cursor && i === start && cursor.k.length
        ? cursor.k.map((v, j) => importValue(v, `cursor key ${j}`))
        : null;
    const keyList = key.map(quote).join(', ');
    const where = after ? `WHERE (${keyList}) > (${key.map(() => '?').join(', ')})` : '';
    const stmt = db
      .prepare(
        `SELECT ${key.map((k, j) => `${quote(k)} AS "__k${j}"`).join(', ')}, ${columns.map(quote).join(', ')}
           FROM ${quote(table.name)} ${where} ORDER BY ${keyList}`,
      )
      .raw(true)
      .safeIntegers(true);
    let lastKey: unknown[] | null = null;
    for (const raw of stmt.iterate(...(after ?? [])) as Iterable<unknown[]>) {
      const row = raw.slice(key.length).map(exportValue);
      const size = JSON.stringify(row).length + 1;
      if (bytes + size > maxBytes && (lastKey !== null || page.tables.some((t) => t.rows.length))) {
        // The page is full: the next one starts after the last row taken (of this table, or at its start).
        page.next = encodeCursor(
          lastKey ? { t: table.name, k: lastKey.map(exportValue) } : { t: table.name, k: [] },
        );
        if (!lastKey) page.tables.pop();
        return page;
      }
      out.rows.push(row);
      bytes += size;
      lastKey = raw.slice(0, key.length);
    }
  }
  return page;
}

/** The first `limit` rows of every table (default 25, at most 100), as objects, and whether there are more. */
export function dump(
  sdb: SpaceDatabase,
  limit: number,
): { tables: { name: string; rowCount: number; truncated: boolean; rows: Record<string, ExportValue>[] }[] } {
  const { db } = sdb;
  const n = Math.min(Math.max(1, Math.floor(limit)), DUMP_MAX_ROWS);
  return {
    tables: userTables(db)
      .filter((t) => t.name !== MIGRATIONS_TABLE)
      .map((t) => {
        const key = keyOf(t, columnsOf(db, t.name));
        const rows = db
          .prepare(`SELECT * FROM ${quote(t.name)} ORDER BY ${key.map(quote).join(', ')} LIMIT ?`)
          .safeIntegers(true)
          .all(n) as Record<string, unknown>[];
        const rowCount = countRows(db, t.name);
        return {
          name: t.name,
          rowCount,
          truncated: rowCount > rows.length,
          rows: rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, exportValue(v)]))),
        };
      }),
  };
}

function checkedSql(sql: string, where: string): string {
  const refused = refusedSql(sql);
  if (refused) throw new SpaceDbError('db_statement_refused', `${where}: ${refused}`);
  return sql;
}

/** Drops every table, view and trigger of the database (inside the caller's transaction). */
function dropAll(db: Database.Database): void {
  const objects = db
    .prepare(
      `SELECT type, name FROM sqlite_schema WHERE type IN ('view', 'trigger', 'table') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
    )
    .all() as { type: string; name: string }[];
  for (const type of ['trigger', 'view', 'table'])
    for (const o of objects.filter((x) => x.type === type))
      db.exec(`DROP ${type.toUpperCase()} ${quote(o.name)}`);
}

/**
 * Replaces the whole database with an export (every page merged into one document): in one
 * transaction, drop what is there, make the schema, insert the rows. Any failure leaves the
 * database as it was.
 */
export function importExport(sdb: SpaceDatabase, doc: unknown): { tables: number; rows: number } {
  const d = doc as Partial<ExportPage>;
  if (!d || typeof d !== 'object' || d.format !== EXPORT_FORMAT)
    throw new SpaceDbError('db_import_invalid', `format must be "${EXPORT_FORMAT}"`);
  if (d.version !== EXPORT_VERSION)
    throw new SpaceDbError('db_import_invalid', `this server reads export version ${EXPORT_VERSION}`);
  if (d.next)
    throw new SpaceDbError('db_import_invalid', 'this is one page of an export: merge every page first');
  if (!Array.isArray(d.schema)) throw new SpaceDbError('db_import_invalid', 'schema must be an array');
  if (!Array.isArray(d.tables)) throw new SpaceDbError('db_import_invalid', 'tables must be an array');
  const { db } = sdb;
  let rows = 0;
  const run = db.transaction(() => {
    db.pragma('defer_foreign_keys = ON');
    dropAll(db);
    d.schema!.forEach((s, i) => {
      if (!s || typeof s.sql !== 'string' || typeof s.name !== 'string' || s.name.startsWith('sqlite_'))
        throw new SpaceDbError('db_import_invalid', `schema[${i}] needs a name and sql`);
      db.exec(checkedSql(s.sql, `schema[${i}]`));
    });
    d.tables!.forEach((t, i) => {
      if (!t || typeof t.name !== 'string' || !Array.isArray(t.columns) || !Array.isArray(t.rows))
        throw new SpaceDbError('db_import_invalid', `tables[${i}] needs name, columns and rows`);
      if (!t.columns.length || !t.columns.every((c) => typeof c === 'string'))
        throw new SpaceDbError('db_import_invalid', `tables[${i}].columns must be names`);
      const insert = db.prepare(
        `INSERT INTO ${quote(t.name)} (${t.columns.map(quote).join(', ')}) VALUES (${t.columns.map(() => '?').join(', ')})`,
      );
      t.rows.forEach((r, j) => {
        if (!Array.isArray(r) || r.length !== t.columns.length)
          throw new SpaceDbError('db_import_invalid', `tables[${i}].rows[${j}] needs one value per column`);
        insert.run(...r.map((v, k) => importValue(v, `tables[${i}].rows[${j}][${k}]`)));
        rows++;
      });
    });
  });
  sdb.guarded(() => run());
  return { tables: d.tables.length, rows };
}

export interface Migration {
  name: string;
  sql: string;
}
export interface MigrateResult {
  applied: { name: string; sha256: string }[];
  skipped: string[];
  dryRun: boolean;
}

const DROP = /\bDROP\s+(TABLE|VIEW|COLUMN)\b|\bALTER\s+TABLE\b[^;]*\bDROP\b/i;
const RENAME = /\bALTER\s+TABLE\b[^;]*\bRENAME\b/i;

/** What a migration would destroy or rename (so it needs the matching allow flag), or null. */
export function destructiveKind(sql: string): 'drop' | 'rename' | null {
  const bare = sqlSkeleton(sql);
  if (DROP.test(bare)) return 'drop';
  if (RENAME.test(bare)) return 'rename';
  return null;
}

/**
 * Applies the migrations not yet in the ledger, in the order given, in one transaction (behaviour
 * §10): one already applied with other SQL is refused (`db_migration_changed`), a drop or rename
 * needs its allow flag (`db_migration_destructive`), a failing one rolls every one back
 * (`db_migration_failed`). A dry run does all of it and rolls back.
 */
export function migrate(
  sdb: SpaceDatabase,
  input: { migrations: Migration[]; dryRun: boolean; allowDrop: boolean; allowRename: boolean; now: string },
): MigrateResult {
  const { db } = sdb;
  const result: MigrateResult = { applied: [], skipped: [], dryRun: input.dryRun };
  const rollback = new Error('dry run');
  const run = db.transaction(() => {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (name TEXT PRIMARY KEY, sha256 TEXT NOT NULL, applied_at TEXT NOT NULL)`,
    );
    const known = new Map(ledger(db).map((m) => [m.name, m.sha256]));
    const record = db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name, sha256, applied_at) VALUES (?, ?, ?)`);
    input.migrations.forEach((m, i) => {
      const sha256 = createHash('sha256').update(m.sql).digest('hex');
      const had = known.get(m.name);
      if (had !== undefined) {
        if (had !== sha256)
          throw new SpaceDbError(
            'db_migration_changed',
            `migration ${m.name} was applied with other SQL; add a new migration instead of editing it`,
            `/migrations/${i}/sql`,
          );
        result.skipped.push(m.name);
        return;
      }
      const kind = destructiveKind(m.sql);
      if ((kind === 'drop' && !input.allowDrop) || (kind === 'rename' && !input.allowRename))
        throw new SpaceDbError(
          'db_migration_destructive',
          `migration ${m.name} ${kind === 'drop' ? 'drops' : 'renames'} something: pass ${kind === 'drop' ? 'allowDrop' : 'allowRename'}: true to apply it`,
          `/migrations/${i}/sql`,
        );
      checkedSql(m.sql, `migration ${m.name}`);
      try {
        db.exec(m.sql);
      } catch (err) {
        throw new SpaceDbError(
          'db_migration_failed',
          `migration ${m.name} failed: ${(err as Error).message}`,
          `/migrations/${i}/sql`,
        );
      }
      record.run(m.name, sha256, input.now);
      known.set(m.name, sha256);
      result.applied.push({ name: m.name, sha256 });
    });
    if (input.dryRun) throw rollback;
  });
  try {
    sdb.guarded(() => run());
  } catch (err) {
    if (err !== rollback) throw err;
  }
  return result;
}

/** Rows a console statement shows (the rest is counted as cut off). */
export const CONSOLE_MAX_ROWS = 1000;
export interface ConsoleResult {
  columns: string[];
  rows: ExportValue[][];
  truncated: boolean;
  changes: number;
  lastRowId: number;
  duration: number;
}

/** One statement of the console: a query's columns and first rows, or what a write changed. */
export function consoleStatement(sdb: SpaceDatabase, sql: string): ConsoleResult {
  const started = performance.now();
  if (!sql.trim()) throw new SpaceDbError('db_query_failed', 'empty SQL');
  checkedSql(sql, 'the statement');
  return sdb.guarded(() => {
    const stmt = sdb.db.prepare(sql);
    const out: ConsoleResult = {
      columns: [],
      rows: [],
      truncated: false,
      changes: 0,
      lastRowId: 0,
      duration: 0,
    };
    if (stmt.reader) {
      out.columns = stmt.columns().map((c) => c.name);
      for (const row of stmt.raw(true).safeIntegers(true).iterate() as Iterable<unknown[]>) {
        if (out.rows.length >= CONSOLE_MAX_ROWS) {
          out.truncated = true;
          break;
        }
        out.rows.push(row.map(exportValue));
      }
    } else {
      const info = stmt.run();
      out.changes = info.changes;
      out.lastRowId = Number(info.lastInsertRowid);
    }
    out.duration = Math.round((performance.now() - started) * 1000) / 1000;
    return out;
  });
}
