import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type OperationRow = DB['operations'];

const PENDING = ['queued', 'running'];

/** Long-running operations of spaces (rename, delete, restore), newest first by id. */
export class OperationRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(op: OperationRow): Promise<void> {
    await this.ctx.exec.insertInto('operations').values(op).execute();
  }

  /** An operation of the tenant, or null (another tenant's id is not found). */
  async byId(tenantId: string, id: string): Promise<OperationRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('operations')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst()) ?? null
    );
  }

  /** A space's operations, newest first, `n` after the id `after`. */
  listForSpace(spaceId: string, after: string | null, n: number): Promise<OperationRow[]> {
    let q = this.ctx.exec.selectFrom('operations').selectAll().where('space_id', '=', spaceId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /** Queued or running operations of these spaces, newest first. */
  pendingForSpaces(spaceIds: readonly string[]): Promise<OperationRow[]> {
    if (spaceIds.length === 0) return Promise.resolve([]);
    return this.ctx.exec
      .selectFrom('operations')
      .selectAll()
      .where('space_id', 'in', spaceIds)
      .where('status', 'in', PENDING)
      .orderBy('id', 'desc')
      .execute();
  }

  /** Cancels a space's pending delete (it was restored). */
  async cancelPendingDeletes(spaceId: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('operations')
      .set({ status: 'canceled', finished_at: at, updated_at: at })
      .where('space_id', '=', spaceId)
      .where('kind', '=', 'delete')
      .where('status', 'in', PENDING)
      .execute();
  }

  /** Completes a space's pending delete (it was purged). */
  async succeedPendingDeletes(spaceId: string, at: string, progress: string): Promise<void> {
    await this.ctx.exec
      .updateTable('operations')
      .set({ status: 'succeeded', finished_at: at, updated_at: at, progress })
      .where('space_id', '=', spaceId)
      .where('kind', '=', 'delete')
      .where('status', 'in', PENDING)
      .execute();
  }
}
