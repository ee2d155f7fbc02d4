import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import { Store } from '../store/repos/index.ts';
import type { JobLease, JobRepository, JobRow } from '../store/repos/jobs/jobs.ts';
import type { JobStatus } from '../store/tables/jobs.ts';
import {
  type EnqueueOptions,
  type EnqueueResult,
  type HandlerOptions,
  type InTransaction,
  type Job,
  type JobContext,
  type JobHandler,
  LeaseLostError,
  PermanentJobError,
  type QueueOptions,
  type QueueStats,
} from './job.ts';

/**
 * A durable job queue stored in the application database (SQLite or PostgreSQL).
 *
 * Delivery contract: **at least once**. A job runs until a handler returns without throwing and the
 * completion is recorded; a worker that dies mid-job leaves a lease that expires, and another worker
 * (or the same process after a restart) runs the job again. Handlers therefore make their effect
 * idempotent: check the state they are about to change (e.g. "is the space already disabled?") and,
 * where the effect lives in the database, apply it together with the completion in one transaction
 * through `ctx.transaction(fn)` / `ctx.complete(trx)` — then the effect lands exactly once even when
 * the job is delivered twice, because a worker that lost its lease can't commit.
 */

export {
  type EnqueueOptions,
  type EnqueueResult,
  type HandlerOptions,
  type InTransaction,
  type Job,
  type JobContext,
  type JobHandler,
  LeaseLostError,
  PermanentJobError,
  type QueueOptions,
  type QueueStats,
} from './job.ts';
export type { JobRow };

interface Registered {
  handler: JobHandler;
  concurrency: number;
  leaseMs: number;
  running: number;
}

interface Schedule {
  everyMs: number;
  payload: unknown;
}

const DAY = 24 * 3600_000;
const MAX_ERROR_CHARS = 4000;

export class JobQueue {
  readonly workerId: string;
  private readonly store: Store;
  /** The queue's rows (SQL, the claim's dialect strategy and the lease checks live there). */
  private readonly jobs: JobRepository;
  private readonly clock: Clock;
  private readonly log: Logger | undefined;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly stopTimeoutMs: number;
  private readonly retainSucceededMs: number;
  private readonly retainFailedMs: number;
  private readonly random: () => number;

  private readonly handlers = new Map<string, Registered>();
  private readonly schedules = new Map<string, Schedule>();
  private readonly inFlight = new Map<string, { promise: Promise<void>; abort: AbortController }>();
  private started = false;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private wakeAgain = false;
  private lastPruneAt = 0;

  constructor(options: QueueOptions) {
    this.store = new Store(options.database);
    this.jobs = this.store.repos.jobs;
    this.clock = options.clock;
    this.log = options.log;
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.backoffBaseMs = options.backoffBaseMs ?? 5000;
    this.backoffMaxMs = options.backoffMaxMs ?? 3600_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    this.retainSucceededMs = options.retainSucceededMs ?? 7 * DAY;
    this.retainFailedMs = options.retainFailedMs ?? 30 * DAY;
    this.random = options.random ?? Math.random;
  }

  /** True between `start()` and `stop()`: this process polls for jobs. */
  get isStarted(): boolean {
    return this.started;
  }

  // ── producing ────────────────────────────────────────────────────────────────────────────────

  /** Adds a job. With `key`, returns the pending job of that (kind, key) instead of adding another. */
  async enqueue(kind: string, payload: unknown, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    const result = await this.insert(this.jobsIn(options.trx), {
      kind,
      payload,
      runAt: options.runAt ?? this.clock.now(),
      key: options.key ?? null,
      replace: options.replace ?? false,
      maxAttempts: options.maxAttempts ?? this.maxAttempts,
      everyMs: null,
    });
    // Inside a caller's transaction the row is visible only after commit; the next poll finds it then.
    this.wake();
    return result;
  }

