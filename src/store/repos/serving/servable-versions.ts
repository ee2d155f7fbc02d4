import { versionFilesQuery } from '../../version-files.ts';
import type { RepoContext } from '../index.ts';

/** One file of a servable version, as stored. */
export interface ServableFileRow {
  path: string;
  sha256: string;
  size: number;
  contentType: string | null;
  /** JSON of the precompressed variants, or null. */
  encodings: string | null;
}

/** A ready version with everything the edge keeps of it in memory. */
export interface ServableVersionRow {
  id: string;
  spaceId: string;
  /** When it was finalized (its creation time if it never was). */
  servedSince: string;
  /** CompiledRules as JSON, or null. */
  rules: string | null;
  /** The version's own settings file as JSON, or null. */
  config: string | null;
  /** Every file, a layered version's inherited ones included (any order). */
  files: ServableFileRow[];
}

/** The serving read model of versions: what the edge loads once per version (versions are immutable). */
export class ServableVersionRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** The version with its files when it is ready; null when it does not exist or is not ready. */
  async readyById(versionId: string): Promise<ServableVersionRow | null> {
    const v = await this.ctx.exec
      .selectFrom('versions')
      .select(['id', 'space_id', 'status', 'base_id', 'rules', 'config', 'created_at', 'finalized_at'])
      .where('id', '=', versionId)
      .executeTakeFirst();
    if (v?.status !== 'ready') return null;
    const rows = await versionFilesQuery(this.ctx.exec, v).execute();
    return {
      id: v.id,
      spaceId: v.space_id,
      servedSince: v.finalized_at ?? v.created_at,
      rules: v.rules,
      config: v.config,
      files: rows.map((r) => ({
        path: r.path,
        sha256: r.sha256,
        size: Number(r.size),
        contentType: r.content_type,
        encodings: r.encodings,
      })),
    };
  }
}
