import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import {
  type JobContext,
  type JobHandler,
  JobQueue,
  LeaseLostError,
  PermanentJobError,
  type QueueOptions,
} from '../../src/jobs/queue.ts';
import { type Database, migrate, openDatabase } from '../../src/store/db.ts';
import { Store } from '../../src/store/repos/index.ts';
import { type DbKind, describeEachDb, PG_URL } from '../helpers/server.ts';
import { createEffectTables, effectHandler } from './fixtures/effect-handler.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const T0 = Date.parse('2026-03-01T12:00:00.000Z');

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** One database per test; `open()` again gives another connection, like a second process. */
class TestDb {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-jobs-'));
  readonly schema: string | undefined;
  readonly url: string;
  private readonly opened: Database[] = [];

  constructor(readonly kind: DbKind) {
    this.schema = kind === 'postgres' ? `t_${randomBytes(6).toString('hex')}` : undefined;
    this.url = kind === 'postgres' ? PG_URL : `sqlite:${path.join(this.dir, 'spaces.db')}`;
  }

  async open(): Promise<Database> {
    const database = await openDatabase(this.url, { schema: this.schema });
    this.opened.push(database);
    if (this.opened.length === 1) await migrate(database);
    return database;
  }

  async close(): Promise<void> {
    for (const d of this.opened) await d.close();
    if (this.schema) {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${this.schema} cascade`);
      await c.end();
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

describeEachDb('job queue', (kind) => {
  let tdb: TestDb;
  let database: Database;
  let clock: ManualClock;
  const queues: JobQueue[] = [];

  function queue(opts: Partial<QueueOptions> = {}, db: Database = database): JobQueue {
    const q = new JobQueue({ database: db, clock, leaseMs: 200, backoffBaseMs: 1000, ...opts });
    queues.push(q);
    return q;
  }

  beforeEach(async () => {
    clock = new ManualClock(T0);
    tdb = new TestDb(kind);
    database = await tdb.open();
  });

  afterEach(async () => {
    for (const q of queues.splice(0)) await q.stop(100);
    await tdb.close();
  });

  it('enqueues, claims, runs and completes a job', async () => {
    const q = queue({ workerId: 'w1' });
    const seen: Array<{ payload: unknown; attempt: number }> = [];
    q.registerHandler('greet', async (job) => {
      seen.push({ payload: job.payload, attempt: job.attempt });
    });
    const { id, created } = await q.enqueue('greet', { name: 'Ada', n: [1, 2] });
    expect(created).toBe(true);
    expect(id).toMatch(/^job_/);
    await q.enqueue('other-kind', {});

    expect((await q.get(id))?.status).toBe('pending');
    expect(await q.stats()).toMatchObject({ due: 2, runningHere: 0, started: false });

    expect(await q.tick()).toBe(1);
    expect(seen).toEqual([{ payload: { name: 'Ada', n: [1, 2] }, attempt: 1 }]);
    const row = await database.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'succeeded', attempts: 1, locked_by: null, locked_until: null });
    expect(row.finished_at).toBe(new Date(T0).toISOString());

    // A job without a handler here stays pending; a completed job never runs again.
    expect(await q.tick()).toBe(0);
    expect(seen).toHaveLength(1);
    const stats = await q.stats();
    expect(stats.kinds).toEqual({ greet: { succeeded: 1 }, 'other-kind': { pending: 1 } });
    expect(stats.due).toBe(1);
  });

  it('refuses bad arguments', async () => {
    const q = queue();
    await expect(q.enqueue('', {})).rejects.toThrow(/bad job kind/);
    await expect(q.enqueue('Has Space', {})).rejects.toThrow(/bad job kind/);
    await expect(q.enqueue('ok', {}, { maxAttempts: 0 })).rejects.toThrow(/maxAttempts/);
    await expect(q.enqueue('ok', {}, { maxAttempts: 1.5 })).rejects.toThrow(/maxAttempts/);
    await expect(q.enqueue('ok', {}, { runAt: new Date(Number.NaN) })).rejects.toThrow(/runAt/);
    await expect(q.enqueue('ok', {}, { key: '' })).rejects.toThrow(/dedupe key/);
    expect(() => q.schedule('ok', 0)).toThrow(/bad interval/);
    q.registerHandler('ok', async () => {});
    expect(() => q.registerHandler('ok', async () => {})).toThrow(/already registered/);
    expect(() => q.registerHandler('other', async () => {}, { concurrency: 0 })).toThrow(/concurrency/);
    expect(() => q.registerHandler('other', async () => {}, { leaseMs: -1 })).toThrow(/lease/);
    expect(await q.find('ok')).toEqual([]);
  });

  it('respects runAt on the injected clock', async () => {
    const q = queue();
    let runs = 0;
    q.registerHandler('later', async () => {
      runs++;
    });
    await q.enqueue('later', {}, { runAt: new Date(T0 + 60_000) });
    expect(await q.tick()).toBe(0);
    clock.advance(59_999);
    expect(await q.tick()).toBe(0);
    expect(runs).toBe(0);
    clock.advance(1);
    expect(await q.tick()).toBe(1);
    expect(runs).toBe(1);
  });

  it('runs due jobs oldest run time first and honours per-kind concurrency', async () => {
    const q = queue();
    const order: string[] = [];
    let running = 0;
    let maxRunning = 0;
    q.registerHandler(
      'ordered',
      async (job) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 5));
        order.push(job.payload.name);
        running--;
      },
      { concurrency: 2 },
    );
    await q.enqueue('ordered', { name: 'c' }, { runAt: new Date(T0 - 1000) });
    await q.enqueue('ordered', { name: 'a' }, { runAt: new Date(T0 - 3000) });
    await q.enqueue('ordered', { name: 'b' }, { runAt: new Date(T0 - 2000) });
    expect(await q.tick()).toBe(2);
    expect(order.sort()).toEqual(['a', 'b']);
    expect(await q.tick()).toBe(1);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(maxRunning).toBe(2);
  });

  it('retries with exponential backoff and jitter, then fails keeping the last error', async () => {
    const q = queue({ random: () => 0.5 });
    let calls = 0;
    q.registerHandler('flaky', async () => {
      calls++;
      throw new Error(`boom ${calls}`);
    });
    const { id } = await q.enqueue('flaky', {}, { maxAttempts: 3 });

    expect(await q.tick()).toBe(1);
    let job = await q.get(id);
    // attempt 1: base 1000 → between 500 and 1000; with the jitter pinned at 0.5: 750.
    expect(job).toMatchObject({ status: 'pending', attempt: 1, lastError: 'Error: boom 1' });
    expect(job?.runAt).toBe(new Date(T0 + 750).toISOString());
    clock.advance(749);
    expect(await q.tick()).toBe(0);
    clock.advance(1);
    expect(await q.tick()).toBe(1);
    job = await q.get(id);
    // attempt 2: 2000 → 1500.
    expect(job).toMatchObject({ status: 'pending', attempt: 2, lastError: 'Error: boom 2' });
    expect(job?.runAt).toBe(new Date(T0 + 750 + 1500).toISOString());
    clock.advance(1500);
    expect(await q.tick()).toBe(1);
    job = await q.get(id);
    expect(job).toMatchObject({ status: 'failed', attempt: 3, lastError: 'Error: boom 3' });
    clock.advance(3600_000);
    expect(await q.tick()).toBe(0);
    expect(calls).toBe(3);
  });

  it('bounds the backoff: within [half, full] of base·2^(n−1), capped', () => {
    const lo = queue({ random: () => 0, backoffBaseMs: 1000, backoffMaxMs: 10_000 });
    const hi = queue({ random: () => 0.999999, backoffBaseMs: 1000, backoffMaxMs: 10_000 });
    expect([1, 2, 3, 4, 5, 10].map((n) => lo.backoff(n))).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    expect([1, 2, 3, 4, 5, 10].map((n) => hi.backoff(n))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  it('fails at once on a PermanentJobError', async () => {
    const q = queue();
    q.registerHandler('bad', async () => {
      throw new PermanentJobError('payload names no space');
    });
    const { id } = await q.enqueue('bad', {}, { maxAttempts: 5 });
    await q.tick();
    expect(await q.get(id)).toMatchObject({
      status: 'failed',
      attempt: 1,
      lastError: 'PermanentJobError: payload names no space',
    });
  });

  it('lets a second worker re-claim a job whose lease expired; the first cannot complete it', async () => {
    await createEffectTables(database.db as unknown as Kysely<any>);
    const database2 = await tdb.open();
    const a = queue({ workerId: 'A' });
    const b = queue({ workerId: 'B' }, database2);
    const aStarted = deferred();
    const aRelease = deferred();
    const bStarted = deferred();
    const bRelease = deferred();
    let aCtx: JobContext | null = null;
    let aError: unknown = null;
    a.registerHandler('effect', async (job, ctx) => {
      aCtx = ctx;
      aStarted.resolve();
      await aRelease.promise;
      try {
        await effectHandler(database.db as unknown as Kysely<any>)(job, ctx);
      } catch (err) {
        aError = err;
        throw err;
      }
    });
    b.registerHandler('effect', async (job, ctx) => {
      bStarted.resolve();
      await bRelease.promise;
      await effectHandler(database2.db as unknown as Kysely<any>)(job, ctx);
    });
    const { id } = await a.enqueue('effect', { target: 'space_1' });

    const aTick = a.tick();
    await aStarted.promise;
    expect(await b.tick()).toBe(0);
    const held = await database2.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(held).toMatchObject({ status: 'running', locked_by: 'A', attempts: 1 });
    expect(held.locked_until).toBe(new Date(T0 + 200).toISOString());

    clock.advance(199);
    expect(await b.tick()).toBe(0);
    clock.advance(1);
    const bTick = b.tick();
    await bStarted.promise;
    expect(await b.get(id)).toMatchObject({ status: 'running', attempt: 2 });

    // A wakes up while B runs the job: its transaction can't complete the job, so its effect rolls back.
    aRelease.resolve();
    await aTick;
    expect(aError).toBeInstanceOf(LeaseLostError);
    expect(aCtx!.signal.aborted).toBe(true);
    expect(aCtx!.signal.reason).toBeInstanceOf(LeaseLostError);
    await expect(aCtx!.heartbeat()).rejects.toBeInstanceOf(LeaseLostError);
    const effects = () =>
      (database.db as unknown as Kysely<any>).selectFrom('job_test_effects').selectAll().execute();
    expect(await effects()).toEqual([]);
    const during = await database.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(during).toMatchObject({ status: 'running', locked_by: 'B', attempts: 2 });

    bRelease.resolve();
    expect(await bTick).toBe(1);
    expect(await effects()).toEqual([{ target: 'space_1', job_id: id, worker: 'B' }]);
    expect(await a.get(id)).toMatchObject({ status: 'succeeded', attempt: 2 });
  });

  it('tells two deliveries apart when a worker re-claims its own hung job', async () => {
    await createEffectTables(database.db as unknown as Kysely<any>);
    const q = queue({ workerId: 'same' });
    const gates = [0, 1, 2].map(() => ({ started: deferred(), release: deferred() }));
    const errors: unknown[] = [];
    q.registerHandler(
      'effect',
      async (job, ctx) => {
        const gate = gates[job.attempt]!;
        gate.started.resolve();
        await gate.release.promise;
        try {
          await effectHandler(database.db as unknown as Kysely<any>)(job, ctx);
        } catch (err) {
          errors[job.attempt] = err;
          throw err;
        }
      },
      { concurrency: 2 },
    );
    const { id } = await q.enqueue('effect', { target: 'space_9' });
    const first = q.tick();
    await gates[1]!.started.promise;
    clock.advance(200);
    const second = q.tick();
    await gates[2]!.started.promise;
    expect((await q.stats()).runningHere).toBe(2);

    // The first (stale) delivery finishes while the second runs: it must not complete the job.
    gates[1]!.release.resolve();
    await first;
    expect(errors[1]).toBeInstanceOf(LeaseLostError);
    const effects = () =>
      (database.db as unknown as Kysely<any>).selectFrom('job_test_effects').selectAll().execute();
    expect(await effects()).toEqual([]);
    expect(await q.get(id)).toMatchObject({ status: 'running', attempt: 2 });

    gates[2]!.release.resolve();
    await second;
    expect(errors[2]).toBeUndefined();
    expect(await effects()).toEqual([{ target: 'space_9', job_id: id, worker: 'same' }]);
    expect(await q.get(id)).toMatchObject({ status: 'succeeded', attempt: 2 });
  });

  it('keeps a lease alive with heartbeats', async () => {
    const database2 = await tdb.open();
    const a = queue({ workerId: 'A' });
    const b = queue({ workerId: 'B' }, database2);
    const beat = deferred();
    const release = deferred();
    const bRuns: string[] = [];
    a.registerHandler('long', async (_job, ctx) => {
      await beat.promise;
      await ctx.heartbeat();
      await release.promise;
    });
    b.registerHandler('long', async (job) => {
      bRuns.push(job.id);
    });
    const { id } = await a.enqueue('long', {});
    const aTick = a.tick();
    clock.advance(150);
    beat.resolve();
    // Wait until the heartbeat is stored (lease now 150 + 200).
    for (let i = 0; i < 200; i++) {
      const row = await database2.db
        .selectFrom('jobs')
        .select('locked_until')
        .where('id', '=', id)
        .executeTakeFirst();
      if (row?.locked_until === new Date(T0 + 350).toISOString()) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    clock.advance(150); // past the first lease, inside the extended one
    expect(await b.tick()).toBe(0);
    release.resolve();
    await aTick;
    expect(await a.get(id)).toMatchObject({ status: 'succeeded', attempt: 1 });
    expect(bRuns).toEqual([]);
  });

  it('fails a job whose lease ran out on its last attempt instead of running it again', async () => {
    const database2 = await tdb.open();
    const a = queue({ workerId: 'A' });
    const b = queue({ workerId: 'B' }, database2);
    const started = deferred();
    const release = deferred();
    a.registerHandler('once', async () => {
      started.resolve();
      await release.promise;
    });
    let bRuns = 0;
    b.registerHandler('once', async () => {
      bRuns++;
    });
    const { id } = await a.enqueue('once', {}, { maxAttempts: 1 });
    const aTick = a.tick();
    await started.promise;
    clock.advance(201);
    expect(await b.tick()).toBe(0);
    expect(bRuns).toBe(0);
    expect(await b.get(id)).toMatchObject({
      status: 'failed',
      lastError: 'lease expired on the last attempt (the worker died or hung)',
    });
    release.resolve();
    await aTick;
    expect((await b.get(id))?.status).toBe('failed');
  });

  it('dedupes pending jobs by key, per kind; replace moves the pending one; cancel removes it', async () => {
    const q = queue();
    const first = await q.enqueue('expire', { v: 1 }, { key: 'space_1', runAt: new Date(T0 + 10_000) });
    const again = await q.enqueue('expire', { v: 2 }, { key: 'space_1', runAt: new Date(T0 + 5000) });
    expect(again).toEqual({ id: first.id, created: false });
    expect(await q.get(first.id)).toMatchObject({
      payload: { v: 1 },
      runAt: new Date(T0 + 10_000).toISOString(),
    });

    const replaced = await q.enqueue(
      'expire',
      { v: 3 },
      { key: 'space_1', runAt: new Date(T0 + 20_000), replace: true },
    );
    expect(replaced).toEqual({ id: first.id, created: false });
    expect(await q.get(first.id)).toMatchObject({
      payload: { v: 3 },
      runAt: new Date(T0 + 20_000).toISOString(),
    });

    const otherKind = await q.enqueue('purge', {}, { key: 'space_1' });
    const otherKey = await q.enqueue('expire', {}, { key: 'space_2' });
    const noKey1 = await q.enqueue('expire', {});
    const noKey2 = await q.enqueue('expire', {});
    expect([otherKind.created, otherKey.created, noKey1.created, noKey2.created]).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect((await q.find('expire', { key: 'space_1' })).map((j) => j.id)).toEqual([first.id]);

    // Once the keyed job runs, the key is free for the next pending one.
    const started = deferred();
    const release = deferred();
    q.registerHandler(
      'expire',
      async (job) => {
        if (job.key === 'space_1') {
          started.resolve();
          await release.promise;
        }
      },
      { concurrency: 10 },
    );
    clock.advance(20_000);
    const tick = q.tick();
    await started.promise;
    const next = await q.enqueue('expire', { v: 4 }, { key: 'space_1' });
    expect(next.created).toBe(true);
    release.resolve();
    await tick;
    expect(await q.cancel('expire', 'space_1')).toBe(true);
    expect(await q.cancel('expire', 'space_1')).toBe(false);
    expect((await q.find('expire', { key: 'space_1' })).map((j) => j.status)).toEqual(['succeeded']);
  });

  it('marks a retry superseded when a pending job with its key was enqueued meanwhile', async () => {
    const q = queue();
    const started = deferred();
    const release = deferred();
    let calls = 0;
    q.registerHandler('sync', async () => {
      calls++;
      if (calls === 1) {
        started.resolve();
        await release.promise;
        throw new Error('first run fails');
      }
    });
    const first = await q.enqueue('sync', {}, { key: 'k' });
    const tick = q.tick();
    await started.promise;
    const second = await q.enqueue('sync', {}, { key: 'k' });
    expect(second.created).toBe(true);
    release.resolve();
    await tick;
    expect(await q.get(first.id)).toMatchObject({
      status: 'superseded',
      lastError: 'Error: first run fails',
    });
    expect(await q.tick()).toBe(1);
    expect(await q.get(second.id)).toMatchObject({ status: 'succeeded' });
  });

  it('enqueues inside a caller transaction: only a committed job exists', async () => {
    const q = queue();
    await expect(
      database.db.transaction().execute(async (trx) => {
        await q.enqueue('tx', { n: 1 }, { trx, key: 'a' });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(await q.find('tx')).toEqual([]);
    const { id } = await database.db.transaction().execute(async (trx) => {
      await trx.insertInto('meta').values({ key: 'job-test', value: 'x' }).execute();
      const r = await q.enqueue('tx', { n: 2 }, { trx, key: 'a' });
      // Dedupe works inside the transaction too (no aborted transaction on PostgreSQL).
      expect(await q.enqueue('tx', { n: 3 }, { trx, key: 'a' })).toEqual({ id: r.id, created: false });
      return r;
    });
    expect((await q.find('tx')).map((j) => [j.id, j.payload])).toEqual([[id, { n: 2 }]]);
  });

  it('enqueues with the repositories of a store transaction: only a committed job exists', async () => {
    const q = queue();
    const store = new Store(database);
    await expect(
      store.transaction(async (repos) => {
        await q.enqueue('tx', { n: 1 }, { trx: repos, key: 'a' });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(await q.find('tx')).toEqual([]);
    const { id } = await store.transaction(async (repos) => {
      await repos.meta.insert('job-test', 'x');
      const r = await q.enqueue('tx', { n: 2 }, { trx: repos, key: 'a' });
      expect(await q.enqueue('tx', { n: 3 }, { trx: repos, key: 'a' })).toEqual({ id: r.id, created: false });
      return r;
    });
    expect((await q.find('tx')).map((j) => [j.id, j.payload])).toEqual([[id, { n: 2 }]]);
    await store.transaction(async (repos) => {
      expect(await q.cancel('tx', 'a', repos)).toBe(true);
    });
    expect(await q.find('tx')).toEqual([]);
  });

  it('storeTransaction commits the effect with the completion, or neither', async () => {
    const q = queue({ workerId: 'w1', maxAttempts: 2 });
    let fail = true;
    q.registerHandler('effect', async (job, ctx) => {
      await ctx.storeTransaction(async (repos) => {
        await repos.meta.insert(`effect:${job.id}`, 'done');
        if (fail) throw new Error('after the effect');
      });
    });
    const { id } = await q.enqueue('effect', {});
    await q.tick();
    const store = new Store(database);
    expect(await store.repos.meta.get(`effect:${id}`)).toBeNull();
    expect(await q.get(id)).toMatchObject({ status: 'pending', attempt: 1 });
    fail = false;
    clock.advance(60_000);
    await q.tick();
    expect(await store.repos.meta.get(`effect:${id}`)).toBe('done');
    expect(await q.get(id)).toMatchObject({ status: 'succeeded', attempt: 2 });
  });

  it('never runs a job twice, nor concurrently, with two queues competing', async () => {
    const database2 = await tdb.open();
    const a = queue({ workerId: 'A' });
    const b = queue({ workerId: 'B' }, database2);
    const running = new Set<string>();
    const runs = new Map<string, number>();
    let overlaps = 0;
    const handler: JobHandler = async (job) => {
      if (running.has(job.id)) overlaps++;
      running.add(job.id);
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      running.delete(job.id);
    };
    a.registerHandler('work', handler, { concurrency: 3 });
    b.registerHandler('work', handler, { concurrency: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await a.enqueue('work', { i })).id);
    const [na, nb] = await Promise.all([a.drain(), b.drain()]);
    expect(na + nb).toBe(40);
    expect(overlaps).toBe(0);
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect((await a.stats()).kinds.work).toEqual({ succeeded: 40 });
  });

  it('keeps one pending job per schedule and re-enqueues it after each run', async () => {
    const q = queue();
    let runs = 0;
    q.registerHandler('sweep', async () => {
      runs++;
      if (runs === 2) throw new Error('sweep broke');
    });
    q.schedule('sweep', 60_000, { scope: 'all' });
    expect(await q.find('sweep')).toEqual([]);
    await q.ensureSchedules();
    await q.ensureSchedules();
    expect((await q.find('sweep')).map((j) => j.status)).toEqual(['pending']);

    expect(await q.tick()).toBe(1);
    let jobs = await q.find('sweep');
    expect(jobs.map((j) => j.status)).toEqual(['succeeded', 'pending']);
    expect(jobs[1]).toMatchObject({ runAt: new Date(T0 + 60_000).toISOString(), payload: { scope: 'all' } });
    expect(await q.tick()).toBe(0);

    // A second process (sharing the database) starting up doesn't add another.
    const other = queue({}, await tdb.open());
    other.schedule('sweep', 60_000, { scope: 'all' });
    await other.ensureSchedules();
    expect((await q.find('sweep', { status: 'pending' })).length).toBe(1);

    // Failing for good also schedules the next run.
    clock.advance(60_000);
    await database.db.updateTable('jobs').set({ max_attempts: 1 }).where('status', '=', 'pending').execute();
    expect(await q.tick()).toBe(1);
    jobs = await q.find('sweep');
    expect(jobs.map((j) => j.status)).toEqual(['succeeded', 'failed', 'pending']);
    expect(jobs[2]?.runAt).toBe(new Date(T0 + 120_000).toISOString());
    clock.advance(60_000);
    expect(await q.tick()).toBe(1);
    expect(runs).toBe(3);
  });

  it('creates declared schedules when the worker starts, and at once when declared later', async () => {
    const q = queue({ pollIntervalMs: 60_000 });
    const early = deferred();
    const late = deferred();
    q.registerHandler('early', async () => early.resolve());
    q.registerHandler('late', async () => late.resolve());
    q.schedule('early', 3600_000);
    await q.start();
    await early.promise;
    q.schedule('late', 3600_000);
    await late.promise;
    await q.stop();
    for (const kind of ['early', 'late']) {
      const jobs = await q.find(kind);
      expect(jobs.map((j) => [j.status, j.key])).toEqual([
        ['succeeded', 'schedule'],
        ['pending', 'schedule'],
      ]);
      expect(jobs[1]?.runAt).toBe(new Date(T0 + 3600_000).toISOString());
    }
  });

  it('prunes finished jobs after their retention', async () => {
    const q = queue({ retainSucceededMs: 1000, retainFailedMs: 5000 });
    q.registerHandler('ok', async () => {});
    q.registerHandler('bad', async () => {
      throw new PermanentJobError('no');
    });
    await q.enqueue('ok', {});
    await q.enqueue('bad', {});
    await q.enqueue('ok', {}, { runAt: new Date(T0 + 100_000) });
    await q.tick();
    expect(await q.prune()).toBe(0);
    clock.advance(1001);
    expect(await q.prune()).toBe(1);
    expect((await q.stats()).kinds).toEqual({ ok: { pending: 1 }, bad: { failed: 1 } });
    clock.advance(4000);
    expect(await q.prune()).toBe(1);
    expect((await q.stats()).kinds).toEqual({ ok: { pending: 1 } });
  });

  it('polls when started, wakes at once on enqueue, and stops gracefully', async () => {
    // A poll interval far longer than the test: only the wake-up can make the job run quickly.
    const q = queue({ pollIntervalMs: 60_000, stopTimeoutMs: 5000 });
    const ran = deferred<string>();
    const release = deferred();
    let finished = false;
    q.registerHandler('now', async (job) => {
      ran.resolve(job.id);
      await release.promise;
      finished = true;
    });
    await q.start();
    expect((await q.stats()).started).toBe(true);
    // Let the first (empty) poll pass, then enqueue.
    await new Promise((r) => setTimeout(r, 20));
    const { id } = await q.enqueue('now', {});
    expect(await ran.promise).toBe(id);
    expect((await q.stats()).runningHere).toBe(1);

    // stop() waits for the running handler.
    let stopped = false;
    const stopping = q.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    expect(finished).toBe(true);
    expect(await q.get(id)).toMatchObject({ status: 'succeeded' });

    // Stopped: nothing is claimed any more.
    await q.enqueue('now', {});
    await new Promise((r) => setTimeout(r, 30));
    expect((await q.stats()).kinds.now).toEqual({ succeeded: 1, pending: 1 });
  });

  it('stop() gives up on a hung handler after its timeout and aborts it', async () => {
    const q = queue({ pollIntervalMs: 60_000 });
    const ran = deferred<JobContext>();
    q.registerHandler('hang', async (_job, ctx) => {
      ran.resolve(ctx);
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      throw ctx.signal.reason;
    });
    await q.start();
    const { id } = await q.enqueue('hang', {});
    const ctx = await ran.promise;
    const t = Date.now();
    await q.stop(50);
    expect(Date.now() - t).toBeLessThan(2000);
    expect(ctx.signal.aborted).toBe(true);
    await q.idle();
    // The abandoned attempt went back to pending with its error, for another worker to pick up.
    expect(await q.get(id)).toMatchObject({ status: 'pending', lastError: 'Error: job queue stopped' });
  });

  it('completes a job after its worker process was killed mid-job, with the effect exactly once', async () => {
    await createEffectTables(database.db as unknown as Kysely<any>);
    const q = queue({ workerId: 'parent' });
    const { id } = await q.enqueue('effect', { target: 'space_crash' });
    const signalFile = path.join(tdb.dir, 'inside-transaction');

    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(here, 'fixtures/crash-worker.ts')],
      {
        cwd: root,
        env: {
          ...process.env,
          JOB_TEST_DB_URL: tdb.url,
          JOB_TEST_DB_SCHEMA: tdb.schema ?? '',
          JOB_TEST_SIGNAL_FILE: signalFile,
          JOB_TEST_CLOCK_MS: String(T0),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(signal ?? code)),
    );
    try {
      for (let i = 0; i < 400 && !fs.existsSync(signalFile); i++) {
        if (child.exitCode !== null) throw new Error(`worker exited early: ${stderr}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(fs.existsSync(signalFile)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
    expect(await exited).toBe('SIGKILL');

    const db = database.db as unknown as Kysely<any>;
    // The child claimed the job and was inside its handler's transaction when it died.
    expect(
      await db
        .selectFrom('jobs')
        .select(['status', 'locked_by', 'attempts'])
        .where('id', '=', id)
        .executeTakeFirst(),
    ).toEqual({
      status: 'running',
      locked_by: 'crash-child',
      attempts: 1,
    });
    expect(await db.selectFrom('job_test_effects').selectAll().execute()).toEqual([]);

    // A restarted worker: nothing to do while the dead worker's lease lasts, then it takes over.
    q.registerHandler('effect', effectHandler(db), { leaseMs: 200 });
    expect(await q.tick()).toBe(0);
    clock.advance(200);
    expect(await q.tick()).toBe(1);
    expect(await q.get(id)).toMatchObject({ status: 'succeeded', attempt: 2 });
    const deliveries = await db
      .selectFrom('job_test_deliveries')
      .select('worker')
      .orderBy('worker')
      .execute();
    expect(deliveries.map((d) => d.worker)).toEqual(['crash-child', 'parent']);
    expect(await db.selectFrom('job_test_effects').selectAll().execute()).toEqual([
      { target: 'space_crash', job_id: id, worker: 'parent' },
    ]);

    // Delivered once more (e.g. a duplicate enqueue of the same work): the effect is not repeated.
    await q.enqueue('effect', { target: 'space_crash' });
    expect(await q.tick()).toBe(1);
    expect(await db.selectFrom('job_test_effects').selectAll().execute()).toHaveLength(1);
  });
});
