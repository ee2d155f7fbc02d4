import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type TagReleaseRow = DB['tag_releases'];

/** Per-environment release pointers of a team's tag graph (one per team and environment). */
export class TagReleaseRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Points the environment's release at a version (creating the pointer or moving it). */
  async point(
    teamId: string,
    environment: string,
    versionId: string,
    at: string,
    by: string | null,
  ): Promise<void> {
    await this.ctx.exec
      .insertInto('tag_releases')
      .values({ team_id: teamId, environment, version_id: versionId, updated_at: at, updated_by: by })
      .onConflict((oc) =>
        oc
          .columns(['team_id', 'environment'])
          .doUpdateSet({ version_id: versionId, updated_at: at, updated_by: by }),
      )
      .execute();
  }

  async byEnvironment(teamId: string, environment: string): Promise<TagReleaseRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('tag_releases')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('environment', '=', environment)
        .executeTakeFirst()) ?? null
    );
  }

  /** The team's release pointers (any order). */
  listForTeam(teamId: string): Promise<TagReleaseRow[]> {
    return this.ctx.exec.selectFrom('tag_releases').selectAll().where('team_id', '=', teamId).execute();
  }

  /** The graph JSON the environment's release points at (a version of the same team), or null. */
  async releasedGraph(teamId: string, environment: string): Promise<string | null> {
    const row = await this.ctx.exec
      .selectFrom('tag_releases')
      .innerJoin('tag_versions', 'tag_versions.id', 'tag_releases.version_id')
      .select('tag_versions.graph')
      .where('tag_releases.team_id', '=', teamId)
      .where('tag_versions.team_id', '=', teamId)
      .where('tag_releases.environment', '=', environment)
      .executeTakeFirst();
    return row?.graph ?? null;
  }
}
