import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import { type Database, isUniqueViolation } from '../store/db.ts';
import type { DB } from '../store/schema.ts';
import type { JobStatus, JobsTables } from '../store/tables/jobs.ts';

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

export type JobRow = Selectable<JobsTables['jobs']>;

export interface Job<P = unknown> {
  id: string;
  kind: string;
  payload: P;
  status: JobStatus;
  key: string | null;
  runAt: string;
  /** Number of this delivery (1 on the first run). */
  attempt: number;
  maxAttempts: number;
  lastError: string | null;
  createdAt: string;
}

export interface JobContext {
  /** Aborted when the lease is lost or the queue stops past its grace period: stop working. */
  readonly signal: AbortSignal;
  /** The worker id holding the lease. */
  readonly workerId: string;
  /**
   * Extends the lease to `ms` (default: the kind's lease) from now, for long work. Throws
   * `LeaseLostError` (and aborts `signal`) when another worker already took the job over.
   */
  heartbeat(ms?: number): Promise<void>;
  /**
   * Records the completion inside the caller's transaction, so the handler's effect and the
   * completion commit together. Throws `LeaseLostError` when this worker no longer holds the job;
   * let it propagate so the transaction rolls back.
   */
  complete(trx: Transaction<DB>): Promise<void>;
  /** Opens a transaction, runs `fn`, and completes the job in it (see `complete`). */
  transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T>;
}

export type JobHandler<P = any> = (job: Job<P>, ctx: JobContext) => Promise<void>;

export interface HandlerOptions {
  /** Jobs of this kind running at once in this process (default 1). */
  concurrency?: number;
  /** Lease per claim; another worker may take the job over once it runs out (default 5 min). */
  leaseMs?: number;
}

export interface EnqueueOptions {
  /** Not before this time (default: now). */
  runAt?: Date;
  /** Dedupe key: at most one pending job per (kind, key); a second enqueue returns the first. */
  key?: string;
  /** With `key`: move the pending job's run time and payload to this call's instead of keeping them. */
  replace?: boolean;
  /** Deliveries before the job is marked `failed` (default: the queue's, 5). */
  maxAttempts?: number;
  /** Enqueue inside the caller's transaction: the job exists only if that transaction commits. */
  trx?: Kysely<DB> | Transaction<DB>;
}

export interface EnqueueResult {
  id: string;
  /** False when a pending job with the same key already existed (and was returned or replaced). */
  created: boolean;
}

export interface QueueOptions {
  database: Database;
  clock: Clock;
  log?: Logger;
  /** Identifies this worker in `locked_by` (default: host, pid and a random suffix). */
  workerId?: string;
  /** How often an idle worker looks for due jobs (default 1000 ms). */
  pollIntervalMs?: number;
  /** Default lease for handlers that don't set one (default 5 min). */
  leaseMs?: number;
  /** Default deliveries per job (default 5). */
  maxAttempts?: number;
  /** First retry delay; doubles each attempt, with jitter (default 5 s). */
  backoffBaseMs?: number;
  /** Longest retry delay (default 1 h). */
  backoffMaxMs?: number;
  /** How long `stop()` waits for running handlers before abandoning them (default 10 s). */
  stopTimeoutMs?: number;
  /** Succeeded and superseded jobs are deleted this long after they finished (default 7 days). */
  retainSucceededMs?: number;
  /** Failed jobs are deleted this long after they finished (default 30 days). */
  retainFailedMs?: number;
  /** Random source in [0, 1) for the backoff jitter (tests pin it). */
  random?: () => number;
}

