import type { Updateable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type RepositoryConnectionRow = DB['repository_connections'];
export type RepositoryConnectionPatch = Updateable<DB['repository_connections']>;

/** A space's repository connection (at most one per space). */
export class RepositoryConnectionRepository {
  constructor(private readonly ctx: RepoContext) {}

  async forSpace(spaceId: string): Promise<RepositoryConnectionRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('repository_connections')
        .selectAll()
        .where('space_id', '=', spaceId)
        .executeTakeFirst()) ?? null
    );
  }

  /** Inserts the space's connection; false when it already has one. */
  async create(row: RepositoryConnectionRow): Promise<boolean> {
    const r = await this.ctx.exec
      .insertInto('repository_connections')
      .values(row)
      .onConflict((oc) => oc.column('space_id').doNothing())
      .returning('space_id')
      .executeTakeFirst();
    return r !== undefined;
  }

  async update(spaceId: string, patch: RepositoryConnectionPatch): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('repository_connections')
      .set(patch)
      .where('space_id', '=', spaceId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Removes the space's connection (also on purge); true when there was one. */
  async deleteForSpace(spaceId: string): Promise<boolean> {
    const r = await this.ctx.exec
      .deleteFrom('repository_connections')
      .where('space_id', '=', spaceId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
