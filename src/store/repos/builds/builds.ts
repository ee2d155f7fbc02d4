import type { Updateable } from 'kysely';
import { newId } from '../../../ids.ts';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type BuildRow = DB['builds'];
export type BuildPatch = Updateable<DB['builds']>;
export type BuildStatusChangeRow = DB['build_status_changes'];

/** Builds of spaces: created, listed newest first, and moved between states by compare-and-swap. */
export class BuildRepository {
  constructor(private readonly ctx: RepoContext) {}

  async create(row: BuildRow): Promise<void> {
    await this.ctx.exec.insertInto('builds').values(row).execute();
    await this.recordStatus(row.id, row.status, row.created_at);
  }

  private async recordStatus(buildId: string, status: string, at: string): Promise<void> {
    await this.ctx.exec
      .insertInto('build_status_changes')
      .values({ id: newId('bst'), build_id: buildId, status, created_at: at })
      .execute();
  }

  /** The states a build entered, oldest first. */
  statusChanges(buildId: string): Promise<BuildStatusChangeRow[]> {
    return this.ctx.exec
      .selectFrom('build_status_changes')
      .selectAll()
      .where('build_id', '=', buildId)
      .orderBy('id', 'asc')
      .execute();
  }

  async byId(id: string): Promise<BuildRow | null> {
    return (
      (await this.ctx.exec.selectFrom('builds').selectAll().where('id', '=', id).executeTakeFirst()) ?? null
    );
  }

  /** A space's builds, newest first, with ids below `after` (keyset paging). */
  listForSpace(spaceId: string, after: string | null, n: number): Promise<BuildRow[]> {
    let q = this.ctx.exec.selectFrom('builds').selectAll().where('space_id', '=', spaceId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /**
   * Applies `patch` only while the build is in one of `from` (null: any state): true when it did.
   * Two writers racing (a cancel and the runner's finish) can't both win.
   */
  async transition(id: string, from: readonly string[] | null, patch: BuildPatch): Promise<boolean> {
    let q = this.ctx.exec.updateTable('builds').set(patch).where('id', '=', id);
    if (from) q = q.where('status', 'in', [...from]);
    const r = await q.executeTakeFirst();
    const done = Number(r.numUpdatedRows) > 0;
    // Every state entered is recorded with when (the build's events).
    if (done && typeof patch.status === 'string')
      await this.recordStatus(id, patch.status, String(patch.updated_at ?? new Date().toISOString()));
    return done;
  }

  /** Ids of a space's builds for `branch` that have not finished yet. */
  async unfinishedForBranch(spaceId: string, branch: string): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('builds')
      .select('id')
      .where('space_id', '=', spaceId)
      .where('branch', '=', branch)
      .where('status', 'in', ['waiting_for_source', 'uploading_source', 'queued', 'running'])
      .execute();
    return rows.map((r) => r.id);
  }

  /** Adds to the bytes of log a build has written (the cap counts them). */
  async addLogBytes(id: string, n: number): Promise<void> {
    await this.ctx.exec
      .updateTable('builds')
      .set((eb) => ({ log_bytes: eb('log_bytes', '+', n) }))
      .where('id', '=', id)
      .execute();
  }

  async deleteForSpace(spaceId: string): Promise<string[]> {
    const ids = (
      await this.ctx.exec.selectFrom('builds').select('id').where('space_id', '=', spaceId).execute()
    ).map((r) => r.id);
    if (ids.length) {
      await this.ctx.exec.deleteFrom('build_logs').where('build_id', 'in', ids).execute();
      await this.ctx.exec.deleteFrom('build_status_changes').where('build_id', 'in', ids).execute();
      await this.ctx.exec.deleteFrom('builds').where('id', 'in', ids).execute();
    }
    return ids;
  }
}
