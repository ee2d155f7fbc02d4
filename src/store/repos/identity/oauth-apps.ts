import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type OAuthAppRow = Selectable<DB['oauth_apps']>;

/** OAuth clients registered by a team (the built-in CLI client has no row). */
export class OAuthAppRepository {
  constructor(private readonly ctx: RepoContext) {}

  async create(row: OAuthAppRow): Promise<void> {
    await this.ctx.exec.insertInto('oauth_apps').values(row).execute();
  }

  /** Any app by its client id: the OAuth endpoints know the client, not the team. */
  async byId(id: string): Promise<OAuthAppRow | null> {
    const row = await this.ctx.exec
      .selectFrom('oauth_apps')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ?? null;
  }

  async byIdInTeam(id: string, teamId: string): Promise<OAuthAppRow | null> {
    const row = await this.ctx.exec
      .selectFrom('oauth_apps')
      .selectAll()
      .where('id', '=', id)
      .where('team_id', '=', teamId)
      .executeTakeFirst();
    return row ?? null;
  }

  /** A team's apps, newest first, after the cursor id. */
  listForTeam(teamId: string, after: string | null, limit: number): Promise<OAuthAppRow[]> {
    let q = this.ctx.exec.selectFrom('oauth_apps').selectAll().where('team_id', '=', teamId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  async update(id: string, patch: Partial<Omit<OAuthAppRow, 'id' | 'tenant_id' | 'team_id'>>): Promise<void> {
    await this.ctx.exec.updateTable('oauth_apps').set(patch).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.ctx.exec.deleteFrom('oauth_apps').where('id', '=', id).execute();
  }
}
