import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type ChannelRow = Selectable<DB['channels']>;

/**
 * Channels: a space's named pointers to versions. Publishing's channel module is the only writer
 * that moves a pointer; other areas read them, and a space's purge removes them.
 */
export class ChannelRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Every channel of these spaces (any order). */
  listForSpaces(spaceIds: readonly string[]): Promise<ChannelRow[]> {
    if (spaceIds.length === 0) return Promise.resolve([]);
    return this.ctx.exec.selectFrom('channels').selectAll().where('space_id', 'in', spaceIds).execute();
  }

  /** Removes a space's channels (its purge). */
  async deleteForSpace(spaceId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('channels').where('space_id', '=', spaceId).execute();
  }
}
