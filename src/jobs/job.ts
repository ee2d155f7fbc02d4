import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Database } from '../store/db.ts';
import type { Executor, Repositories } from '../store/repos/index.ts';
import type { JobStatus } from '../store/tables/jobs.ts';

/** The job queue's vocabulary: what a handler gets, what producers pass, and its errors (see queue.ts). */

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
  complete(trx: InTransaction): Promise<void>;
  /** Opens a transaction, runs `fn`, and completes the job in it (see `complete`). */
  transaction<T>(fn: (trx: Executor) => Promise<T>): Promise<T>;
  /**
   * `transaction` for domain code on repositories: runs `fn` inside `store.transaction` and
   * completes the job in the same transaction.
   */
  storeTransaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T>;
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
  /**
   * Enqueue inside the caller's transaction (a Kysely transaction, or the repositories a
   * `store.transaction` hands out): the job exists only if that transaction commits.
   */
  trx?: InTransaction;
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

/** A caller's transaction: a Kysely transaction (or the database), or the repositories of a `store.transaction`. */
export type InTransaction = Executor | Pick<Repositories, 'jobs'>;
