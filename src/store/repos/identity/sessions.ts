import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type SessionRow = Selectable<DB['sessions']>;

/** A session with the tenant of its person, as credential resolution needs it. */
export type SessionWithUser = SessionRow & { tenant_id: string };

/** Sign-in sessions (`sfs_` tokens), stored by the hash of their token. */
export class SessionRepository {
  constructor(private readonly ctx: RepoContext) {}

  async create(row: SessionRow): Promise<void> {
    await this.ctx.exec.insertInto('sessions').values(row).execute();
  }

  /**
   * The session with this token hash and its person's tenant, whatever its state: the caller compares
   * the digest and checks expiry and revocation.
   */
  async byTokenHash(hash: string): Promise<SessionWithUser | null> {
    const row = await this.ctx.exec
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('sessions')
      .select('users.tenant_id as tenant_id')
      .where('sessions.token_hash', '=', hash)
      .executeTakeFirst();
    return row ?? null;
  }

  async revoke(id: string, now: string): Promise<void> {
    await this.ctx.exec.updateTable('sessions').set({ revoked_at: now }).where('id', '=', id).execute();
  }

  /** Revokes every live session of a person (a password reset). */
  async revokeAllForUser(userId: string, now: string): Promise<void> {
    await this.ctx.exec
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async touch(id: string, now: string): Promise<void> {
    await this.ctx.exec.updateTable('sessions').set({ last_used_at: now }).where('id', '=', id).execute();
  }
}
