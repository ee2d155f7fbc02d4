import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type SpaceHostnameRow = DB['space_hostnames'];

/**
 * Managed hostname labels of spaces. A name is unique forever: once given to a space it stays with
 * it (retired names redirect to the current one) and is never given to another. Inserting a taken
 * name fails with a unique violation, which the domain turns into `slug_unavailable`.
 */
export class SpaceHostnameRepository {
  constructor(private readonly ctx: RepoContext) {}

  async isTaken(name: string): Promise<boolean> {
    return !!(await this.ctx.exec
      .selectFrom('space_hostnames')
      .select('name')
      .where('name', '=', name)
      .executeTakeFirst());
  }

  async byName(name: string): Promise<SpaceHostnameRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_hostnames')
        .selectAll()
        .where('name', '=', name)
        .executeTakeFirst()) ?? null
    );
  }

  /** The names of a space, oldest first. */
  listForSpace(spaceId: string): Promise<SpaceHostnameRow[]> {
    return this.ctx.exec
      .selectFrom('space_hostnames')
      .selectAll()
      .where('space_id', '=', spaceId)
      .orderBy('created_at')
      .orderBy('name')
      .execute();
  }

  /** Gives a space a new current name; throws a unique violation when the name was ever taken. */
  async addCurrent(name: string, spaceId: string, at: string): Promise<void> {
    await this.ctx.exec
      .insertInto('space_hostnames')
      .values({ name, space_id: spaceId, current: 1, created_at: at, retired_at: null })
      .execute();
  }

  /** Retires the space's current name (it keeps redirecting). */
  async retireCurrent(spaceId: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('space_hostnames')
      .set({ current: 0, retired_at: at })
      .where('space_id', '=', spaceId)
      .where('current', '=', 1)
      .execute();
  }

  /** Makes a retired name of the same space current again (renaming back). */
  async reinstate(name: string, spaceId: string): Promise<void> {
    await this.ctx.exec
      .updateTable('space_hostnames')
      .set({ current: 1, retired_at: null })
      .where('name', '=', name)
      .where('space_id', '=', spaceId)
      .execute();
  }
}
