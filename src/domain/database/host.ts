import {
  consoleStatement,
  dump,
  exportPage,
  importExport,
  inspect,
  type Migration,
  migrate,
} from '../../store/space-db/admin.ts';
import {
  type SpaceDatabase,
  type SpaceDatabases,
  SpaceDbError,
  type StatementCall,
} from '../../store/space-db/space-db.ts';

/** What a handler may do through `env.DB` (the bindings channel accepts only these). */
export const HANDLER_OPS = ['all', 'run', 'first', 'raw', 'exec', 'batch'] as const;
/** What the owner's API does on top (inspect, dump, export, import, migrate). */
export const ADMIN_OPS = ['inspect', 'dump', 'export', 'import', 'migrate', 'console'] as const;
/** `forget` travels only between instances (a purge reaching the owner); runOp never sees it. */
export type DbOp = (typeof HANDLER_OPS)[number] | (typeof ADMIN_OPS)[number] | 'forget';
export const DB_OPS: readonly DbOp[] = [...HANDLER_OPS, ...ADMIN_OPS, 'forget'];
/** Ops that only read (no snapshot follows them). */
export const READ_OPS: ReadonlySet<DbOp> = new Set(['inspect', 'dump', 'export']);

/**
 * Where a space's database is reached (issue 26): one call shape for the handler's `env.DB` and the
 * owner's API, so that with several instances a call can go to the instance that owns the file
 * (./owners.ts) and with one instance straight to the file ({@link LocalSpaceDbHost}).
 * Errors are {@link SpaceDbError}s.
 */
export interface SpaceDbHost {
  /** `forwarded`: another instance sent the call here as the owner (it is never forwarded again). */
  call(spaceId: string, op: DbOp, args: unknown, opts?: { forwarded?: boolean }): Promise<unknown>;
  /**
   * A purged space's database goes: the local file, and with several instances the owner's copy
   * (`ownerAddress`, read before the purge removed its row).
   */
  forget(spaceId: string, ownerAddress: string | null): Promise<void>;
  /** The key forwarded calls are signed with (null: one instance, nothing is forwarded). */
  readonly forwardKey: Buffer | null;
  close(): Promise<void>;
}

function statement(body: unknown): StatementCall {
  const b = (body ?? {}) as { sql?: unknown; params?: unknown };
  if (typeof b.sql !== 'string') throw new SpaceDbError('db_query_failed', 'sql must be a string');
  if (b.params !== undefined && !Array.isArray(b.params))
    throw new SpaceDbError('db_query_failed', 'params must be an array');
  return { sql: b.sql, params: (b.params ?? []) as StatementCall['params'] };
}

/** Runs one call on an open database (the owner's side of every host). */
export function runOp(db: SpaceDatabase, op: DbOp, args: unknown, now: string): unknown {
  const b = (args ?? {}) as Record<string, unknown>;
  switch (op) {
    case 'all':
      return db.all(statement(args));
    case 'run':
      return db.run(statement(args));
    case 'first':
      return db.first(statement(args), typeof b.column === 'string' ? b.column : null);
    case 'raw':
      return db.raw(statement(args), b.columnNames === true);
    case 'exec':
      if (typeof b.sql !== 'string') throw new SpaceDbError('db_query_failed', 'sql must be a string');
      return db.exec(b.sql);
    case 'batch':
      if (!Array.isArray(b.statements))
        throw new SpaceDbError('db_query_failed', 'statements must be an array');
      return db.batch(b.statements.map(statement));
    case 'inspect':
      return inspect(db);
    case 'dump':
      return dump(db, typeof b.limit === 'number' ? b.limit : 25);
    case 'export':
      return exportPage(db, {
        table: typeof b.table === 'string' ? b.table : null,
        cursor: typeof b.cursor === 'string' ? b.cursor : null,
        now,
        ...(typeof b.maxBytes === 'number' ? { maxBytes: b.maxBytes } : {}),
      });
    case 'import':
      return importExport(db, b.document);
    case 'migrate':
      return migrate(db, {
        migrations: (Array.isArray(b.migrations) ? b.migrations : []) as Migration[],
        dryRun: b.dryRun === true,
        allowDrop: b.allowDrop === true,
        allowRename: b.allowRename === true,
        now,
      });
    case 'console':
      if (typeof b.sql !== 'string') throw new SpaceDbError('db_query_failed', 'sql must be a string');
      return consoleStatement(db, b.sql);
    default:
      throw new SpaceDbError('db_query_failed', `no database operation ${String(op)}`);
  }
}

/** One instance: every space's database is a file in this server's data dir. */
export class LocalSpaceDbHost implements SpaceDbHost {
  readonly forwardKey = null;
  constructor(
    readonly databases: SpaceDatabases,
    private readonly now: () => Date,
  ) {}

  async call(spaceId: string, op: DbOp, args: unknown): Promise<unknown> {
    return runOp(this.databases.get(spaceId), op, args, this.now().toISOString());
  }

  async forget(spaceId: string): Promise<void> {
    this.databases.remove(spaceId);
  }

  async close(): Promise<void> {
    this.databases.closeAll();
  }
}
