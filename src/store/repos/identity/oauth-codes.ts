import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type OAuthCodeRow = Selectable<DB['oauth_codes']>;

/** Authorization codes, stored by the hash of the code. */
export class OAuthCodeRepository {
  constructor(private readonly ctx: RepoContext) {}

  async create(row: OAuthCodeRow): Promise<void> {
    await this.ctx.exec.insertInto('oauth_codes').values(row).execute();
  }

  /** The code with this hash, whatever its state (the caller checks client, expiry and use). */
  async byHash(hash: string): Promise<OAuthCodeRow | null> {
    const row = await this.ctx.exec
      .selectFrom('oauth_codes')
      .selectAll()
      .where('code_hash', '=', hash)
      .executeTakeFirst();
    return row ?? null;
  }

  /** Marks an unused code used; false when it was used already (by a concurrent exchange). */
  async markUsed(id: string, now: string): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('oauth_codes')
      .set({ used_at: now })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async deleteForClient(clientId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('oauth_codes').where('client_id', '=', clientId).execute();
  }

  /** Deletes codes that expired before `cutoff`. */
  async deleteExpiredBefore(cutoff: string): Promise<void> {
    await this.ctx.exec.deleteFrom('oauth_codes').where('expires_at', '<', cutoff).execute();
  }
}
