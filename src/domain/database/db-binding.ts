import { BindingError, type BindingHandler } from '../../runtime/bindings.ts';
import { type SpaceDatabases, SpaceDbError, type StatementCall } from '../../store/space-db/space-db.ts';

function statement(body: unknown): StatementCall {
  const b = (body ?? {}) as { sql?: unknown; params?: unknown };
  if (typeof b.sql !== 'string') throw new BindingError('db_query_failed', 'sql must be a string');
  if (b.params !== undefined && !Array.isArray(b.params))
    throw new BindingError('db_query_failed', 'params must be an array');
  return { sql: b.sql, params: (b.params ?? []) as StatementCall['params'] };
}

/**
 * The `db` binding (`env.DB`): the calling process's space (from its token, never from the call)
 * picks the database, so a handler reaches only its own space's rows.
 */
export function dbBindingHandler(databases: SpaceDatabases): BindingHandler {
  return (caller, op, body) => {
    const db = databases.get(caller.spaceId);
    const b = (body ?? {}) as Record<string, unknown>;
    try {
      switch (op) {
        case 'all':
          return db.all(statement(body));
        case 'run':
          return db.run(statement(body));
        case 'first':
          return db.first(statement(body), typeof b.column === 'string' ? b.column : null);
        case 'raw':
          return db.raw(statement(body), b.columnNames === true);
        case 'exec':
          if (typeof b.sql !== 'string') throw new BindingError('db_query_failed', 'sql must be a string');
          return db.exec(b.sql);
        case 'batch':
          if (!Array.isArray(b.statements))
            throw new BindingError('db_query_failed', 'statements must be an array');
          return db.batch(b.statements.map(statement));
        default:
          throw new BindingError('binding_not_found', `no db operation ${op}`, 404);
      }
    } catch (err) {
      if (err instanceof SpaceDbError) throw new BindingError(err.code, err.message);
      throw err;
    }
  };
}
