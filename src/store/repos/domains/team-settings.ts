import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type TeamDomainSettingsRow = DB['team_domain_settings'];

/** A team's custom-domain settings (`wildcard_enabled`); a team without a row has the defaults. */
export class TeamDomainSettingsRepository {
  constructor(private readonly ctx: RepoContext) {}

  async get(teamId: string): Promise<TeamDomainSettingsRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('team_domain_settings')
        .selectAll()
        .where('team_id', '=', teamId)
        .executeTakeFirst()) ?? null
    );
  }

  async put(row: TeamDomainSettingsRow): Promise<void> {
    await this.ctx.exec
      .insertInto('team_domain_settings')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('team_id')
          .doUpdateSet({ wildcard_enabled: row.wildcard_enabled, updated_at: row.updated_at }),
      )
      .execute();
  }
}
