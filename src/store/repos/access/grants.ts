import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type GrantRow = DB['access_grants'];
export type GrantPatch = Partial<
  Pick<
    GrantRow,
    'audience_type' | 'audience' | 'paths' | 'role' | 'target' | 'constraints' | 'max_uses' | 'note'
  >
> & { updated_at: string };

/** A space's grants. Every read is scoped to the space (another space's grant is not found). */
export class GrantRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: GrantRow): Promise<void> {
    await this.ctx.exec.insertInto('access_grants').values(row).execute();
  }

  async byId(spaceId: string, id: string): Promise<GrantRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('access_grants')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('id', '=', id)
        .executeTakeFirst()) ?? null
    );
  }

  /** The space's grants that are not revoked, oldest first (the order the matcher prefers). */
  activeForSpace(spaceId: string): Promise<GrantRow[]> {
    return this.ctx.exec
      .selectFrom('access_grants')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('revoked_at', 'is', null)
      .orderBy('id')
      .execute();
  }

  /** Update a grant that is not revoked; false when there is none. */
  async update(spaceId: string, id: string, patch: GrantPatch): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('access_grants')
      .set(patch)
      .where('space_id', '=', spaceId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async revoke(spaceId: string, id: string, at: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('access_grants')
      .set({ revoked_at: at, updated_at: at })
      .where('space_id', '=', spaceId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Counts one use when the grant still has one left (atomic: one conditional UPDATE, so of N
   * concurrent callers with K uses left exactly K succeed, on SQLite and PostgreSQL alike).
   */
  async consumeUse(id: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('access_grants')
      .set((eb) => ({ uses: eb('uses', '+', 1) }))
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('max_uses', 'is', null), eb('uses', '<', eb.ref('max_uses'))]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
