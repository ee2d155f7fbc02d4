import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type OAuthDeviceCodeRow = Selectable<DB['oauth_device_codes']>;

/** Device authorization requests (RFC 8628): the device code stored hashed, the user code plain. */
export class OAuthDeviceCodeRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Throws a unique violation when the user code is taken. */
  async create(row: OAuthDeviceCodeRow): Promise<void> {
    await this.ctx.exec.insertInto('oauth_device_codes').values(row).execute();
  }

  async byHash(hash: string): Promise<OAuthDeviceCodeRow | null> {
    const row = await this.ctx.exec
      .selectFrom('oauth_device_codes')
      .selectAll()
      .where('device_code_hash', '=', hash)
      .executeTakeFirst();
    return row ?? null;
  }

  /** By user code (normalized: eight letters), whatever its state. */
  async byUserCode(userCode: string): Promise<OAuthDeviceCodeRow | null> {
    const row = await this.ctx.exec
      .selectFrom('oauth_device_codes')
      .selectAll()
      .where('user_code', '=', userCode)
      .executeTakeFirst();
    return row ?? null;
  }

  /** Records a poll (and a new, longer interval when given). */
  async recordPoll(id: string, now: string, intervalSeconds?: number): Promise<void> {
    await this.ctx.exec
      .updateTable('oauth_device_codes')
      .set(
        intervalSeconds === undefined
          ? { last_polled_at: now }
          : { interval_seconds: intervalSeconds, last_polled_at: now },
      )
      .where('id', '=', id)
      .execute();
  }

  /** Moves an approved request to `consumed`; false when it was not approved (or consumed already). */
  async consume(id: string): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('oauth_device_codes')
      .set({ status: 'consumed' })
      .where('id', '=', id)
      .where('status', '=', 'approved')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Approves or denies a pending, unexpired request for a person; false when there is none. */
  async decide(
    userCode: string,
    decision: { status: 'approved' | 'denied'; userId: string; tenantId: string },
    now: string,
  ): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('oauth_device_codes')
      .set({ status: decision.status, user_id: decision.userId, tenant_id: decision.tenantId })
      .where('user_code', '=', userCode)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async deleteForClient(clientId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('oauth_device_codes').where('client_id', '=', clientId).execute();
  }

  /** Deletes requests that expired before `cutoff`. */
  async deleteExpiredBefore(cutoff: string): Promise<void> {
    await this.ctx.exec.deleteFrom('oauth_device_codes').where('expires_at', '<', cutoff).execute();
  }

  /** Deletes requests expired at `now` (frees their user codes). */
  async deleteExpiredAt(now: string): Promise<void> {
    await this.ctx.exec.deleteFrom('oauth_device_codes').where('expires_at', '<=', now).execute();
  }
}
