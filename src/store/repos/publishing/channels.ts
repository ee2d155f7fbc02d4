import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type ChannelRow = Selectable<DB['channels']>;
export type ChannelHistoryRow = Selectable<DB['channel_history']>;

/** One pointer move, as the history records it. */
export interface ChannelMoveRecord {
  id: string;
  spaceId: string;
  channel: string;
  versionId: string;
  previousVersionId: string | null;
  actor: string | null;
  reason: string;
  at: string;
}

/**
 * Channels: a space's named pointers to versions, and their history. Publishing's channel module is
 * the only writer that moves a pointer; other areas read them, and a space's purge removes them.
 */
export class ChannelRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Every channel of these spaces (any order). */
  listForSpaces(spaceIds: readonly string[]): Promise<ChannelRow[]> {
    if (spaceIds.length === 0) return Promise.resolve([]);
    return this.ctx.exec.selectFrom('channels').selectAll().where('space_id', 'in', spaceIds).execute();
  }

  /** A space's channels by name. */
  list(spaceId: string): Promise<ChannelRow[]> {
    return this.ctx.exec
      .selectFrom('channels')
      .selectAll()
      .where('space_id', '=', spaceId)
      .orderBy('name')
      .execute();
  }

  /** The version a channel points at (null: the channel does not exist). */
  async pointer(spaceId: string, channel: string): Promise<string | null> {
    const r = await this.ctx.exec
      .selectFrom('channels')
      .select('version_id')
      .where('space_id', '=', spaceId)
      .where('name', '=', channel)
      .executeTakeFirst();
    return r?.version_id ?? null;
  }

  /** Names of the channels pointing at each of these versions, by name. */
  pointingAt(versionIds: readonly string[]): Promise<Array<{ name: string; version_id: string }>> {
    if (versionIds.length === 0) return Promise.resolve([]);
    return this.ctx.exec
      .selectFrom('channels')
      .select(['name', 'version_id'])
      .where('version_id', 'in', versionIds)
      .orderBy('name')
      .execute();
  }

  /**
   * Points a channel at a version (creating it) and records the move; the space's `updated_at` moves
   * too (a publish, promote or rollback updates the space: `sort=-updated` lists it first). Call
   * inside a transaction.
   */
  async move(m: ChannelMoveRecord): Promise<void> {
    // The parent row before its channel: concurrent moves of one space queue on the space's row.
    await this.ctx.exec
      .updateTable('spaces')
      .set({ updated_at: m.at })
      .where('id', '=', m.spaceId)
      .where('updated_at', '<', m.at)
      .execute();
    await this.ctx.exec
      .insertInto('channels')
      .values({ space_id: m.spaceId, name: m.channel, version_id: m.versionId, updated_at: m.at })
      .onConflict((oc) =>
        oc.columns(['space_id', 'name']).doUpdateSet({ version_id: m.versionId, updated_at: m.at }),
      )
      .execute();
    await this.ctx.exec
      .insertInto('channel_history')
      .values({
        id: m.id,
        space_id: m.spaceId,
        channel: m.channel,
        version_id: m.versionId,
        previous_version_id: m.previousVersionId,
        actor: m.actor,
        reason: m.reason,
        created_at: m.at,
      })
      .execute();
  }

  /** A channel's moves, newest first, keyset-paged by id. */
  history(
    spaceId: string,
    channel: string,
    after: string | null,
    limit: number,
  ): Promise<ChannelHistoryRow[]> {
    let q = this.ctx.exec
      .selectFrom('channel_history')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('channel', '=', channel);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  /** Removes one channel's pointer (its history stays); true when it existed. */
  async delete(spaceId: string, channel: string): Promise<boolean> {
    const r = await this.ctx.exec
      .deleteFrom('channels')
      .where('space_id', '=', spaceId)
      .where('name', '=', channel)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Removes a space's channels (its purge). */
  async deleteForSpace(spaceId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('channels').where('space_id', '=', spaceId).execute();
  }
}
