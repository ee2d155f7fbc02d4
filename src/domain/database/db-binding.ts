import { BindingError, type BindingHandler } from '../../runtime/bindings.ts';
import { SpaceDbError } from '../../store/space-db/space-db.ts';
import { type DbOp, HANDLER_OPS, type SpaceDbHost } from './host.ts';

const handlerOps = new Set<string>(HANDLER_OPS);

/**
 * The `db` binding (`env.DB`): the calling process's space (from its token, never from the call)
 * picks the database, so a handler reaches only its own space's rows. Only the statement operations
 * are open to handlers; inspect, export, import and migrate are the owner's, through the API.
 */
export function dbBindingHandler(host: SpaceDbHost): BindingHandler {
  return async (caller, op, body) => {
    if (!handlerOps.has(op)) throw new BindingError('binding_not_found', `no db operation ${op}`, 404);
    try {
      return await host.call(caller.spaceId, op as DbOp, body);
    } catch (err) {
      if (err instanceof SpaceDbError)
        throw new BindingError(err.code, err.message, err.code === 'db_owner_unavailable' ? 503 : 400);
      throw err;
    }
  };
}
