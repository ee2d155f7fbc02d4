import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type VersionRuntimeRow = DB['version_runtimes'];

/** The functions runtime of each version that has one (see finalize; one row per version). */
export class VersionRuntimeRepository {
  constructor(private readonly ctx: RepoContext) {}

  async put(row: VersionRuntimeRow): Promise<void> {
    const { version_id: _, ...rest } = row;
    await this.ctx.exec
      .insertInto('version_runtimes')
      .values(row)
      .onConflict((oc) => oc.column('version_id').doUpdateSet(rest))
      .execute();
  }

  /** The version's runtime, scoped to its space (null: none, or another space's version). */
  async get(spaceId: string, versionId: string): Promise<VersionRuntimeRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('version_runtimes')
        .selectAll()
        .where('version_id', '=', versionId)
        .where('space_id', '=', spaceId)
        .executeTakeFirst()) ?? null
    );
  }

  /** Whether any version of the space runs code (its database is available then, rollbacks or not). */
  async anyInSpace(spaceId: string): Promise<boolean> {
    const r = await this.ctx.exec
      .selectFrom('version_runtimes')
      .select('version_id')
      .where('space_id', '=', spaceId)
      .limit(1)
      .executeTakeFirst();
    return r !== undefined;
  }

  /** Every bundle digest a version that still exists names (the blob sweep keeps them). */
  async allBundles(): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('version_runtimes')
      .innerJoin('versions', 'versions.id', 'version_runtimes.version_id')
      .select('version_runtimes.bundle_sha256')
      .execute();
    return rows.map((r) => r.bundle_sha256);
  }
}
