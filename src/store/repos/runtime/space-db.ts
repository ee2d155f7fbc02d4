import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type SpaceDbConsoleRow = DB['space_db_consoles'];
export type SpaceDbOwnerRow = DB['space_db_owners'];

/** Single-use console URLs of space databases and the sessions they turn into. */
export class SpaceDbConsoleRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: SpaceDbConsoleRow): Promise<void> {
    await this.ctx.exec.insertInto('space_db_consoles').values(row).execute();
  }

  /**
   * Turns an unused, unexpired token into a session: true for exactly one caller per token (the
   * update is conditional on the token not having been exchanged).
   */
  async exchange(
    tokenHash: string,
    sessionHash: string,
    now: string,
    sessionUntil: string,
  ): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('space_db_consoles')
      .set({ session_hash: sessionHash, session_until: sessionUntil })
      .where('token_hash', '=', tokenHash)
      .where('session_hash', 'is', null)
      .where('open_until', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** The console a live session belongs to (null: unknown or ended). */
  async bySession(sessionHash: string, now: string): Promise<SpaceDbConsoleRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_db_consoles')
        .selectAll()
        .where('session_hash', '=', sessionHash)
        .where('session_until', '>', now)
        .executeTakeFirst()) ?? null
    );
  }

  /** Forgets consoles whose URL and session have both ended. */
  async deleteEnded(now: string): Promise<number> {
    const r = await this.ctx.exec
      .deleteFrom('space_db_consoles')
      .where('open_until', '<', now)
      .where((eb) => eb.or([eb('session_until', 'is', null), eb('session_until', '<', now)]))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

/** Which instance owns each space database (a renewable lease) and its latest snapshot. */
export class SpaceDbOwnerRepository {
  constructor(private readonly ctx: RepoContext) {}

  async get(spaceId: string): Promise<SpaceDbOwnerRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_db_owners')
        .selectAll()
        .where('space_id', '=', spaceId)
        .executeTakeFirst()) ?? null
    );
  }

  /**
   * Takes the lease when nobody holds it, it ran out, or this instance holds it already; the row as
   * it is afterwards (its `instance_id` says who won). The conditional update is atomic, so two
   * instances racing for a free lease cannot both win.
   */
  async claim(
    spaceId: string,
    instanceId: string,
    address: string,
    now: string,
    until: string,
  ): Promise<SpaceDbOwnerRow> {
    await this.ctx.exec
      .insertInto('space_db_owners')
      .values({
        space_id: spaceId,
        instance_id: instanceId,
        address,
        lease_until: until,
        snapshot_sha256: null,
        snapshot_size: null,
        snapshot_generation: 0,
        snapshot_at: null,
      })
      .onConflict((oc) => oc.column('space_id').doNothing())
      .execute();
    await this.ctx.exec
      .updateTable('space_db_owners')
      .set({ instance_id: instanceId, address, lease_until: until })
      .where('space_id', '=', spaceId)
      .where((eb) => eb.or([eb('instance_id', '=', instanceId), eb('lease_until', '<', now)]))
      .execute();
    return (await this.get(spaceId))!;
  }

  /** Extends this instance's leases on these spaces; the ones it still holds. */
  async renew(spaceIds: string[], instanceId: string, until: string): Promise<string[]> {
    if (!spaceIds.length) return [];
    await this.ctx.exec
      .updateTable('space_db_owners')
      .set({ lease_until: until })
      .where('instance_id', '=', instanceId)
      .where('space_id', 'in', spaceIds)
      .execute();
    const rows = await this.ctx.exec
      .selectFrom('space_db_owners')
      .select('space_id')
      .where('instance_id', '=', instanceId)
      .where('space_id', 'in', spaceIds)
      .execute();
    return rows.map((r) => r.space_id);
  }

  /** Gives up this instance's lease on a space at once (on shutdown), keeping the snapshot record. */
  async release(spaceId: string, instanceId: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('space_db_owners')
      .set({ lease_until: at })
      .where('space_id', '=', spaceId)
      .where('instance_id', '=', instanceId)
      .execute();
  }

  /** Records a snapshot the owner stored; false when this instance no longer holds the lease. */
  async recordSnapshot(
    spaceId: string,
    instanceId: string,
    snap: { sha256: string; size: number; generation: number; at: string },
  ): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('space_db_owners')
      .set({
        snapshot_sha256: snap.sha256,
        snapshot_size: snap.size,
        snapshot_generation: snap.generation,
        snapshot_at: snap.at,
      })
      .where('space_id', '=', spaceId)
      .where('instance_id', '=', instanceId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Every snapshot digest (the blob sweep keeps them). */
  async allSnapshots(): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('space_db_owners')
      .select('snapshot_sha256')
      .where('snapshot_sha256', 'is not', null)
      .execute();
    return rows.map((r) => r.snapshot_sha256!);
  }

  /** Forgets a purged space's owner and snapshot record (the snapshot goes with the next blob sweep). */
  async deleteForSpace(spaceId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('space_db_owners').where('space_id', '=', spaceId).execute();
    await this.ctx.exec.deleteFrom('space_db_consoles').where('space_id', '=', spaceId).execute();
  }
}
