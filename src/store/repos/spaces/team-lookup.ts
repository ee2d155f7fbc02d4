import type { RepoContext } from '../index.ts';

/**
 * The team reads the spaces area needs (memberships, slugs, defaults). A narrow read model kept in
 * this group until it folds into the identity group's team repositories.
 */
export class SpaceTeamLookupRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Teams the user is a member of; with `within`, only those among them (an empty list gives none). */
  async memberTeamIds(userId: string, within?: readonly string[]): Promise<string[]> {
    let q = this.ctx.exec.selectFrom('team_members').select('team_id').where('user_id', '=', userId);
    if (within) q = q.where('team_id', 'in', within.length ? within : ['']);
    return (await q.execute()).map((r) => r.team_id);
  }

  /** Whether the user is (still) a member of the team. */
  async isMember(teamId: string, userId: string): Promise<boolean> {
    return !!(await this.ctx.exec
      .selectFrom('team_members')
      .select('role')
      .where('team_id', '=', teamId)
      .where('user_id', '=', userId)
      .executeTakeFirst());
  }

  /** Slugs of these teams (missing ids are left out). */
  async slugsByIds(teamIds: readonly string[]): Promise<Map<string, string>> {
    if (teamIds.length === 0) return new Map();
    const rows = await this.ctx.exec
      .selectFrom('teams')
      .select(['id', 'slug'])
      .where('id', 'in', teamIds)
      .execute();
    return new Map(rows.map((t) => [t.id, t.slug]));
  }

  /** What a new space of the team starts with; throws when the team does not exist. */
  spaceDefaults(teamId: string): Promise<{ default_space_access: string; default_data_location: string }> {
    return this.ctx.exec
      .selectFrom('teams')
      .select(['default_space_access', 'default_data_location'])
      .where('id', '=', teamId)
      .executeTakeFirstOrThrow();
  }
}
