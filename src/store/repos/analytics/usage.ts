import type { RepoContext } from '../index.ts';

const n = (v: number | string | null | undefined) => Number(v ?? 0);

/** The counts usage reports that are not traffic: spaces, members, stored bytes, publishes. */
export class UsageRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Ids of a team's spaces that are not deleted. */
  async teamSpaceIds(teamId: string): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('spaces')
      .select('id')
      .where('team_id', '=', teamId)
      .where('deleted_at', 'is', null)
      .execute();
    return rows.map((r) => r.id);
  }

  async memberCount(teamId: string): Promise<number> {
    const r = await this.ctx.exec
      .selectFrom('team_members')
      .select((eb) => eb.fn.countAll<number | string>().as('c'))
      .where('team_id', '=', teamId)
      .executeTakeFirst();
    return n(r?.c);
  }

  /** Bytes of the distinct blobs the spaces' versions (not deleted) reference. */
  async storageBytes(spaceIds: readonly string[]): Promise<number> {
    if (spaceIds.length === 0) return 0;
    const r = await this.ctx.exec
      .selectFrom('blobs')
      .select((eb) => eb.fn.sum<number | string>('blobs.size').as('s'))
      .where('blobs.sha256', 'in', (eb) =>
        eb
          .selectFrom('version_files')
          .innerJoin('versions', 'versions.id', 'version_files.version_id')
          .select('version_files.sha256')
          .where('versions.space_id', 'in', spaceIds)
          .where('versions.deleted_at', 'is', null),
      )
      .executeTakeFirst();
    return n(r?.s);
  }

  /** Versions created in the spaces since `since` (ISO). */
  async publishesSince(spaceIds: readonly string[], since: string): Promise<number> {
    if (spaceIds.length === 0) return 0;
    const r = await this.ctx.exec
      .selectFrom('versions')
      .select((eb) => eb.fn.countAll<number | string>().as('c'))
      .where('space_id', 'in', spaceIds)
      .where('created_at', '>=', since)
      .executeTakeFirst();
    return n(r?.c);
  }
}
