import type { DB } from '../schema.ts';
import type { RepoContext } from './index.ts';
import { RuntimeLogRepository } from './runtime-logs.ts';
import { StorageObjectRepository } from './storage.ts';

export type SpaceCronRow = DB['space_crons'];

export interface DeclaredCron {
  key: string;
  path: string;
  schedule: string;
  /** When it runs next if its schedule is new or changed (a kept schedule keeps its due time). */
  nextRunAt: string;
}

export interface CronRun {
  at: string;
  /** HTTP status, or null when no answer came. */
  status: number | null;
  trigger: 'schedule' | 'manual';
  ms: number;
  /** Set when the run failed (status ≥ 400 or no answer). */
  failure: string | null;
}

/** The crons of each space's live version (table `space_crons`, behaviour §4.8). */
export class SpaceCronRepository {
  constructor(private readonly ctx: RepoContext) {}

  /**
   * Makes the space's scheduled crons those `versionId` declares: new and changed ones get their
   * next run time, unchanged ones keep theirs, ones it no longer declares stop being scheduled (their
   * last run and failure stay, should a later version declare them again).
   */
  async replace(spaceId: string, versionId: string, crons: DeclaredCron[], now: string): Promise<void> {
    const existing = await this.ctx.exec
      .selectFrom('space_crons')
      .select(['key', 'schedule', 'next_run_at'])
      .where('space_id', '=', spaceId)
      .execute();
    const byKey = new Map(existing.map((r) => [r.key, r]));
    for (const c of crons) {
      const old = byKey.get(c.key);
      const next = old && old.schedule === c.schedule && old.next_run_at ? old.next_run_at : c.nextRunAt;
      if (old) {
        await this.ctx.exec
          .updateTable('space_crons')
          .set({
            path: c.path,
            schedule: c.schedule,
            version_id: versionId,
            next_run_at: next,
            updated_at: now,
          })
          .where('space_id', '=', spaceId)
          .where('key', '=', c.key)
          .execute();
      } else {
        await this.ctx.exec
          .insertInto('space_crons')
          .values({
            space_id: spaceId,
            key: c.key,
            path: c.path,
            schedule: c.schedule,
            version_id: versionId,
            next_run_at: next,
            last_run_at: null,
            last_run_status: null,
            last_run_trigger: null,
            last_run_ms: null,
            last_failure_at: null,
            last_failure_status: null,
            last_failure_message: null,
            last_failure_trigger: null,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
    }
    const keep = crons.map((c) => c.key);
    let gone = this.ctx.exec
      .updateTable('space_crons')
      .set({ version_id: null, next_run_at: null, updated_at: now })
      .where('space_id', '=', spaceId)
      .where('version_id', 'is not', null);
    if (keep.length) gone = gone.where('key', 'not in', keep);
    await gone.execute();
  }

  /** The crons the live version declares, by key. */
  async list(spaceId: string): Promise<SpaceCronRow[]> {
    return this.ctx.exec
      .selectFrom('space_crons')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('version_id', 'is not', null)
      .orderBy('key')
      .execute();
  }

  async get(spaceId: string, key: string): Promise<SpaceCronRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_crons')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('key', '=', key)
        .where('version_id', 'is not', null)
        .executeTakeFirst()) ?? null
    );
  }

  /** Scheduled crons due by `now`, earliest first. */
  async due(now: string, limit: number): Promise<SpaceCronRow[]> {
    return this.ctx.exec
      .selectFrom('space_crons')
      .selectAll()
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(limit)
      .execute();
  }

  /** Moves a cron's due time from `from` to `to`; false when another tick already moved it. */
  async advance(spaceId: string, key: string, from: string, to: string | null): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('space_crons')
      .set({ next_run_at: to })
      .where('space_id', '=', spaceId)
      .where('key', '=', key)
      .where('next_run_at', '=', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Records a run (and, when it failed, the failure, which stays until the next failure). */
  async recordRun(spaceId: string, key: string, run: CronRun): Promise<void> {
    await this.ctx.exec
      .updateTable('space_crons')
      .set({
        last_run_at: run.at,
        last_run_status: run.status,
        last_run_trigger: run.trigger,
        last_run_ms: run.ms,
        updated_at: run.at,
        ...(run.failure === null
          ? {}
          : {
              last_failure_at: run.at,
              last_failure_status: run.status,
              last_failure_message: run.failure,
              last_failure_trigger: run.trigger,
            }),
      })
      .where('space_id', '=', spaceId)
      .where('key', '=', key)
      .execute();
  }

  /** Forgets a purged space's crons. */
  async deleteForSpace(spaceId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('space_crons').where('space_id', '=', spaceId).execute();
  }
}

/** The functions group's repositories beside the runtime's own: crons, runtime logs, storage (see index.ts). */
export interface CronRepos {
  spaceCrons: SpaceCronRepository;
  runtimeLogs: RuntimeLogRepository;
  storageObjects: StorageObjectRepository;
}

export function cronsRepos(ctx: RepoContext): CronRepos {
  return {
    spaceCrons: new SpaceCronRepository(ctx),
    runtimeLogs: new RuntimeLogRepository(ctx),
    storageObjects: new StorageObjectRepository(ctx),
  };
}
