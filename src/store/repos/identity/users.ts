import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type UserRow = Selectable<DB['users']>;

/** People. E-mail addresses are stored lower-cased and unique per tenant. */
export class UserRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Throws a unique violation when the e-mail address is taken in the tenant. */
  async create(row: UserRow): Promise<void> {
    await this.ctx.exec.insertInto('users').values(row).execute();
  }

  async byId(id: string): Promise<UserRow | null> {
    const row = await this.ctx.exec.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row ?? null;
  }

  /** The account of a (lower-cased) e-mail address, in any tenant: sign-in knows no tenant yet. */
  async byEmail(email: string): Promise<UserRow | null> {
    const row = await this.ctx.exec
      .selectFrom('users')
      .selectAll()
      .where('email', '=', email)
      .executeTakeFirst();
    return row ?? null;
  }

  /** True when at least one account exists. */
  async any(): Promise<boolean> {
    const row = await this.ctx.exec.selectFrom('users').select('id').limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** The oldest administrator (the server owner); null before the first start. */
  async oldestAdmin(): Promise<UserRow | null> {
    const row = await this.ctx.exec
      .selectFrom('users')
      .selectAll()
      .where('is_admin', '=', 1)
      .orderBy('created_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    return row ?? null;
  }

  async setPasswordHash(id: string, hash: string | null, now: string): Promise<void> {
    await this.ctx.exec
      .updateTable('users')
      .set({ password_hash: hash, updated_at: now })
      .where('id', '=', id)
      .execute();
  }
}
