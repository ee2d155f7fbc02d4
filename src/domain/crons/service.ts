import type { Clock } from '../../clock.ts';
import { ApiError } from '../../errors/problem.ts';
import type { CronRun, SpaceCronRow } from '../../store/repos/crons.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import type { SpaceRow, SpaceService } from '../spaces/service.ts';
import { cronKey } from '../spaces/settings-file.ts';
import { nextRun } from './schedule.ts';

/** Crons a tick hands to the job queue at most (the rest wait for the next tick, a minute later). */
const TICK_BATCH = 200;
/** The longest failure message kept. */
const MAX_MESSAGE = 500;

export interface CronDispatch {
  status: number | null;
  ms: number;
  /** Set when the run failed: the answer's status and start of its body, or why none came. */
  failure: string | null;
}

/** Sends one cron request through the site edge (src/serve/cron-dispatch.ts does it over HTTP). */
export type CronDispatcher = (
  space: SpaceRow,
  cron: { key: string; path: string },
  trigger: CronRun['trigger'],
) => Promise<CronDispatch>;

export interface CronView {
  key: string;
  path: string;
  schedule: string;
  versionId: string;
  nextRunAt: string | null;
  lastRun: { at: string; status: number | null; trigger: string; durationMs: number } | null;
  lastFailure: { at: string; status: number | null; trigger: string; message: string } | null;
}

export function presentCron(r: SpaceCronRow): CronView {
  return {
    key: r.key,
    path: r.path,
    schedule: r.schedule,
    versionId: r.version_id ?? '',
    nextRunAt: r.next_run_at,
    lastRun: r.last_run_at
      ? {
          at: r.last_run_at,
          status: r.last_run_status,
          trigger: r.last_run_trigger ?? 'schedule',
          durationMs: r.last_run_ms ?? 0,
        }
      : null,
    lastFailure: r.last_failure_at
      ? {
          at: r.last_failure_at,
          status: r.last_failure_status,
          trigger: r.last_failure_trigger ?? 'schedule',
          message: r.last_failure_message ?? '',
        }
      : null,
  };
}

/** The `crons` of a version's stored settings (already validated at finalize). */
export function declaredCrons(config: string | null): Array<{ path: string; schedule: string }> {
  if (!config) return [];
  try {
    const crons = (JSON.parse(config) as { crons?: unknown }).crons;
    if (!Array.isArray(crons)) return [];
    return crons.filter(
      (c): c is { path: string; schedule: string } =>
        typeof c === 'object' && c !== null && typeof c.path === 'string' && typeof c.schedule === 'string',
    );
  } catch {
    return [];
  }
}

/**
 * Crons (behaviour §4.8): the live version's `crons` are scheduled when `live` moves
 * ({@link CronService.syncLive}, in the move's own transaction); a tick every minute hands each due
 * cron to the durable job queue as one `cron.run` job keyed by (space, cron, due time) — so a due
 * time runs once however many instances tick — and moves it to its next due time; the job sends
 * `GET <path>` to the live version through the site edge with `x-service-cron` (and the space's
 * `CRON_SECRET` as a bearer token when it has that variable). A status ≥ 400 or no answer is a
 * failure, kept as the cron's last failure.
 */
export class CronService {
  constructor(
    private readonly d: {
      store: Store;
      spaces: SpaceService;
      clock: Clock;
      /** Set by the server once it listens (the requests go through its own site edge). */
      dispatch: () => CronDispatcher | null;
      /** Queues one run; inside the tick's transaction. */
      enqueueRun: (repos: Repositories, payload: CronRunPayload, key: string) => Promise<void>;
    },
  ) {}

  /** Schedules what `versionId` (now live) declares; inside the channel move's transaction. */
  async syncLive(repos: Repositories, spaceId: string, versionId: string): Promise<void> {
    const version = await repos.versions.byId(versionId);
    const now = this.d.clock.now();
    const crons = declaredCrons(version?.config ?? null).map((c) => ({
      key: cronKey(c.path),
      path: c.path,
      schedule: c.schedule,
      nextRunAt: nextRun(c.schedule, now).toISOString(),
    }));
    await repos.spaceCrons.replace(spaceId, versionId, crons, now.toISOString());
  }

  async list(p: Principal, spaceRef: string): Promise<CronView[]> {
    const space = await this.d.spaces.resolve(p, spaceRef);
    return (await this.d.store.repos.spaceCrons.list(space.id)).map(presentCron);
  }

  /** A manual run: now, without `x-service-cron`; recorded like a scheduled one. */
  async runNow(p: Principal, spaceRef: string, key: string): Promise<{ cron: CronView; run: CronDispatch }> {
    const space = await this.d.spaces.resolve(p, spaceRef);
    const row = await this.d.store.repos.spaceCrons.get(space.id, key);
    if (!row) {
      throw new ApiError('cron_not_found', `The live version has no cron "${key}".`, {
        details: { key },
        suggestions: [`GET /v1/spaces/${space.id}/crons lists them.`],
      });
    }
    const run = await this.execute(space, row, 'manual');
    const after = await this.d.store.repos.spaceCrons.get(space.id, key);
    return { cron: presentCron(after ?? row), run };
  }

  /** The tick: queues every due cron once and moves it to its next due time. Returns how many. */
  async tick(): Promise<number> {
    const now = this.d.clock.now();
    const due = await this.d.store.repos.spaceCrons.due(now.toISOString(), TICK_BATCH);
    let queued = 0;
    for (const c of due) {
      const dueAt = c.next_run_at!;
      let next: string | null;
      try {
        next = nextRun(c.schedule, now).toISOString();
      } catch {
        next = null; // not a schedule this server can run (validated at finalize: should not happen)
      }
      await this.d.store.transaction(async (repos) => {
        const moved = await repos.spaceCrons.advance(c.space_id, c.key, dueAt, next);
        if (!moved) return; // another tick took it
        await this.d.enqueueRun(
          repos,
          { spaceId: c.space_id, key: c.key, dueAt },
          `${c.space_id}:${c.key}:${dueAt}`,
        );
        queued++;
      });
    }
    return queued;
  }

  /** The `cron.run` job: the request of one due time, if the live version still declares the cron. */
  async runScheduled(payload: CronRunPayload): Promise<void> {
    const space = await this.d.store.repos.spaces.byId(payload.spaceId);
    if (!space || space.deleted_at || space.disabled_reason) return;
    const row = await this.d.store.repos.spaceCrons.get(space.id, payload.key);
    if (!row) return;
    await this.execute(space, row, 'schedule');
  }

  private async execute(
    space: SpaceRow,
    row: SpaceCronRow,
    trigger: CronRun['trigger'],
  ): Promise<CronDispatch> {
    const dispatch = this.d.dispatch();
    const at = this.d.clock.now().toISOString();
    const result: CronDispatch = dispatch
      ? await dispatch(space, { key: row.key, path: row.path }, trigger)
      : { status: null, ms: 0, failure: 'The server is not listening yet: no request was sent.' };
    await this.d.store.repos.spaceCrons.recordRun(space.id, row.key, {
      at,
      status: result.status,
      trigger,
      ms: Math.round(result.ms),
      failure: result.failure === null ? null : result.failure.slice(0, MAX_MESSAGE),
    });
    return result;
  }
}

export interface CronRunPayload {
  spaceId: string;
  key: string;
  dueAt: string;
}