/** A handler that throws this fails the job at once, without further retries. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/** The worker no longer holds the job: its lease ran out and another worker claimed it, or it ended. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  constructor(readonly jobId: string) {
    super(`lease on job ${jobId} lost: another worker owns it now or it has ended`);
  }
}

export interface QueueStats {
  /** Jobs per kind and status in the database. */
  kinds: Record<string, Partial<Record<JobStatus, number>>>;
  /** Pending jobs whose run time has come (all kinds). */
  due: number;
  /** Jobs this process is running now. */
  runningHere: number;
  /** True between `start()` and `stop()`. */
  started: boolean;
}

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
  private readonly db: Kysely<DB>;
  private readonly dialect: Database['dialect'];
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
    this.db = options.database.db;
    this.dialect = options.database.dialect;
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
    const result = await this.insert(options.trx ?? this.db, {
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
  async cancel(kind: string, key: string, trx?: Kysely<DB> | Transaction<DB>): Promise<boolean> {
    const res = await (trx ?? this.db)
      .deleteFrom('jobs')
      .where('kind', '=', kind)
      .where('dedupe_key', '=', key)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
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
  private async claimAndDispatch(): Promise<void> {
    await this.maintain();
    for (const [kind, reg] of this.handlers) {
      const free = reg.concurrency - reg.running;
      if (free <= 0) continue;
      const rows = await this.claim(kind, free, reg.leaseMs);
      for (const row of rows) this.dispatch(row, reg);
    }
  }

  // ── internal API (tests, operators) ──────────────────────────────────────────────────────────

  /** Claims every due job once (whether or not the poller is started) and waits until they finish. */
  async tick(): Promise<number> {
    const before = new Set(this.inFlight.keys());
    await this.claimAndDispatch();
    const mine = [...this.inFlight.entries()].filter(([id]) => !before.has(id));
    await Promise.allSettled(mine.map(([, f]) => f.promise));
    return mine.length;
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
    const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  async find(kind: string, filter: { status?: JobStatus; key?: string } = {}): Promise<Job[]> {
    let q = this.db.selectFrom('jobs').selectAll().where('kind', '=', kind);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.key !== undefined) q = q.where('dedupe_key', '=', filter.key);
    const rows = await q.orderBy('created_at').orderBy('id').execute();
    return rows.map(toJob);
  }

  async stats(): Promise<QueueStats> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['kind', 'status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['kind', 'status'])
      .execute();
    const kinds: QueueStats['kinds'] = {};
    for (const r of rows) {
      const k = kinds[r.kind] ?? {};
      k[r.status] = Number(r.n);
      kinds[r.kind] = k;
    }
    const due = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .where('run_at', '<=', this.nowIso())
      .executeTakeFirstOrThrow();
    return { kinds, due: Number(due.n), runningHere: this.inFlight.size, started: this.started };
  }

  /** Deletes finished jobs past their retention; returns how many. Also runs from the poller. */
  async prune(): Promise<number> {
    const now = this.clock.now().getTime();
    const ok = await this.db
      .deleteFrom('jobs')
      .where('status', 'in', ['succeeded', 'superseded'])
      .where('finished_at', '<', new Date(now - this.retainSucceededMs).toISOString())
      .executeTakeFirst();
    const failed = await this.db
      .deleteFrom('jobs')
      .where('status', '=', 'failed')
      .where('finished_at', '<', new Date(now - this.retainFailedMs).toISOString())
      .executeTakeFirst();
    return Number(ok.numDeletedRows) + Number(failed.numDeletedRows);
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────────

  private nowIso(): string {
    return this.clock.now().toISOString();
  }

  private async insert(
    db: Kysely<DB> | Transaction<DB>,
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
      await db.insertInto('jobs').values(row).execute();
      return { id, created: true };
    }
    // ON CONFLICT on the partial unique index (not a caught error): on PostgreSQL a failed insert
    // would abort the caller's transaction.
    for (let i = 0; i < 5; i++) {
      const inserted = await db
        .insertInto('jobs')
        .values(row)
        .onConflict((oc) => {
          const target = oc
            .columns(['kind', 'dedupe_key'])
            // A literal, not a parameter: SQLite matches the partial index's predicate textually.
            .where('status', '=', sql.lit('pending'));
          return j.replace
            ? target.doUpdateSet({ payload, run_at: runAt, max_attempts: j.maxAttempts, updated_at: now })
            : target.doNothing();
        })
        .returning('id')
        .executeTakeFirst();
      if (inserted) return { id: inserted.id, created: inserted.id === id };
      const existing = await db
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', j.kind)
        .where('dedupe_key', '=', j.key)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (existing) return { id: existing.id, created: false };
      // The pending job was claimed between both statements: try again.
    }
    throw new Error(`could not enqueue ${j.kind} with key ${j.key}`);
  }

  private async ensureSchedule(kind: string, everyMs: number, payload: unknown): Promise<void> {
    await this.insert(this.db, {
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
  private async claim(kind: string, limit: number, leaseMs: number): Promise<JobRow[]> {
    const now = this.clock.now();
    const nowIso = now.toISOString();
    const set = {
      status: 'running' as const,
      locked_by: this.workerId,
      locked_until: new Date(now.getTime() + leaseMs).toISOString(),
      updated_at: nowIso,
      started_at: nowIso,
    };
    const due = (eb: any) =>
      eb.or([
        eb.and([eb('status', '=', 'pending'), eb('run_at', '<=', nowIso)]),
        // A running job whose lease ran out: its worker died (or hung). Deliver it again.
        eb.and([
          eb('status', '=', 'running'),
          eb('locked_until', '<=', nowIso),
          eb('attempts', '<', eb.ref('max_attempts')),
        ]),
      ]);
    if (this.dialect === 'postgres') {
      return this.db.transaction().execute(async (trx) => {
        const ids = await trx
          .selectFrom('jobs')
          .select('id')
          .where('kind', '=', kind)
          .where(due)
          .orderBy('run_at')
          .orderBy('id')
          .limit(limit)
          .forUpdate()
          .skipLocked()
          .execute();
        if (ids.length === 0) return [];
        return trx
          .updateTable('jobs')
          .set((eb) => ({ ...set, attempts: eb('attempts', '+', 1) }))
          .where(
            'id',
            'in',
            ids.map((r) => r.id),
          )
          .returningAll()
          .execute();
      });
    }
    // SQLite: one statement, so the choice and the claim happen under the same write lock, even
    // across processes sharing the file.
    return this.db
      .updateTable('jobs')
      .set((eb) => ({ ...set, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('jobs')
          .select('id')
          .where('kind', '=', kind)
          .where(due)
          .orderBy('run_at')
          .orderBy('id')
          .limit(limit),
      )
      .returningAll()
      .execute();
  }

  private dispatch(row: JobRow, reg: Registered): void {
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
  }

  private async run(row: JobRow, reg: Registered, abort: AbortController): Promise<void> {
    const job = toJob(row);
    const { id } = row;
    let completed = false;
    // This delivery still holds the job: same worker and same claim (a worker may re-claim its own
    // hung job after the lease ran out; the attempt number tells both deliveries apart).
    const owned = (qb: any) =>
      qb
        .where('id', '=', id)
        .where('status', '=', 'running')
        .where('locked_by', '=', this.workerId)
        .where('attempts', '=', row.attempts);
    const lost = () => {
      const err = new LeaseLostError(id);
      if (!abort.signal.aborted) abort.abort(err);
      return err;
    };
    const complete = async (trx: Kysely<DB> | Transaction<DB>) => {
      if (completed) return;
      const now = this.nowIso();
      const res = await owned(
        trx.updateTable('jobs').set({
          status: 'succeeded',
          locked_by: null,
          locked_until: null,
          last_error: null,
          updated_at: now,
          finished_at: now,
        }),
      ).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw lost();
      await this.reschedule(trx, row);
      completed = true;
    };
    const ctx: JobContext = {
      signal: abort.signal,
      workerId: this.workerId,
      heartbeat: async (ms = reg.leaseMs) => {
        const until = new Date(this.clock.now().getTime() + ms).toISOString();
        const res = await owned(
          this.db.updateTable('jobs').set({ locked_until: until, updated_at: this.nowIso() }),
        ).executeTakeFirst();
        if (Number(res.numUpdatedRows) !== 1) throw lost();
      },
      // If the caller's transaction rolls back, the handler throws and the flag is reset below.
      complete: (trx) => complete(trx),
      transaction: async (fn) => {
        try {
          return await this.db.transaction().execute(async (trx) => {
            // Touch the job row first: this checks the lease before any work, takes the row lock on
            // PostgreSQL (a concurrent re-claim skips it) and, on SQLite, makes the transaction a
            // writer from its first statement, so it waits for other processes instead of failing
            // with a stale snapshot.
            const res = await owned(
              trx.updateTable('jobs').set({ updated_at: this.nowIso() }),
            ).executeTakeFirst();
            if (Number(res.numUpdatedRows) !== 1) throw lost();
            const out = await fn(trx);
            await complete(trx);
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
        await complete(this.db);
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
    await this.fail(row, failure, owned);
  }

  /** Records a failed delivery: back to `pending` after a backoff, or `failed` when out of attempts. */
  private async fail(row: JobRow, err: unknown, owned: (qb: any) => any): Promise<void> {
    const message = errorText(err);
    const now = this.clock.now();
    const nowIso = now.toISOString();
    const permanent = err instanceof PermanentJobError;
    const log = { job: row.id, kind: row.kind, attempt: row.attempts, err };
    if (permanent || row.attempts >= row.max_attempts) {
      await this.db.transaction().execute(async (trx) => {
        const res = await owned(
          trx.updateTable('jobs').set({
            status: 'failed',
            locked_by: null,
            locked_until: null,
            last_error: message,
            updated_at: nowIso,
            finished_at: nowIso,
          }),
        ).executeTakeFirst();
        if (Number(res.numUpdatedRows) === 1) await this.reschedule(trx, row);
      });
      this.log?.error(log, 'job failed for good');
      return;
    }
    const runAt = new Date(now.getTime() + this.backoff(row.attempts)).toISOString();
    try {
      await owned(
        this.db.updateTable('jobs').set({
          status: 'pending',
          run_at: runAt,
          locked_by: null,
          locked_until: null,
          last_error: message,
          updated_at: nowIso,
        }),
      ).execute();
      this.log?.warn({ ...log, retryAt: runAt }, 'job failed; will retry');
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      // Another pending job with the same key was enqueued meanwhile: it does this job's work.
      await owned(
        this.db.updateTable('jobs').set({
          status: 'superseded',
          locked_by: null,
          locked_until: null,
          last_error: message,
          updated_at: nowIso,
          finished_at: nowIso,
        }),
      ).execute();
    }
  }

  /** Exponential backoff with jitter: half of base·2^(n−1) fixed, half random, capped. */
  backoff(attempt: number): number {
    const exp = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
    return Math.round(exp / 2 + (exp / 2) * this.random());
  }

  /** For a recurring job that just ended, enqueues the next run (unless one is pending already). */
  private async reschedule(trx: Kysely<DB> | Transaction<DB>, row: JobRow): Promise<void> {
    if (row.every_ms === null || row.every_ms === undefined) return;
    const everyMs = Number(row.every_ms);
    await this.insert(trx, {
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
    const nowIso = this.nowIso();
    const dead = await this.db
      .updateTable('jobs')
      .set({
        status: 'failed',
        locked_by: null,
        locked_until: null,
        last_error: 'lease expired on the last attempt (the worker died or hung)',
        updated_at: nowIso,
        finished_at: nowIso,
      })
      .where('status', '=', 'running')
      .where('locked_until', '<=', nowIso)
      .where((eb) => eb('attempts', '>=', eb.ref('max_attempts')))
      .returningAll()
      .execute();
    for (const row of dead) {
      this.log?.error({ job: row.id, kind: row.kind }, 'job failed for good: lease expired');
      if (row.every_ms !== null) await this.reschedule(this.db, row);
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
