import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { refusedSql } from './guard.ts';

/** Largest database file of one space (SQLite `max_page_count` with 4 KiB pages). */
export const MAX_SPACE_DB_BYTES = 1024 * 1024 * 1024;
/** Most rows one statement may return to a handler. */
export const MAX_ROWS_PER_STATEMENT = 100_000;
/** Most statements in one `batch`. */
export const MAX_BATCH_STATEMENTS = 1000;
const MAX_OPEN = 64;

/** A mistake in the caller's SQL or parameters (the message is SQLite's or the guard's). */
export class SpaceDbError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** Where in the caller's input the problem is (a JSON pointer), when one place is to blame. */
    readonly pointer?: string,
  ) {
    super(message);
  }
}

export type SqlValue = string | number | null | { $blob: string };
export interface StatementCall {
  sql: string;
  params: SqlValue[];
}
export interface QueryMeta {
  duration: number;
  changes: number;
  last_row_id: number;
  changed_db: boolean;
  size_after: number;
  rows_read: number;
  rows_written: number;
}
export interface QueryResult {
  success: true;
  results: Record<string, unknown>[];
  meta: QueryMeta;
}

type Row = Record<string, unknown>;

function toParam(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'number') return v;
  if (typeof v === 'object' && v && typeof (v as { $blob?: unknown }).$blob === 'string')
    return Buffer.from((v as { $blob: string }).$blob, 'base64');
  throw new SpaceDbError('db_bad_parameter', `a parameter of type ${typeof v} cannot be bound`);
}

/** Result values as JSON: a BLOB becomes an array of byte values (as D1 answers). */
function jsonValue(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return Array.from(v);
  if (typeof v === 'bigint') return Number(v);
  return v;
}
function jsonRow(row: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[k] = jsonValue(v);
  return out;
}

/**
 * One space's SQLite database (issue 26): `<dataDir>/space-db/<spaceId>.sqlite`, WAL, owned by the
 * space (rows outlive publishes and rollbacks). Handlers reach it only through this class, which
 * refuses SQL that would reach another file or leave a transaction open (./guard.ts), caps the file
 * size and the rows a statement returns, and runs `batch` as one transaction.
 */
export class SpaceDatabase {
  private constructor(
    readonly file: string,
    readonly db: Database.Database,
  ) {}

  static open(file: string): SpaceDatabase {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const db = new Database(file);
    db.unsafeMode(false);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('trusted_schema = OFF');
    db.pragma(
      `max_page_count = ${Math.floor(MAX_SPACE_DB_BYTES / (db.pragma('page_size', { simple: true }) as number))}`,
    );
    return new SpaceDatabase(file, db);
  }

  close(): void {
    this.db.close();
  }

  /** Bytes the database occupies (pages × page size). */
  size(): number {
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    return pages * pageSize;
  }

  /** Runs `fn` on the handle, turning SQLite's errors into {@link SpaceDbError}s. */
  guarded<T>(fn: () => T): T {
    return this.wrap(fn);
  }

