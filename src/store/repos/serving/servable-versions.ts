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

  /**
   * The version with its files when it is ready; null when it does not exist or is not ready. One
   * round trip for a version of its own files (the version row joined with them); a layered version
   * (`base_id`) reads its files with the base's in a second query.
   */
  async readyById(versionId: string): Promise<ServableVersionRow | null> {
    const rows = await this.ctx.exec
      .selectFrom('versions as v')
      .leftJoin('version_files as f', (j) => j.onRef('f.version_id', '=', 'v.id').on('f.removed', '=', 0))
      .select([
        'v.id',
        'v.space_id',
        'v.status',
        'v.base_id',
        'v.rules',
        'v.config',
        'v.created_at',
        'v.finalized_at',
        'f.path',
        'f.sha256',
        'f.size',
        'f.content_type',
        'f.encodings',
      ])
      .where('v.id', '=', versionId)
      .execute();
    const v = rows[0];
    if (v?.status !== 'ready') return null;
    const files = v.base_id
      ? await versionFilesQuery(this.ctx.exec, { id: v.id, base_id: v.base_id }).execute()
      : rows.filter((r) => r.path !== null);
    return {
      id: v.id,
      spaceId: v.space_id,
      servedSince: v.finalized_at ?? v.created_at,
      rules: v.rules,
      config: v.config,
      files: files.map((r) => ({
        path: r.path as string,
        sha256: r.sha256 as string,
        size: Number(r.size),
        contentType: r.content_type,
        encodings: r.encodings,
      })),
    };
  }
}
