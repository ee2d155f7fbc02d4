import { type Selectable, sql, type Transaction } from 'kysely';
import { isUniqueViolation } from '../../db.ts';
import type { DB } from '../../schema.ts';
import type { JobStatus, JobsTables } from '../../tables/jobs.ts';
import type { Executor, RepoContext } from '../index.ts';

export type JobRow = Selectable<JobsTables['jobs']>;

/** One delivery of a job: the worker holding it and the attempt it claimed (see `JobQueue`). */
export interface JobLease {
  id: string;
  workerId: string;
  attempt: number;
}

/** How a pending job with the same (kind, key) is treated by `insertKeyed`. */
export type OnPendingDuplicate =
  | { keep: true }
  | { keep: false; payload: string; runAt: string; maxAttempts: number; updatedAt: string };

/**
 * The durable job queue's rows. The queue (src/jobs/queue.ts) decides what to run, when and how
 * often; this repository holds the statements, the claim's dialect strategy (SKIP LOCKED on
 * PostgreSQL, one statement under SQLite's single writer) and the lease checks: every write to a
 * claimed job names its `JobLease`, and returns false when the lease is no longer this delivery's.
 */
export class JobRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** This repository on another executor: a caller's transaction (enqueue in it, complete in it). */
  on(exec: Executor): JobRepository {
    if (exec === this.ctx.exec) return this;
    return new JobRepository({
      exec,
      database: this.ctx.database,
      inTransaction: exec !== this.ctx.database.db,
    });
  }

  /**
   * Runs `fn` in a new transaction with the raw transaction (for a job handler's own writes, which
   * must commit with the completion) and this repository bound to it.
   */
  transaction<T>(fn: (trx: Transaction<DB>, jobs: JobRepository) => Promise<T>): Promise<T> {
    return this.ctx.database.db
      .transaction()
      .execute((trx) =>
        fn(trx, new JobRepository({ exec: trx, database: this.ctx.database, inTransaction: true })),
      );
  }

  // ── producing ────────────────────────────────────────────────────────────────────────────────

  /** Inserts a job without a dedupe key. */
  async insert(row: JobRow): Promise<void> {
    await this.ctx.exec.insertInto('jobs').values(row).execute();
  }

  /**
   * Inserts a job with a dedupe key unless a pending job of the same (kind, key) exists; then
   * returns that one (moved to the new payload and run time when `onDuplicate.keep` is false).
   * `created` is true when `row` was inserted. Never fails on the duplicate (ON CONFLICT, not a caught
   * error: on PostgreSQL a failed insert would abort the caller's transaction).
   */
  async insertKeyed(row: JobRow, onDuplicate: OnPendingDuplicate): Promise<{ id: string; created: boolean }> {
    const key = row.dedupe_key;
    if (key === null) throw new Error('insertKeyed needs a dedupe key');
    for (let i = 0; i < 5; i++) {
      const inserted = await this.ctx.exec
        .insertInto('jobs')
        .values(row)
        .onConflict((oc) => {
          const target = oc
            .columns(['kind', 'dedupe_key'])
            // A literal, not a parameter: SQLite matches the partial index's predicate textually.
            .where('status', '=', sql.lit('pending'));
          return onDuplicate.keep
            ? target.doNothing()
            : target.doUpdateSet({
                payload: onDuplicate.payload,
                run_at: onDuplicate.runAt,
                max_attempts: onDuplicate.maxAttempts,
                updated_at: onDuplicate.updatedAt,
              });
        })
        .returning('id')
        .executeTakeFirst();
      if (inserted) return { id: inserted.id, created: inserted.id === row.id };
      const existing = await this.ctx.exec
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', row.kind)
        .where('dedupe_key', '=', key)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (existing) return { id: existing.id, created: false };
      // The pending job was claimed between both statements: try again.
    }
    throw new Error(`could not enqueue ${row.kind} with key ${key}`);
  }

  /** Removes the pending job of (kind, key); true when there was one. */
  async deletePending(kind: string, key: string): Promise<boolean> {
    const res = await this.ctx.exec
      .deleteFrom('jobs')
      .where('kind', '=', kind)
      .where('dedupe_key', '=', key)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  // ── reading ──────────────────────────────────────────────────────────────────────────────────

  /** Whether a job of (kind, key) is running now (under a lease, possibly an expired one). */
  async isRunning(kind: string, key: string): Promise<boolean> {
    const row = await this.ctx.exec
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', kind)
      .where('dedupe_key', '=', key)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return row !== undefined;
  }

  async byId(id: string): Promise<JobRow | null> {
    const row = await this.ctx.exec.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ?? null;
  }

  /** Jobs of a kind, optionally of one status and dedupe key; oldest first. */
  find(kind: string, filter: { status?: JobStatus; key?: string } = {}): Promise<JobRow[]> {
    let q = this.ctx.exec.selectFrom('jobs').selectAll().where('kind', '=', kind);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.key !== undefined) q = q.where('dedupe_key', '=', filter.key);
    return q.orderBy('created_at').orderBy('id').execute();
  }

  /** Number of jobs per (kind, status). */
  async countByKindAndStatus(): Promise<Array<{ kind: string; status: JobStatus; n: number }>> {
    const rows = await this.ctx.exec
      .selectFrom('jobs')
      .select(['kind', 'status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['kind', 'status'])
      .execute();
    return rows.map((r) => ({ kind: r.kind, status: r.status, n: Number(r.n) }));
  }

  /** Pending jobs due at `now` (every kind). */
  async countDue(now: string): Promise<number> {
    const due = await this.ctx.exec
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .where('run_at', '<=', now)
      .executeTakeFirstOrThrow();
    return Number(due.n);
  }

  /** Deletes jobs of these (finished) statuses that finished before `before`; returns how many. */
  async deleteFinishedBefore(statuses: readonly JobStatus[], before: string): Promise<number> {
    const res = await this.ctx.exec
      .deleteFrom('jobs')
      .where('status', 'in', statuses as JobStatus[])
      .where('finished_at', '<', before)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  // ── claiming ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Atomically moves up to `limit` due jobs of `kind` to `running` under `workerId`'s lease until
   * `lockedUntil`, counting an attempt: pending jobs whose run time has come, and running jobs whose
   * lease ran out with attempts left (their worker died or hung). Oldest run time first. Two
   * claimers never get the same job.
   */
  async claim(
    kind: string,
    limit: number,
    workerId: string,
    now: string,
    lockedUntil: string,
  ): Promise<JobRow[]> {
    const set = {
      status: 'running' as const,
      locked_by: workerId,
      locked_until: lockedUntil,
      updated_at: now,
      started_at: now,
    };
    const due = (eb: any) =>
      eb.or([
        eb.and([eb('status', '=', 'pending'), eb('run_at', '<=', now)]),
        eb.and([
          eb('status', '=', 'running'),
          eb('locked_until', '<=', now),
          eb('attempts', '<', eb.ref('max_attempts')),
        ]),
      ]);
    if (this.ctx.database.dialect === 'postgres') {
      const run = async (trx: Executor) => {
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
      };
      return this.ctx.inTransaction ? run(this.ctx.exec) : this.ctx.database.db.transaction().execute(run);
    }
    // SQLite: one statement, so the choice and the claim happen under the same write lock, even
    // across processes sharing the file.
    return this.ctx.exec
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

  // ── a delivery's writes (each checks the lease) ──────────────────────────────────────────────

  /** The rows this delivery still holds: same worker, same claim, still running. */
  private owned<Q extends { where: (...args: any[]) => Q }>(qb: Q, lease: JobLease): Q {
    return qb
      .where('id', '=', lease.id)
      .where('status', '=', 'running')
      .where('locked_by', '=', lease.workerId)
      .where('attempts', '=', lease.attempt);
  }

  private async updateOwned(lease: JobLease, set: Partial<JobRow>): Promise<boolean> {
    const res = await this.owned(this.ctx.exec.updateTable('jobs').set(set), lease).executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Marks the job succeeded; false when the lease is lost. */
  complete(lease: JobLease, now: string): Promise<boolean> {
    return this.updateOwned(lease, {
      status: 'succeeded',
      locked_by: null,
      locked_until: null,
      last_error: null,
      updated_at: now,
      finished_at: now,
    });
  }

  /** Extends the lease to `until`; false when it is lost. */
  extendLease(lease: JobLease, until: string, now: string): Promise<boolean> {
    return this.updateOwned(lease, { locked_until: until, updated_at: now });
  }

  /**
   * Touches the row (checks the lease; takes the row lock on PostgreSQL and makes a SQLite
   * transaction a writer from its first statement). False when the lease is lost.
   */
  touch(lease: JobLease, now: string): Promise<boolean> {
    return this.updateOwned(lease, { updated_at: now });
  }

  /** Marks the job failed for good; false when the lease is lost. */
  fail(lease: JobLease, error: string, now: string): Promise<boolean> {
    return this.updateOwned(lease, {
      status: 'failed',
      locked_by: null,
      locked_until: null,
      last_error: error,
      updated_at: now,
      finished_at: now,
    });
  }

  /**
   * Puts the job back to `pending` at `runAt` for another attempt. When another pending job with the
   * same key was enqueued meanwhile (the partial unique index refuses a second), this one is marked
   * `superseded` instead: the other does its work. Nothing happens when the lease is lost.
   */
  async retry(lease: JobLease, runAt: string, error: string, now: string): Promise<'pending' | 'superseded'> {
    try {
      await this.updateOwned(lease, {
        status: 'pending',
        run_at: runAt,
        locked_by: null,
        locked_until: null,
        last_error: error,
        updated_at: now,
      });
      return 'pending';
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      await this.updateOwned(lease, {
        status: 'superseded',
        locked_by: null,
        locked_until: null,
        last_error: error,
        updated_at: now,
        finished_at: now,
      });
      return 'superseded';
    }
  }

  /** Fails running jobs whose lease ran out on their last attempt; returns them. */
  failExpiredOnLastAttempt(error: string, now: string): Promise<JobRow[]> {
    return this.ctx.exec
      .updateTable('jobs')
      .set({
        status: 'failed',
        locked_by: null,
        locked_until: null,
        last_error: error,
        updated_at: now,
        finished_at: now,
      })
      .where('status', '=', 'running')
      .where('locked_until', '<=', now)
      .where((eb) => eb('attempts', '>=', eb.ref('max_attempts')))
      .returningAll()
      .execute();
  }
}
