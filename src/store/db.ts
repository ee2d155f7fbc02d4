import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type pg from 'pg';
import { migrations } from './migrations/index.ts';
import type { DB } from './schema.ts';
import { withStatementCache } from './sqlite-statements.ts';

/** The `pg` driver, loaded when a PostgreSQL database is opened (a SQLite server never needs it). */
async function loadPg(): Promise<typeof pg> {
  const driver = (await import('pg')).default;
  // int8 (bigint, COUNT) as a JS number: our sizes and counts stay far below 2^53.
  driver.types.setTypeParser(20, (v) => Number(v));
  return driver;
}

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /** PostgreSQL schema holding the tables, when not the default. */
  schema?: string;
  /**
   * SQLite only: the connection Kysely runs on, for bulk writes as prepared statements (see
   * store/version-files.ts). Use it only inside a Kysely transaction on `db`, which holds it.
   */
  sqlite?: SQLite.Database;
  /**
   * PostgreSQL only: a new connection of its own, outside the pool (for `LISTEN`, which holds its
   * connection for as long as it listens). The caller connects and ends it.
   */
  dedicatedClient?: () => pg.Client;
  /** Throws when the database can't answer (used by /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** PostgreSQL only: put every table in this schema (tests use one schema per run). */
  schema?: string;
  /** Pool size for PostgreSQL. */
  poolSize?: number;
}

export async function openDatabase(url: string, options: DatabaseOptions = {}): Promise<Database> {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  throw new Error(`unsupported database URL: ${url}`);
}

/** Page size of databases this process creates (SQLite's default is 4096). */
export const SQLITE_PAGE_SIZE = 16384;

function openSqlite(file: string): Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  // A new database gets 16 KiB pages (an existing one keeps its own: in WAL mode only a rebuild
  // changes it). Small blobs live in the database (blob_data): with 4 KiB pages a 2 KiB blob takes
  // a page of its own and a publish's writer thread wrote and synced nearly twice the bytes; with
  // 16 KiB pages it spent ~40 % less CPU on the same 30,000 blobs (and the WAL checkpoints less often).
  sqlite.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
  // A new database can give pages back to the file system: the blob sweep frees the pages of deleted
  // small blobs with `incremental_vacuum` (see `releaseFreePages`). Like the page size, this takes
  // effect only before the first table exists; docs/guides/self-hosting.md says how to convert.
  sqlite.pragma('auto_vacuum = INCREMENTAL');
  sqlite.pragma('journal_mode = WAL');
  // FULL: a finalized version is acknowledged only once it is on disk, even across power loss.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return {
    db,
    dialect: 'sqlite',
    sqlite,
    ping: async () => {
      sqlite.prepare('select 1').get();
    },
    close: () => db.destroy(),
  };
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const pg = await loadPg();
  if (options.schema) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.schema)) throw new Error(`bad schema name ${options.schema}`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query(`create schema if not exists ${options.schema}`);
    } finally {
      await c.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // Fail instead of waiting forever when the server has no connection to give.
    connectionTimeoutMillis: 15_000,
    idleTimeoutMillis: 10_000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    schema: options.schema,
    dedicatedClient: () =>
      new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: 15_000,
        ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
      }),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/** Runs every pending migration; safe to run twice and from several processes (the migrator locks). */
export async function migrate(database: Database): Promise<void> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
    // Kysely looks for its bookkeeping tables across all schemas unless told which one is ours.
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/** True when an insert failed on a unique constraint, on either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/**
 * Gives a SQLite database's free pages back to the file system (`PRAGMA incremental_vacuum`), in
 * steps of `pagesPerStep` with the event loop free in between: each step holds the write lock and
 * blocks this thread while it moves pages. `exclusive` runs a step where no other writer of this
 * process is mid-transaction (the caller's connection lock). Does nothing on a database without
 * `auto_vacuum = INCREMENTAL` (created before it was set). Returns the pages released.
 */
export async function releaseFreePages(
  sqlite: SQLite.Database,
  exclusive: (step: () => void) => Promise<void> = async (step) => step(),
  pagesPerStep = 1024,
): Promise<number> {
  if (sqlite.pragma('auto_vacuum', { simple: true }) !== 2) return 0;
  const free = () => Number(sqlite.pragma('freelist_count', { simple: true }));
  let released = 0;
  for (;;) {
    const before = free();
    if (before === 0) return released;
    await exclusive(() => sqlite.pragma(`incremental_vacuum(${Math.min(before, pagesPerStep)})`));
    const after = free();
    if (after >= before) return released;
    released += before - after;
    await new Promise((r) => setImmediate(r));
  }
}