  private wrap<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof SpaceDbError) throw err;
      const code = (err as { code?: string }).code;
      if (code === 'SQLITE_FULL') throw new SpaceDbError('db_full', 'the database is full (1 GiB)');
      if (err instanceof Database.SqliteError || err instanceof RangeError || err instanceof TypeError)
        throw new SpaceDbError('db_query_failed', (err as Error).message);
      throw err;
    }
  }

  private prepare(sql: string): Database.Statement {
    if (typeof sql !== 'string' || !sql.trim()) throw new SpaceDbError('db_query_failed', 'empty SQL');
    const refused = refusedSql(sql);
    if (refused) throw new SpaceDbError('db_statement_refused', refused);
    return this.wrap(() => this.db.prepare(sql));
  }

  private execute(call: StatementCall): { rows: Row[]; changes: number; lastRowId: number; reader: boolean } {
    const stmt = this.prepare(call.sql);
    const params = (call.params ?? []).map(toParam);
    return this.wrap(() => {
      if (stmt.reader) {
        const rows: Row[] = [];
        for (const row of stmt.iterate(...params) as Iterable<Row>) {
          if (rows.length >= MAX_ROWS_PER_STATEMENT)
            throw new SpaceDbError(
              'db_too_many_rows',
              `a statement may return at most ${MAX_ROWS_PER_STATEMENT} rows`,
            );
          rows.push(jsonRow(row));
        }
        // A reader that writes (`INSERT … RETURNING`) reports its changes through total_changes.
        return { rows, changes: 0, lastRowId: 0, reader: true };
      }
      const info = stmt.run(...params);
      return { rows: [], changes: info.changes, lastRowId: Number(info.lastInsertRowid), reader: false };
    });
  }

  private meta(started: number, changes: number, lastRowId: number, rowsRead: number): QueryMeta {
    return {
      duration: Math.round((performance.now() - started) * 1000) / 1000,
      changes,
      last_row_id: lastRowId,
      changed_db: changes > 0,
      size_after: this.size(),
      rows_read: rowsRead,
      rows_written: changes,
    };
  }

  private query(call: StatementCall): QueryResult {
    const started = performance.now();
    const before = this.db.prepare('SELECT total_changes() AS n').get() as { n: number };
    const r = this.execute(call);
    const after = this.db.prepare('SELECT total_changes() AS n').get() as { n: number };
    const changes = r.reader ? after.n - before.n : r.changes;
    const lastRowId = r.reader
      ? changes > 0
        ? Number((this.db.prepare('SELECT last_insert_rowid() AS id').get() as { id: number }).id)
        : 0
      : r.lastRowId;
    return { success: true, results: r.rows, meta: this.meta(started, changes, lastRowId, r.rows.length) };
  }

  /** `stmt.all()`: rows and meta. */
  all(call: StatementCall): QueryResult {
    return this.query(call);
  }

  /** `stmt.run()`: the same shape as `all()` (D1 answers both alike). */
  run(call: StatementCall): QueryResult {
    return this.query(call);
  }

  /** `stmt.first(column?)`: the first row, or its column's value; null when there is none. */
  first(call: StatementCall, column: string | null): unknown {
    const { results } = this.query(call);
    const row = results[0];
    if (!row) return null;
    if (column === null) return row;
    if (!(column in row)) throw new SpaceDbError('db_query_failed', `D1_COLUMN_NOTFOUND: column ${column}`);
    return row[column];
  }

  /** `stmt.raw()`: rows as arrays; with `columnNames`, the names first. */
  raw(call: StatementCall, columnNames: boolean): unknown[][] {
    const stmt = this.prepare(call.sql);
    const params = (call.params ?? []).map(toParam);
    return this.wrap(() => {
      if (!stmt.reader) {
        stmt.run(...params);
        return columnNames ? [[]] : [];
      }
      const out: unknown[][] = columnNames ? [stmt.columns().map((c) => c.name)] : [];
      for (const row of stmt.raw(true).iterate(...params) as Iterable<unknown[]>) {
        if (out.length >= MAX_ROWS_PER_STATEMENT)
          throw new SpaceDbError(
            'db_too_many_rows',
            `a statement may return at most ${MAX_ROWS_PER_STATEMENT} rows`,
          );
        out.push(row.map(jsonValue));
      }
      return out;
    });
  }

  /** `DB.exec(sql)`: one or more statements, no parameters; `{count, duration}`. */
  exec(sql: string): { count: number; duration: number } {
    if (typeof sql !== 'string' || !sql.trim()) throw new SpaceDbError('db_query_failed', 'empty SQL');
    const refused = refusedSql(sql);
    if (refused) throw new SpaceDbError('db_statement_refused', refused);
    const started = performance.now();
    const count = sql.split(';').filter((s) => s.trim()).length;
    this.wrap(() => this.db.exec(sql));
    return { count, duration: Math.round((performance.now() - started) * 1000) / 1000 };
  }

  /** `DB.batch([…])`: every statement in one transaction; any failure rolls all of them back. */
  batch(calls: StatementCall[]): QueryResult[] {
    if (!Array.isArray(calls))
      throw new SpaceDbError('db_query_failed', 'batch needs an array of statements');
    if (calls.length > MAX_BATCH_STATEMENTS)
      throw new SpaceDbError(
        'db_batch_too_large',
        `a batch holds at most ${MAX_BATCH_STATEMENTS} statements`,
      );
    for (const c of calls) {
      const refused = refusedSql(c.sql);
      if (refused) throw new SpaceDbError('db_statement_refused', refused);
    }
    const tx = this.db.transaction(() => calls.map((c) => this.query(c)));
    return this.wrap(() => tx());
  }
}

/** The open space databases of this server, by space (a small LRU of handles). */
export class SpaceDatabases {
  private readonly open = new Map<string, SpaceDatabase>();

  constructor(readonly dir: string) {}

  fileOf(spaceId: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(spaceId)) throw new Error(`bad space id for a database: ${spaceId}`);
    return path.join(this.dir, `${spaceId}.sqlite`);
  }

  get(spaceId: string): SpaceDatabase {
    let db = this.open.get(spaceId);
    if (db) {
      this.open.delete(spaceId);
      this.open.set(spaceId, db);
      return db;
    }
    if (this.open.size >= MAX_OPEN) {
      const [oldest, handle] = this.open.entries().next().value as [string, SpaceDatabase];
      handle.close();
      this.open.delete(oldest);
    }
    db = SpaceDatabase.open(this.fileOf(spaceId));
    this.open.set(spaceId, db);
    return db;
  }

  /** Closes one space's handle (its file is about to be replaced, or another instance owns it now). */
  closeOne(spaceId: string): void {
    const db = this.open.get(spaceId);
    if (!db) return;
    db.close();
    this.open.delete(spaceId);
  }

  /** Closes a space's handle and deletes its file (with its WAL, shared memory and generation). */
  remove(spaceId: string): void {
    this.closeOne(spaceId);
    const file = this.fileOf(spaceId);
    for (const suffix of ['', '-wal', '-shm', '.generation']) fs.rmSync(`${file}${suffix}`, { force: true });
  }

  /** The snapshot generation this disk's copy matches (0: none recorded); see domain/database/owners.ts. */
  readGeneration(spaceId: string): number {
    try {
      const n = Number(fs.readFileSync(`${this.fileOf(spaceId)}.generation`, 'utf8'));
      return Number.isSafeInteger(n) && n >= 0 ? n : 0;
    } catch {
      return 0;
    }
  }

  writeGeneration(spaceId: string, generation: number): void {
    const file = `${this.fileOf(spaceId)}.generation`;
    fs.writeFileSync(`${file}.tmp`, String(generation), { mode: 0o600 });
    fs.renameSync(`${file}.tmp`, file);
  }

  /** The database exists on disk (it is made on first use). */
  exists(spaceId: string): boolean {
    return fs.existsSync(this.fileOf(spaceId));
  }

  closeAll(): void {
    for (const db of this.open.values()) db.close();
    this.open.clear();
  }
}
