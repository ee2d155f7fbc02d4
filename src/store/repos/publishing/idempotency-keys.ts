import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type IdempotencyKeyRow = DB['idempotency_keys'];

/**
 * Idempotency keys of one-call publishes: per (tenant, credential, key) hash, the body it came with
 * and, once done, the answer replayed to retries.
 */
export class IdempotencyKeyRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Claims a scope for a first request (throws a unique violation when it exists). */
  async insertRunning(scope: string, bodyHash: string, at: string): Promise<void> {
    await this.ctx.exec
      .insertInto('idempotency_keys')
      .values({
        scope_key: scope,
        body_hash: bodyHash,
        state: 'running',
        status_code: null,
        response: null,
        created_at: at,
      })
      .execute();
  }

  async byScope(scope: string): Promise<IdempotencyKeyRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('scope_key', '=', scope)
        .executeTakeFirst()) ?? null
    );
  }

  async complete(scope: string, status: number, response: string): Promise<void> {
    await this.ctx.exec
      .updateTable('idempotency_keys')
      .set({ state: 'done', status_code: status, response })
      .where('scope_key', '=', scope)
      .execute();
  }

  /** Removes a scope (a failed first request), or only while it is still running. */
  async delete(scope: string, onlyRunning = false): Promise<void> {
    let q = this.ctx.exec.deleteFrom('idempotency_keys').where('scope_key', '=', scope);
    if (onlyRunning) q = q.where('state', '=', 'running');
    await q.execute();
  }
}