  /** Removes the pending job of (kind, key), if any. Returns true when one was removed. */
  async cancel(kind: string, key: string, trx?: InTransaction): Promise<boolean> {
    return this.jobsIn(trx).deletePending(kind, key);
  }

  /**
   * A recurring job: keeps exactly one pending `kind` job (dedupe key `schedule`) and, after each
   * run ends, enqueues the next one `everyMs` later. Durable: the interval is stored on the job, so
   * whichever worker runs it re-enqueues it. Synchronous, so areas can declare schedules while the
   * server is built: `start()` creates the pending job (due at once) unless one exists — every worker
   * process does so at start, and the dedupe key keeps it at one. Called after `start()`, it creates
   * it right away.
   */
  schedule(kind: string, everyMs: number, payload: unknown = {}): void {
    if (!Number.isInteger(everyMs) || everyMs < 1) throw new Error(`schedule ${kind}: bad interval`);
    this.schedules.set(kind, { everyMs, payload });
    if (this.started) {
      this.ensureSchedule(kind, everyMs, payload)
        .then(() => this.wake())
        .catch((err) => this.log?.error({ err, kind }, 'could not create the scheduled job'));
    }
  }

  /** Creates the pending job of every declared schedule that has none (done by `start()`). */
  async ensureSchedules(): Promise<void> {
    for (const [kind, s] of this.schedules) await this.ensureSchedule(kind, s.everyMs, s.payload);
  }

  // ── consuming ────────────────────────────────────────────────────────────────────────────────

