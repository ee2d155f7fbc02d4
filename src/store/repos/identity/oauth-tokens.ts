import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type OAuthTokenRow = Selectable<DB['oauth_tokens']>;

/**
 * Access and refresh tokens, stored by the hash of the token. Tokens of one grant (an authorization,
 * and every refresh of it) share a `grant_id`, so a leaked family can be revoked at once.
 */
export class OAuthTokenRepository {
  constructor(private readonly ctx: RepoContext) {}

  async createMany(rows: OAuthTokenRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.ctx.exec.insertInto('oauth_tokens').values(rows).execute();
  }

  /** The token with this hash (of `kind` when given), whatever its state. */
  async byHash(hash: string, kind?: 'access' | 'refresh'): Promise<OAuthTokenRow | null> {
    let q = this.ctx.exec.selectFrom('oauth_tokens').selectAll().where('token_hash', '=', hash);
    if (kind) q = q.where('kind', '=', kind);
    const row = await q.executeTakeFirst();
    return row ?? null;
  }

  /** Revokes every live token of a grant. */
  async revokeGrant(grantId: string, now: string): Promise<void> {
    await this.ctx.exec
      .updateTable('oauth_tokens')
      .set({ revoked_at: now })
      .where('grant_id', '=', grantId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Revokes every live token issued to a client. */
  async revokeForClient(clientId: string, now: string): Promise<void> {
    await this.ctx.exec
      .updateTable('oauth_tokens')
      .set({ revoked_at: now })
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async revoke(id: string, now: string): Promise<void> {
    await this.ctx.exec
      .updateTable('oauth_tokens')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Marks a live refresh token rotated; false when it was rotated or revoked already. */
  async markRotated(id: string, now: string): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('oauth_tokens')
      .set({ rotated_at: now })
      .where('id', '=', id)
      .where('rotated_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async touch(id: string, now: string): Promise<void> {
    await this.ctx.exec.updateTable('oauth_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
  }

  /** Deletes tokens that expired before `cutoff`. */
  async deleteExpiredBefore(cutoff: string): Promise<void> {
    await this.ctx.exec.deleteFrom('oauth_tokens').where('expires_at', '<', cutoff).execute();
  }
}
