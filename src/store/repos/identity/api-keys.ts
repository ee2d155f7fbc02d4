import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type ApiKeyRow = Selectable<DB['api_keys']>;

/** API keys (`sfa_` tokens) of a person for one team, stored by the hash of their token. */
export class ApiKeyRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Stores a key (built by the accounts domain, token already hashed); usable in `store.transaction`. */
  async create(key: ApiKeyRow): Promise<ApiKeyRow> {
    await this.ctx.exec.insertInto('api_keys').values(key).execute();
    return key;
  }

  /** The key with this token hash, whatever its state (the caller checks expiry and revocation). */
  async byTokenHash(hash: string): Promise<ApiKeyRow | null> {
    const row = await this.ctx.exec
      .selectFrom('api_keys')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    return row ?? null;
  }

  /** A key of this person in this tenant; null for anyone else's. */
  async byIdForUser(id: string, userId: string, tenantId: string): Promise<ApiKeyRow | null> {
    const row = await this.ctx.exec
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return row ?? null;
  }

  /** A person's keys in a tenant (within `teamIds` when given), newest first, after the cursor id. */
  listForUser(q: {
    userId: string;
    tenantId: string;
    teamIds: readonly string[] | null;
    after: string | null;
    limit: number;
  }): Promise<ApiKeyRow[]> {
    let sel = this.ctx.exec
      .selectFrom('api_keys')
      .selectAll()
      .where('user_id', '=', q.userId)
      .where('tenant_id', '=', q.tenantId);
    if (q.teamIds) sel = sel.where('team_id', 'in', q.teamIds.length ? (q.teamIds as string[]) : ['']);
    if (q.after) sel = sel.where('id', '<', q.after);
    return sel.orderBy('id', 'desc').limit(q.limit).execute();
  }

  async revoke(id: string, now: string): Promise<void> {
    await this.ctx.exec.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).execute();
  }

  async touch(id: string, now: string): Promise<void> {
    await this.ctx.exec.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', id).execute();
  }
}
