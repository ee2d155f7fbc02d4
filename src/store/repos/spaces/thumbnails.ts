import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type SpaceThumbnailRow = DB['space_thumbnails'];

/** The picture of each space's live front page (one row per space; see the thumbnails job). */
export class SpaceThumbnailRepository {
  constructor(private readonly ctx: RepoContext) {}

  async get(spaceId: string): Promise<SpaceThumbnailRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_thumbnails')
        .selectAll()
        .where('space_id', '=', spaceId)
        .executeTakeFirst()) ?? null
    );
  }

  /** The rows of these spaces that hold a picture. */
  async withImage(spaceIds: string[]): Promise<SpaceThumbnailRow[]> {
    if (!spaceIds.length) return [];
    return this.ctx.exec
      .selectFrom('space_thumbnails')
      .selectAll()
      .where('space_id', 'in', spaceIds)
      .where('sha256', 'is not', null)
      .execute();
  }

  /** Inserts or replaces the space's row. */
  async put(row: SpaceThumbnailRow): Promise<void> {
    const { space_id: _, ...rest } = row;
    await this.ctx.exec
      .insertInto('space_thumbnails')
      .values(row)
      .onConflict((oc) => oc.column('space_id').doUpdateSet(rest))
      .execute();
  }

  /** Of these digests, the ones a thumbnail names (the blob sweep keeps them). */
  async named(digests: string[]): Promise<Set<string>> {
    if (!digests.length) return new Set();
    const rows = await this.ctx.exec
      .selectFrom('space_thumbnails')
      .select('sha256')
      .where('sha256', 'in', digests)
      .execute();
    return new Set(rows.map((r) => r.sha256!));
  }

  /** Every digest a thumbnail names. */
  async allNamed(): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('space_thumbnails')
      .select('sha256')
      .where('sha256', 'is not', null)
      .execute();
    return rows.map((r) => r.sha256!);
  }
}
