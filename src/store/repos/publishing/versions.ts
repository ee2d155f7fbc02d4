import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type VersionRow = DB['versions'];

/** How a caller names a version of a space: its id, its number, or the newest one not deleted. */
export type VersionRef = { id: string } | { number: number } | 'latest';

/** Columns a space's diagnostics are read from. */
export type VersionDiagnosticsRow = Pick<
  VersionRow,
  'id' | 'status' | 'diagnostics' | 'created_at' | 'finalized_at'
>;

/**
 * Versions: one row per publish of a space, numbered 1, 2, 3… per space. Publishing's versions
 * module creates them and moves their status (uploading → ready | failed | expired | deleted); the
 * edge reads ready ones through the serving group.
 */
export class VersionRepository {
  constructor(private readonly ctx: RepoContext) {}

  async byId(id: string): Promise<VersionRow | null> {
    return (
      (await this.ctx.exec.selectFrom('versions').selectAll().where('id', '=', id).executeTakeFirst()) ?? null
    );
  }

  /** A version of this space (never another space's, whatever the ref). */
  async inSpace(spaceId: string, ref: VersionRef): Promise<VersionRow | null> {
    let q = this.ctx.exec.selectFrom('versions').selectAll().where('space_id', '=', spaceId);
    if (ref === 'latest') q = q.where('status', '!=', 'deleted').orderBy('number', 'desc').limit(1);
    else if ('number' in ref) q = q.where('number', '=', ref.number);
    else q = q.where('id', '=', ref.id);
    return (await q.executeTakeFirst()) ?? null;
  }

  /** The version a space's channel points at. */
  async onChannel(spaceId: string, channel: string): Promise<VersionRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('channels')
        .innerJoin('versions', 'versions.id', 'channels.version_id')
        .selectAll('versions')
        .where('channels.space_id', '=', spaceId)
        .where('channels.name', '=', channel)
        .executeTakeFirst()) ?? null
    );
  }

  /** The next free number of a space (racing creators meet the unique index and retry). */
  async nextNumber(spaceId: string): Promise<number> {
    const max = await this.ctx.exec
      .selectFrom('versions')
      .select((eb) => eb.fn.max('number').as('n'))
      .where('space_id', '=', spaceId)
      .executeTakeFirst();
    return Number(max?.n ?? 0) + 1;
  }

  async insert(row: VersionRow): Promise<void> {
    await this.ctx.exec.insertInto('versions').values(row).execute();
  }

  /**
   * True when the version is still `ready`. Inside a transaction the no-op update locks its row
   * until commit, so a concurrent delete waits (a layer being created depends on its base).
   */
  async holdReady(id: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('versions')
      .set({ status: 'ready' })
      .where('id', '=', id)
      .where('status', '=', 'ready')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Ends an uploading version: `ready` with its compiled rules, or `failed` with its diagnostics.
   * False when it was no longer uploading (another request finalized or it expired).
   */
  async finish(
    id: string,
    change: {
      status: 'ready' | 'failed';
      rules?: string | null;
      diagnostics: string;
      config?: string | null;
      finalizedAt: string;
    },
  ): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('versions')
      .set({
        status: change.status,
        ...(change.status === 'ready' ? { rules: change.rules ?? null, config: change.config ?? null } : {}),
        diagnostics: change.diagnostics,
        finalized_at: change.finalizedAt,
        expires_at: null,
      })
      .where('id', '=', id)
      .where('status', '=', 'uploading')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** The version's file rows now list every file: it is no longer a layer. */
  async clearBase(id: string): Promise<void> {
    await this.ctx.exec.updateTable('versions').set({ base_id: null }).where('id', '=', id).execute();
  }

  /** Newest first, keyset-paged by id. */
  list(spaceId: string, after: string | null, limit: number): Promise<VersionRow[]> {
    let q = this.ctx.exec.selectFrom('versions').selectAll().where('space_id', '=', spaceId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  async markDeleted(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('versions')
      .set({ status: 'deleted', deleted_at: at, expires_at: null })
      .where('id', '=', id)
      .execute();
  }

  /** Uploading versions whose window closed at `now`. */
  expiredUploads(now: string): Promise<Array<{ id: string; base_id: string | null }>> {
    return this.ctx.exec
      .selectFrom('versions')
      .select(['id', 'base_id'])
      .where('status', '=', 'uploading')
      .where('expires_at', '<=', now)
      .execute();
  }

  /** Marks an uploading version expired; false when it finalized meanwhile. */
  async expire(id: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('versions')
      .set({ status: 'expired' })
      .where('id', '=', id)
      .where('status', '=', 'uploading')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async status(id: string): Promise<string | null> {
    const v = await this.ctx.exec
      .selectFrom('versions')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirst();
    return v?.status ?? null;
  }

  /** True when a version that is neither deleted nor expired is layered on this one. */
  async hasLiveLayer(id: string): Promise<boolean> {
    const layer = await this.ctx.exec
      .selectFrom('versions')
      .select('id')
      .where('base_id', '=', id)
      .where('status', 'not in', ['deleted', 'expired'])
      .limit(1)
      .executeTakeFirst();
    return layer !== undefined;
  }

  /**
   * What a space's diagnostics are made of: the version `liveId` and every newer one that failed
   * (every failed one when nothing is live), newest first.
   */
  diagnosticsSince(spaceId: string, liveId: string | null): Promise<VersionDiagnosticsRow[]> {
    let q = this.ctx.exec
      .selectFrom('versions')
      .select(['id', 'status', 'diagnostics', 'created_at', 'finalized_at'])
      .where('space_id', '=', spaceId);
    if (liveId) {
      q = q.where((eb) =>
        eb.or([eb('id', '=', liveId), eb.and([eb('id', '>', liveId), eb('status', '=', 'failed')])]),
      );
    } else q = q.where('status', '=', 'failed');
    return q.orderBy('id', 'desc').execute();
  }

  /** A purged space's versions: all marked deleted, their file rows dropped. */
  async purgeForSpace(spaceId: string, at: string): Promise<void> {
    const ids = (
      await this.ctx.exec.selectFrom('versions').select('id').where('space_id', '=', spaceId).execute()
    ).map((v) => v.id);
    if (ids.length) await this.ctx.exec.deleteFrom('version_files').where('version_id', 'in', ids).execute();
    await this.ctx.exec
      .updateTable('versions')
      .set({ status: 'deleted', deleted_at: at })
      .where('space_id', '=', spaceId)
      .execute();
  }
}