  registerHandler<P = any>(kind: string, handler: JobHandler<P>, options: HandlerOptions = {}): void {
    if (this.handlers.has(kind)) throw new Error(`a handler for job kind ${kind} is already registered`);
    const concurrency = options.concurrency ?? 1;
    const leaseMs = options.leaseMs ?? this.leaseMs;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`${kind}: bad concurrency`);
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new Error(`${kind}: bad lease`);
    this.handlers.set(kind, { handler: handler as JobHandler, concurrency, leaseMs, running: 0 });
  }

  /** Starts polling (and creates the pending job of every schedule). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.ensureSchedules();
    this.log?.info({ worker: this.workerId, kinds: [...this.handlers.keys()] }, 'job worker started');
    this.wake();
  }

  /**
   * Stops claiming, then waits up to the stop timeout for running handlers. Handlers still running
   * after that are aborted and abandoned: their leases run out and another worker runs them again.
   */
  async stop(timeoutMs = this.stopTimeoutMs): Promise<void> {
    if (!this.started) return;
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // A poll in progress may still be claiming: let it settle first so its jobs are waited for too.
    await this.ticking?.catch(() => {});
    const all = Promise.allSettled([...this.inFlight.values()].map((f) => f.promise));
    let timeout: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((resolve) => {
        timeout = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timeout);
    if (timedOut) {
      this.log?.warn({ jobs: [...this.inFlight.keys()] }, 'job worker stopped with handlers running');
      for (const f of this.inFlight.values()) f.abort.abort(new Error('job queue stopped'));
    }
  }

  /** Makes the poller look for due jobs now (called on enqueue in this process). */
  wake(): void {
    if (!this.started) return;
    if (this.ticking) {
      this.wakeAgain = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.poll(), 0);
  }

  private poll(): void {
    this.timer = null;
    if (!this.started) return;
    this.ticking = this.claimAndDispatch()
      .then(() => undefined)
      .catch((err) => this.log?.error({ err }, 'job poll failed'))
      .finally(() => {
        this.ticking = null;
        if (!this.started) return;
        const again = this.wakeAgain;
        this.wakeAgain = false;
        this.timer = setTimeout(() => this.poll(), again ? 0 : this.pollIntervalMs);
      });
  }

  /**
   * One pass: maintenance, then claims due jobs for every kind with free slots and starts them.
   * Returns once they are claimed (not finished).
   */
  /** Claims due jobs of every kind and starts them; answers the runs it started. */
  private async claimAndDispatch(): Promise<Array<Promise<void>>> {
    await this.maintain();
    const started: Array<Promise<void>> = [];
    for (const [kind, reg] of this.handlers) {
      const free = reg.concurrency - reg.running;
      if (free <= 0) continue;
      const rows = await this.claim(kind, free, reg.leaseMs);
      for (const row of rows) started.push(this.dispatch(row, reg));
    }
    return started;
  }

  // ── internal API (tests, operators) ──────────────────────────────────────────────────────────

  /** Claims every due job once (whether or not the poller is started) and waits until they finish. */
  async tick(): Promise<number> {
    // Counted as started, not as still in flight when the claims are done: a run that ends while
    // other kinds are still being claimed counts too (else `drain` could stop with jobs due).
    const started = await this.claimAndDispatch();
    await Promise.allSettled(started);
    return started.length;
  }

  /** Runs `tick` until no job is due (retries scheduled in the future don't count). */
  async drain(maxRounds = 100): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const n = await this.tick();
      total += n;
      if (n === 0) return total;
    }
    return total;
  }

  /** Waits for the handlers this process runs now. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) {
      await Promise.allSettled([...this.inFlight.values()].map((f) => f.promise));
    }
  }

  async get(id: string): Promise<Job | undefined> {
    const row = await this.jobs.byId(id);
    return row ? toJob(row) : undefined;
  }

  async find(kind: string, filter: { status?: JobStatus; key?: string } = {}): Promise<Job[]> {
    const rows = await this.jobs.find(kind, filter);
    return rows.map(toJob);
  }

  async stats(): Promise<QueueStats> {
    const rows = await this.jobs.countByKindAndStatus();
    const kinds: QueueStats['kinds'] = {};
    for (const r of rows) {
      const k = kinds[r.kind] ?? {};
      k[r.status] = Number(r.n);
      kinds[r.kind] = k;
    }
    const due = await this.jobs.countDue(this.nowIso());
    return { kinds, due, runningHere: this.inFlight.size, started: this.started };
  }

  /** Deletes finished jobs past their retention; returns how many. Also runs from the poller. */
  async prune(): Promise<number> {
    const now = this.clock.now().getTime();
    const ok = await this.jobs.deleteFinishedBefore(
      ['succeeded', 'superseded'],
      new Date(now - this.retainSucceededMs).toISOString(),
    );
    const failed = await this.jobs.deleteFinishedBefore(
      ['failed'],
      new Date(now - this.retainFailedMs).toISOString(),
    );
    return ok + failed;
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────────

  /** The job rows as seen from a caller's transaction (or on their own). */
  private jobsIn(trx: InTransaction | undefined): JobRepository {
    if (!trx) return this.jobs;
    return 'jobs' in trx ? trx.jobs : this.jobs.on(trx);
  }

  private nowIso(): string {
    return this.clock.now().toISOString();
  }

  private async insert(
    jobs: JobRepository,
    j: {
      kind: string;
      payload: unknown;
      runAt: Date;
      key: string | null;
      replace: boolean;
      maxAttempts: number;
      everyMs: number | null;
    },
  ): Promise<EnqueueResult> {
    if (!/^[a-z][a-z0-9_.:-]{0,99}$/.test(j.kind)) throw new Error(`bad job kind "${j.kind}"`);
    if (!Number.isInteger(j.maxAttempts) || j.maxAttempts < 1 || j.maxAttempts > 1000) {
      throw new Error('maxAttempts must be an integer from 1 to 1000');
    }
    if (Number.isNaN(j.runAt.getTime())) throw new Error('runAt is not a valid date');
    if (j.key !== null && (j.key.length === 0 || j.key.length > 500)) throw new Error('bad dedupe key');
    const now = this.nowIso();
    const payload = JSON.stringify(j.payload ?? null);
    const runAt = j.runAt.toISOString();
    const id = newId('job', this.clock.now().getTime());
    const row = {
      id,
      kind: j.kind,
      payload,
      status: 'pending' as const,
      dedupe_key: j.key,
      run_at: runAt,
      attempts: 0,
      max_attempts: j.maxAttempts,
      locked_by: null,
      locked_until: null,
      every_ms: j.everyMs,
      last_error: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    };
    if (j.key === null) {
      await jobs.insert(row);
      return { id, created: true };
    }
    return jobs.insertKeyed(
      row,
      j.replace
        ? { keep: false, payload, runAt, maxAttempts: j.maxAttempts, updatedAt: now }
        : { keep: true },
    );
  }

  private async ensureSchedule(kind: string, everyMs: number, payload: unknown): Promise<void> {
    // A run in progress (on any instance) enqueues the next one when it ends; one made now would run
    // again as soon as it ends (several instances starting meanwhile would each add a run).
    if (await this.jobs.isRunning(kind, 'schedule')) return;
    await this.insert(this.jobs, {
      kind,
      payload,
      runAt: this.clock.now(),
      key: 'schedule',
      replace: false,
      maxAttempts: this.maxAttempts,
      everyMs,
    });
  }

  /** Atomically moves up to `limit` due jobs of `kind` to `running` under this worker's lease. */
  private claim(kind: string, limit: number, leaseMs: number): Promise<JobRow[]> {
    const now = this.clock.now();
    const lockedUntil = new Date(now.getTime() + leaseMs).toISOString();
    return this.jobs.claim(kind, limit, this.workerId, now.toISOString(), lockedUntil);
  }

  private dispatch(row: JobRow, reg: Registered): Promise<void> {
    reg.running++;
    const flightKey = `${row.id}#${row.attempts}`;
    const abort = new AbortController();
    const promise = this.run(row, reg, abort)
      .catch((err) => this.log?.error({ err, job: row.id, kind: row.kind }, 'job bookkeeping failed'))
      .finally(() => {
        reg.running--;
        this.inFlight.delete(flightKey);
        // A slot came free: look for more work now rather than after a full poll interval.
        this.wake();
      });
    this.inFlight.set(flightKey, { promise, abort });
    return promise;
  }

  private async run(row: JobRow, reg: Registered, abort: AbortController): Promise<void> {
    const job = toJob(row);
    const { id } = row;
    let completed = false;
    // This delivery still holds the job: same worker and same claim (a worker may re-claim its own
    // hung job after the lease ran out; the attempt number tells both deliveries apart).
    const lease: JobLease = { id, workerId: this.workerId, attempt: row.attempts };
    const lost = () => {
      const err = new LeaseLostError(id);
      if (!abort.signal.aborted) abort.abort(err);
      return err;
    };
    const complete = async (jobs: JobRepository) => {
      if (completed) return;
      if (!(await jobs.complete(lease, this.nowIso()))) throw lost();
      await this.reschedule(jobs, row);
      completed = true;
    };
    const ctx: JobContext = {
      signal: abort.signal,
      workerId: this.workerId,
      heartbeat: async (ms = reg.leaseMs) => {
        const until = new Date(this.clock.now().getTime() + ms).toISOString();
        if (!(await this.jobs.extendLease(lease, until, this.nowIso()))) throw lost();
      },
      // If the caller's transaction rolls back, the handler throws and the flag is reset below.
      complete: (trx) => complete(this.jobsIn(trx)),
      transaction: async (fn) => {
        try {
          return await this.jobs.transaction(async (trx, jobs) => {
            // Touch the job row first: this checks the lease before any work, takes the row lock on
            // PostgreSQL (a concurrent re-claim skips it) and, on SQLite, makes the transaction a
            // writer from its first statement, so it waits for other processes instead of failing
            // with a stale snapshot.
            if (!(await jobs.touch(lease, this.nowIso()))) throw lost();
            const out = await fn(trx);
            await complete(jobs);
            return out;
          });
        } catch (err) {
          completed = false;
          throw err;
        }
      },
      storeTransaction: async (fn) => {
        try {
          return await this.store.transaction(async (repos) => {
            // As in `transaction`: check the lease (and lock the row) before any work.
            if (!(await repos.jobs.touch(lease, this.nowIso()))) throw lost();
            const out = await fn(repos);
            await complete(repos.jobs);
            return out;
          });
        } catch (err) {
          completed = false;
          throw err;
        }
      },
    };

    let failure: unknown = null;
    try {
      await reg.handler(job, ctx);
    } catch (err) {
      failure = err;
      completed = false;
    }

    if (failure === null) {
      if (completed) return;
      try {
        await complete(this.jobs);
      } catch (err) {
        if (err instanceof LeaseLostError) {
          this.log?.warn({ job: id, kind: row.kind }, 'job finished after its lease was taken over');
          return;
        }
        throw err;
      }
      return;
    }
    if (failure instanceof LeaseLostError) {
      this.log?.warn({ job: id, kind: row.kind }, 'job abandoned: lease lost');
      return;
    }
    await this.fail(row, failure, lease);
  }

  /** Records a failed delivery: back to `pending` after a backoff, or `failed` when out of attempts. */
  private async fail(row: JobRow, err: unknown, lease: JobLease): Promise<void> {
    const message = errorText(err);
    const now = this.clock.now();
    const nowIso = now.toISOString();
    const permanent = err instanceof PermanentJobError;
    const log = { job: row.id, kind: row.kind, attempt: row.attempts, err };
    if (permanent || row.attempts >= row.max_attempts) {
      await this.jobs.transaction(async (_trx, jobs) => {
        if (await jobs.fail(lease, message, nowIso)) await this.reschedule(jobs, row);
      });
      this.log?.error(log, 'job failed for good');
      return;
    }
    const runAt = new Date(now.getTime() + this.backoff(row.attempts)).toISOString();
    // Superseded when another pending job with the same key was enqueued meanwhile: it does the work.
    const outcome = await this.jobs.retry(lease, runAt, message, nowIso);
    if (outcome === 'pending') this.log?.warn({ ...log, retryAt: runAt }, 'job failed; will retry');
  }

  /** Exponential backoff with jitter: half of base·2^(n−1) fixed, half random, capped. */
  backoff(attempt: number): number {
    const exp = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
    return Math.round(exp / 2 + (exp / 2) * this.random());
  }

  /** For a recurring job that just ended, enqueues the next run (unless one is pending already). */
  private async reschedule(jobs: JobRepository, row: JobRow): Promise<void> {
    if (row.every_ms === null || row.every_ms === undefined) return;
    const everyMs = Number(row.every_ms);
    await this.insert(jobs, {
      kind: row.kind,
      payload: JSON.parse(row.payload),
      runAt: new Date(this.clock.now().getTime() + everyMs),
      key: row.dedupe_key,
      replace: false,
      maxAttempts: row.max_attempts,
      everyMs,
    });
  }

  /** Fails running jobs that used up their attempts and whose lease ran out; prunes old jobs. */
  private async maintain(): Promise<void> {
    const dead = await this.jobs.failExpiredOnLastAttempt(
      'lease expired on the last attempt (the worker died or hung)',
      this.nowIso(),
    );
    for (const row of dead) {
      this.log?.error({ job: row.id, kind: row.kind }, 'job failed for good: lease expired');
      if (row.every_ms !== null) await this.reschedule(this.jobs, row);
    }
    const now = this.clock.now().getTime();
    if (now - this.lastPruneAt >= 3600_000 || now < this.lastPruneAt) {
      this.lastPruneAt = now;
      const n = await this.prune();
      if (n > 0) this.log?.info({ deleted: n }, 'pruned finished jobs');
    }
  }
}

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    kind: row.kind,
    payload: JSON.parse(row.payload),
    status: row.status,
    key: row.dedupe_key,
    runAt: row.run_at,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    lastError: row.last_error,
    createdAt: row.created_at,
  };
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}
