import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Change, ChangeFeed } from '../../src/store/change-feed.ts';
import { type Database, migrate, openDatabase } from '../../src/store/db.ts';
import { PG_URL } from '../helpers/server.ts';
import { openTestStore } from '../helpers/store.ts';

const quiet = { warn: () => {}, info: () => {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}

describe.skipIf(!PG_URL)('change feed between instances (PostgreSQL LISTEN/NOTIFY)', () => {
  const schema = `f_${randomBytes(5).toString('hex')}`;
  const dbs: Database[] = [];
  const feeds: ChangeFeed[] = [];
  const open = async () => {
    const d = await openDatabase(PG_URL, { schema, poolSize: 2 });
    dbs.push(d);
    return d;
  };
  const feed = async (id: string, o: { pollMs?: number; gapTimeoutMs?: number } = {}) => {
    const f = new ChangeFeed({
      database: await open(),
      instanceId: id,
      log: quiet,
      backoffMs: { min: 20, max: 200 },
      ...o,
    });
    feeds.push(f);
    return f;
  };
  beforeAll(async () => {
    await migrate(await open());
  });
  afterAll(async () => {
    for (const f of feeds) await f.stop();
    for (const d of dbs) await d.close();
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  });

  it('delivers another instance’s changes in order within a second, never its own', async () => {
    const a = await feed('a');
    const b = await feed('b', { pollMs: 60_000 });
    await a.start();
    await b.start();
    const gotA: Change[] = [];
    const gotB: Change[] = [];
    a.subscribe((c) => gotA.push(c));
    b.subscribe((c) => gotB.push(c));
    const sent = Date.now();
    for (let i = 0; i < 20; i++) await a.announce('space', `s${i}`);
    await a.announce('team-tags', 't1');
    await until(() => gotB.length === 21, 1000);
    expect(Date.now() - sent).toBeLessThan(1000);
    expect(gotB.map((c) => c.subject)).toEqual([...Array.from({ length: 20 }, (_, i) => `s${i}`), 't1']);
    expect(gotB.at(-1)).toMatchObject({ kind: 'team-tags', origin: 'a' });
    const seqs = gotB.map((c) => c.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(gotA).toEqual([]);
    const s = b.stats();
    expect(s.connected).toBe(true);
    expect(s.delivered).toBe(21);
    expect(s.lagMs.samples).toBe(21);
    expect(s.lagMs.p99).toBeLessThan(1000);
    // The sender hears its own last notification asynchronously too: wait for it before comparing.
    await until(() => a.stats().watermark >= s.watermark, 1000).catch(() => {});
    expect(s.watermark).toBe(a.stats().watermark);
  });

  it('catches up on changes made while its connection was down, after reconnecting with backoff', async () => {
    const a = await feed('a2');
    const b = await feed('b2', { pollMs: 60_000 });
    await a.start();
    await b.start();
    const got: string[] = [];
    b.subscribe((c) => got.push(c.subject));
    // Cut b's listening connection from the server side, then change things meanwhile.
    const admin = await open();
    const { sql } = await import('kysely');
    const pid = b.listenerPid();
    expect(pid).toBeTypeOf('number');
    await sql`select pg_terminate_backend(${pid})`.execute(admin.db);
    for (let i = 0; i < 5; i++) await a.announce('space', `while-down-${i}`);
    await until(() => got.length >= 5, 5000);
    expect(got.filter((x) => x.startsWith('while-down-'))).toEqual(
      [0, 1, 2, 3, 4].map((i) => `while-down-${i}`),
    );
    expect(b.stats().reconnects).toBeGreaterThanOrEqual(1);
    await until(() => b.stats().connected, 3000);
    await a.announce('space', 'after');
    await until(() => got.includes('after'), 1000);
  });

  it('finds a change whose notification never came by its sequence number (poll), and skips a gap that never fills', async () => {
    const b = await feed('b3', { pollMs: 100, gapTimeoutMs: 300 });
    await b.start();
    const got: string[] = [];
    b.subscribe((c) => got.push(c.subject));
    const d = await open();
    // A row written without NOTIFY (as if the notification were lost).
    await d.db
      .insertInto('changes')
      .values({ kind: 'space', subject: 'silent', origin: 'x', created_at: new Date().toISOString() })
      .execute();
    await until(() => got.includes('silent'), 2000);
    expect(b.stats().caughtUp).toBeGreaterThanOrEqual(1);
    // A sequence number taken by an insert that rolled back leaves a gap below later changes.
    await d.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .insertInto('changes')
          .values({
            kind: 'space',
            subject: 'rolled-back',
            origin: 'x',
            created_at: new Date().toISOString(),
          })
          .execute();
        throw new Error('rollback');
      })
      .catch(() => {});
    const a = await feed('a3');
    await a.announce('space', 'after-gap');
    await until(() => got.includes('after-gap'), 2000);
    await until(() => b.stats().skippedGaps >= 1, 3000);
    expect(got).not.toContain('rolled-back');
    expect(b.stats().watermark).toBeGreaterThanOrEqual(a.stats().watermark);
  });

  it('prunes old changes', async () => {
    const a = await feed('a4');
    await a.announce('space', 'old', new Date(Date.now() - 2 * 3600_000));
    expect(await a.prune(new Date(Date.now() - 3600_000))).toBeGreaterThanOrEqual(1);
  });
});

describe('change feed on SQLite', () => {
  it('does nothing: one process, local events reach every cache', async () => {
    const t = await openTestStore('sqlite');
    const f = new ChangeFeed({ database: t.database, instanceId: 'a', log: quiet });
    await f.start();
    await f.announce('space', 's');
    expect(await t.database.db.selectFrom('changes').selectAll().execute()).toEqual([]);
    await f.stop();
    await t.close();
  });
});
