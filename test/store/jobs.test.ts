import { afterEach, beforeEach, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import type { Store } from '../../src/store/repos/index.ts';
import type { JobLease, JobRow } from '../../src/store/repos/jobs/jobs.ts';
import { describeEachDb } from '../helpers/server.ts';
import { openTestStore, type TestStore } from '../helpers/store.ts';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

let seq = 0;
function job(over: Partial<JobRow> = {}): JobRow {
  const now = at(0);
  return {
    id: newId('job', T0 + seq++),
    kind: 'test.kind',
    payload: '{}',
    status: 'pending',
    dedupe_key: null,
    run_at: now,
    attempts: 0,
    max_attempts: 3,
    locked_by: null,
    locked_until: null,
    every_ms: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    started_at: null,
    finished_at: null,
    ...over,
  };
}

/** The contract of `JobRepository` (store/repos/jobs/jobs.ts), on SQLite and PostgreSQL. */
describeEachDb('store: jobs', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(() => t.close());

  const lease = (row: JobRow, workerId: string): JobLease => ({
    id: row.id,
    workerId,
    attempt: row.attempts,
  });

  it('inserts and reads a job; byId is null for an unknown id', async () => {
    const row = job({ payload: '{"a":1}' });
    await store.repos.jobs.insert(row);
    expect(await store.repos.jobs.byId(row.id)).toEqual(row);
    expect(await store.repos.jobs.byId('job_nope')).toBeNull();
  });

  it('finds jobs of a kind, oldest first, by status and key', async () => {
    const a = job({ created_at: at(2) });
    const b = job({ created_at: at(1), dedupe_key: 'k' });
    const c = job({ created_at: at(3), status: 'failed' });
    const other = job({ kind: 'other.kind' });
    for (const r of [a, b, c, other]) await store.repos.jobs.insert(r);
    expect((await store.repos.jobs.find('test.kind')).map((r) => r.id)).toEqual([b.id, a.id, c.id]);
    expect((await store.repos.jobs.find('test.kind', { status: 'pending' })).map((r) => r.id)).toEqual([
      b.id,
      a.id,
    ]);
    expect((await store.repos.jobs.find('test.kind', { key: 'k' })).map((r) => r.id)).toEqual([b.id]);
  });

  it('keeps one pending job per (kind, key): keep returns the first, replace moves it', async () => {
    const first = job({ dedupe_key: 'k', payload: '{"n":1}' });
    expect(await store.repos.jobs.insertKeyed(first, { keep: true })).toEqual({
      id: first.id,
      created: true,
    });
    const second = job({ dedupe_key: 'k', payload: '{"n":2}' });
    expect(await store.repos.jobs.insertKeyed(second, { keep: true })).toEqual({
      id: first.id,
      created: false,
    });
    expect((await store.repos.jobs.byId(first.id))!.payload).toBe('{"n":1}');
    expect(await store.repos.jobs.byId(second.id)).toBeNull();

    const third = job({ dedupe_key: 'k' });
    const replaced = await store.repos.jobs.insertKeyed(third, {
      keep: false,
      payload: '{"n":3}',
      runAt: at(5000),
      maxAttempts: 9,
      updatedAt: at(10),
    });
    expect(replaced).toEqual({ id: first.id, created: false });
    const row = (await store.repos.jobs.byId(first.id))!;
    expect([row.payload, row.run_at, row.max_attempts, row.updated_at]).toEqual([
      '{"n":3}',
      at(5000),
      9,
      at(10),
    ]);

    // The same key in another kind, and the same key once the first job runs, are separate jobs.
    const otherKind = job({ kind: 'other.kind', dedupe_key: 'k' });
    expect((await store.repos.jobs.insertKeyed(otherKind, { keep: true })).created).toBe(true);
    await store.repos.jobs.claim('test.kind', 1, 'w', at(6000), at(7000));
    const after = job({ dedupe_key: 'k' });
    expect(await store.repos.jobs.insertKeyed(after, { keep: true })).toEqual({
      id: after.id,
      created: true,
    });
  });

  it('deletes only the pending job of a (kind, key)', async () => {
    const a = job({ dedupe_key: 'k' });
    await store.repos.jobs.insert(a);
    expect(await store.repos.jobs.deletePending('other.kind', 'k')).toBe(false);
    expect(await store.repos.jobs.deletePending('test.kind', 'k')).toBe(true);
    expect(await store.repos.jobs.deletePending('test.kind', 'k')).toBe(false);
    const running = job({ dedupe_key: 'r', status: 'running' });
    await store.repos.jobs.insert(running);
    expect(await store.repos.jobs.deletePending('test.kind', 'r')).toBe(false);
    expect(await store.repos.jobs.byId(running.id)).not.toBeNull();
  });

  it('claims due jobs of one kind, oldest run time first, up to the limit, under the lease', async () => {
    const late = job({ run_at: at(200) });
    const early = job({ run_at: at(100) });
    const future = job({ run_at: at(10_000) });
    const other = job({ kind: 'other.kind' });
    const done = job({ status: 'succeeded' });
    for (const r of [late, early, future, other, done]) await store.repos.jobs.insert(r);

    const one = await store.repos.jobs.claim('test.kind', 1, 'A', at(1000), at(2000));
    expect(one.map((r) => r.id)).toEqual([early.id]);
    expect(one[0]).toMatchObject({
      status: 'running',
      attempts: 1,
      locked_by: 'A',
      locked_until: at(2000),
      started_at: at(1000),
      updated_at: at(1000),
    });
    const rest = await store.repos.jobs.claim('test.kind', 10, 'B', at(1000), at(2000));
    expect(rest.map((r) => r.id)).toEqual([late.id]);
    expect(await store.repos.jobs.claim('test.kind', 10, 'B', at(1000), at(2000))).toEqual([]);
  });

  it('never gives the same job to two claimers at once', async () => {
    const rows = Array.from({ length: 20 }, (_, i) => job({ run_at: at(i) }));
    for (const r of rows) await store.repos.jobs.insert(r);
    const claims = await Promise.all(
      ['A', 'B', 'C', 'D'].map((w) => store.repos.jobs.claim('test.kind', 7, w, at(1000), at(5000))),
    );
    const ids = claims.flat().map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(rows.map((r) => r.id).sort());
    for (const [i, w] of ['A', 'B', 'C', 'D'].entries()) {
      for (const r of claims[i]!) expect((await store.repos.jobs.byId(r.id))!.locked_by).toBe(w);
    }
  });

  it('claims a job again once its lease ran out, while attempts are left', async () => {
    const row = job({ max_attempts: 2 });
    await store.repos.jobs.insert(row);
    const [a] = await store.repos.jobs.claim('test.kind', 1, 'A', at(0), at(1000));
    // Still leased: nobody else gets it.
    expect(await store.repos.jobs.claim('test.kind', 1, 'B', at(999), at(2000))).toEqual([]);
    const [b] = await store.repos.jobs.claim('test.kind', 1, 'B', at(1000), at(3000));
    expect(b).toMatchObject({ id: row.id, attempts: 2, locked_by: 'B' });
    // The first delivery lost its lease: its writes are refused.
    expect(await store.repos.jobs.complete(lease(a!, 'A'), at(1001))).toBe(false);
    // Out of attempts: an expired lease is not claimable, it fails.
    expect(await store.repos.jobs.claim('test.kind', 1, 'C', at(5000), at(6000))).toEqual([]);
    const dead = await store.repos.jobs.failExpiredOnLastAttempt('expired', at(5000));
    expect(dead.map((r) => r.id)).toEqual([row.id]);
    expect(await store.repos.jobs.byId(row.id)).toMatchObject({
      status: 'failed',
      last_error: 'expired',
      locked_by: null,
      finished_at: at(5000),
    });
    expect(await store.repos.jobs.failExpiredOnLastAttempt('expired', at(6000))).toEqual([]);
  });

  it('writes of a delivery check its lease: worker and attempt', async () => {
    const row = job();
    await store.repos.jobs.insert(row);
    const [claimed] = await store.repos.jobs.claim('test.kind', 1, 'A', at(0), at(1000));
    const mine = lease(claimed!, 'A');
    expect(await store.repos.jobs.extendLease({ ...mine, workerId: 'B' }, at(9000), at(1))).toBe(false);
    expect(await store.repos.jobs.extendLease({ ...mine, attempt: 2 }, at(9000), at(1))).toBe(false);
    expect(await store.repos.jobs.extendLease(mine, at(9000), at(1))).toBe(true);
    expect((await store.repos.jobs.byId(row.id))!.locked_until).toBe(at(9000));
    expect(await store.repos.jobs.touch(mine, at(2))).toBe(true);
    expect((await store.repos.jobs.byId(row.id))!.updated_at).toBe(at(2));
    expect(await store.repos.jobs.complete(mine, at(3))).toBe(true);
    expect(await store.repos.jobs.byId(row.id)).toMatchObject({
      status: 'succeeded',
      locked_by: null,
      locked_until: null,
      finished_at: at(3),
    });
    // Ended: nothing holds it any more.
    expect(await store.repos.jobs.complete(mine, at(4))).toBe(false);
    expect(await store.repos.jobs.touch(mine, at(4))).toBe(false);
    expect(await store.repos.jobs.fail(mine, 'x', at(4))).toBe(false);
  });

  it('fails a delivery for good, or puts it back to pending for a retry', async () => {
    const a = job();
    const b = job();
    for (const r of [a, b]) await store.repos.jobs.insert(r);
    const claimed = await store.repos.jobs.claim('test.kind', 2, 'A', at(0), at(1000));
    const [ca, cb] = [claimed.find((r) => r.id === a.id)!, claimed.find((r) => r.id === b.id)!];
    expect(await store.repos.jobs.fail(lease(ca, 'A'), 'boom', at(1))).toBe(true);
    expect(await store.repos.jobs.byId(a.id)).toMatchObject({
      status: 'failed',
      last_error: 'boom',
      finished_at: at(1),
    });
    expect(await store.repos.jobs.retry(lease(cb, 'A'), at(500), 'again', at(1))).toBe('pending');
    expect(await store.repos.jobs.byId(b.id)).toMatchObject({
      status: 'pending',
      run_at: at(500),
      last_error: 'again',
      locked_by: null,
      attempts: 1,
    });
    // Not due before its retry time; due after.
    expect(await store.repos.jobs.claim('test.kind', 5, 'A', at(499), at(2000))).toEqual([]);
    expect((await store.repos.jobs.claim('test.kind', 5, 'A', at(500), at(2000))).map((r) => r.id)).toEqual([
      b.id,
    ]);
  });

  it('supersedes a retried job when another pending job took its key meanwhile', async () => {
    const first = job({ dedupe_key: 'k' });
    await store.repos.jobs.insertKeyed(first, { keep: true });
    const [claimed] = await store.repos.jobs.claim('test.kind', 1, 'A', at(0), at(1000));
    const newer = job({ dedupe_key: 'k', run_at: at(50_000) });
    expect((await store.repos.jobs.insertKeyed(newer, { keep: true })).created).toBe(true);
    expect(await store.repos.jobs.retry(lease(claimed!, 'A'), at(10), 'x', at(1))).toBe('superseded');
    expect(await store.repos.jobs.byId(first.id)).toMatchObject({ status: 'superseded', finished_at: at(1) });
    expect((await store.repos.jobs.byId(newer.id))!.status).toBe('pending');
  });

  it('counts jobs per kind and status, and due jobs', async () => {
    await store.repos.jobs.insert(job({ run_at: at(0) }));
    await store.repos.jobs.insert(job({ run_at: at(100) }));
    await store.repos.jobs.insert(job({ run_at: at(10_000) }));
    await store.repos.jobs.insert(job({ kind: 'other.kind', status: 'failed' }));
    const counts = await store.repos.jobs.countByKindAndStatus();
    expect(counts.sort((x, y) => x.kind.localeCompare(y.kind))).toEqual([
      { kind: 'other.kind', status: 'failed', n: 1 },
      { kind: 'test.kind', status: 'pending', n: 3 },
    ]);
    expect(await store.repos.jobs.countDue(at(100))).toBe(2);
    expect(await store.repos.jobs.countDue(at(99))).toBe(1);
  });

  it('deletes finished jobs of the given statuses that finished before a time', async () => {
    const old = job({ status: 'succeeded', finished_at: at(0) });
    const oldSuperseded = job({ status: 'superseded', finished_at: at(0) });
    const recent = job({ status: 'succeeded', finished_at: at(5000) });
    const oldFailed = job({ status: 'failed', finished_at: at(0) });
    const pending = job();
    for (const r of [old, oldSuperseded, recent, oldFailed, pending]) await store.repos.jobs.insert(r);
    expect(await store.repos.jobs.deleteFinishedBefore(['succeeded', 'superseded'], at(1000))).toBe(2);
    expect(await store.repos.jobs.byId(recent.id)).not.toBeNull();
    expect(await store.repos.jobs.byId(oldFailed.id)).not.toBeNull();
    expect(await store.repos.jobs.deleteFinishedBefore(['failed'], at(1000))).toBe(1);
    expect(await store.repos.jobs.byId(pending.id)).not.toBeNull();
  });

  it('a failed transaction leaves nothing: store.transaction and the repository transaction', async () => {
    const a = job({ dedupe_key: 'k' });
    await expect(
      store.transaction(async (repos) => {
        await repos.jobs.insertKeyed(a, { keep: true });
        // Dedupe inside the transaction does not abort it (ON CONFLICT, not a caught error).
        expect((await repos.jobs.insertKeyed(job({ dedupe_key: 'k' }), { keep: true })).created).toBe(false);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await store.repos.jobs.byId(a.id)).toBeNull();

    const b = job();
    await store.repos.jobs.insert(b);
    const [claimed] = await store.repos.jobs.claim('test.kind', 1, 'A', at(0), at(1000));
    await expect(
      store.repos.jobs.transaction(async (_trx, jobs) => {
        expect(await jobs.complete(lease(claimed!, 'A'), at(1))).toBe(true);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await store.repos.jobs.byId(b.id))!.status).toBe('running');
  });
});
