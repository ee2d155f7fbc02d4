import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FsBlobStore } from '../../src/blobs/fs.ts';
import { InlineBlobStore } from '../../src/blobs/inline.ts';
import { type Clock, ManualClock, systemClock } from '../../src/clock.ts';
import { type Database, migrate, openDatabase } from '../../src/store/db.ts';
import { Store } from '../../src/store/repos/index.ts';
import { DATABASES, type DbKind, PG_URL } from '../helpers/server.ts';
import { blobStoreContract } from './contract.ts';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** A migrated database (SQLite file or a fresh PostgreSQL schema) and a disk store beside it. */
async function openStores(kind: DbKind, maxBytes: number, clock: Clock) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inline-blobs-'));
  const schema = kind === 'postgres' ? `t_${randomBytes(6).toString('hex')}` : undefined;
  const file = path.join(dir, 'spaces.db');
  const database: Database = await openDatabase(kind === 'postgres' ? PG_URL : `sqlite:${file}`, { schema });
  await migrate(database);
  const backing = new FsBlobStore(path.join(dir, 'blobs'));
  const store = new InlineBlobStore(new Store(database), backing, {
    maxBytes,
    clock,
    sqliteFile: kind === 'sqlite' ? file : undefined,
  });
  return {
    dir,
    database,
    backing,
    store,
    async cleanup() {
      await store.close();
      await database.close();
      if (schema) {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

for (const kind of DATABASES) {
  // 1 KiB threshold: the contract's blobs fall on both sides of it.
  // The system clock: the contract compares stored times with real time (the backing store's too).
  blobStoreContract(`inline [${kind}] over file`, () => openStores(kind, 1024, systemClock));

  describe(`inline blob store [${kind}]`, () => {
    let s: Awaited<ReturnType<typeof openStores>>;
    const clock = new ManualClock();
    beforeAll(async () => {
      s = await openStores(kind, 4096, clock);
    });
    afterAll(() => s.cleanup());

    const rowOf = (d: string) =>
      s.database.db.selectFrom('blob_data').selectAll().where('sha256', '=', d).executeTakeFirst();

    it('keeps small blobs as rows and large ones in the backing store', async () => {
      const small = randomBytes(4096);
      const large = randomBytes(4097);
      await s.store.put(sha(small), small.length, Readable.from([small]));
      await s.store.put(sha(large), large.length, Readable.from([large]));
      expect((await rowOf(sha(small)))?.data.equals(small)).toBe(true);
      expect(await s.backing.has(sha(small))).toBe(false);
      expect(await rowOf(sha(large))).toBeUndefined();
      expect(await s.backing.has(sha(large))).toBe(true);
      expect((await buffer(await s.store.get(sha(large)))).equals(large)).toBe(true);
      // Ranges of an inline blob.
      expect(
        (await buffer(await s.store.get(sha(small), { start: 10, end: 19 }))).equals(small.subarray(10, 20)),
      ).toBe(true);
    });

    it('reads small blobs stored as files before (or with inline storage off) and stores nothing new inline at 0', async () => {
      const old = Buffer.from(`stored-as-a-file-${Date.now()}`);
      await s.backing.put(sha(old), old.length, Readable.from([old]));
      expect(await s.store.has(sha(old))).toBe(true);
      expect(await s.store.stat(sha(old))).toEqual({ size: old.length });
      expect(await text(await s.store.get(sha(old)))).toBe(old.toString());

      const off = new InlineBlobStore(new Store(s.database), s.backing, { maxBytes: 0 });
      const fresh = Buffer.from(`new-while-off-${Date.now()}`);
      await off.put(sha(fresh), fresh.length, Readable.from([fresh]));
      expect(await rowOf(sha(fresh))).toBeUndefined();
      expect(await s.backing.has(sha(fresh))).toBe(true);
      const batch = off.beginBatch();
      const b2 = Buffer.from(`batch-while-off-${Date.now()}`);
      await batch.putBuffer(sha(b2), b2);
      await batch.commit();
      expect(await rowOf(sha(b2))).toBeUndefined();
      expect(await off.has(sha(b2))).toBe(true);
      // Rows written earlier stay readable with the threshold at 0.
      const small = randomBytes(100);
      await s.store.put(sha(small), small.length, Readable.from([small]));
      expect((await buffer(await off.get(sha(small)))).equals(small)).toBe(true);
    });

    it('a batch bigger than one flush writes all of it, small and large, durable at commit', async () => {
      const batch = s.store.beginBatch();
      // ~10 MiB of small blobs: more than one 8 MiB transaction.
      const small = Array.from({ length: 1300 }, () => randomBytes(4000 + Math.floor(Math.random() * 96)));
      const large = Array.from({ length: 5 }, () => randomBytes(20_000));
      for (const b of [...small, ...large]) await batch.putBuffer(sha(b), b);
      await batch.commit();
      const { count } = await s.database.db
        .selectFrom('blob_data')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where(
          'sha256',
          'in',
          small.map((b) => sha(b)),
        )
        .executeTakeFirstOrThrow();
      expect(Number(count)).toBe(small.length);
      for (const b of large) expect(await s.backing.has(sha(b))).toBe(true);
      for (const b of [small[0]!, small[1299]!, large[4]!])
        expect((await buffer(await s.store.get(sha(b)))).equals(b)).toBe(true);
    });

    it('commitAndRecord writes the blobs index with the last rows, filling variants only where none are set', async () => {
      const db = s.database.db;
      const a = randomBytes(200);
      const b = randomBytes(300);
      const big = randomBytes(9000);
      await db
        .insertInto('blobs')
        .values([
          { sha256: sha(a), size: a.length, variants: null, created_at: 'old', used_at: 'old' },
          { sha256: sha(b), size: b.length, variants: '{"kept":1}', created_at: 'old', used_at: 'old' },
        ])
        .execute();
      const batch = s.store.beginBatch();
      for (const x of [a, b, big]) await batch.putBuffer(sha(x), x);
      await batch.commitAndRecord!(
        [
          { sha256: sha(a), size: a.length, variants: '{"new":1}' },
          { sha256: sha(b), size: b.length, variants: '{"new":1}' },
          { sha256: sha(big), size: big.length },
        ],
        'now',
      );
      const rows = await db
        .selectFrom('blobs')
        .selectAll()
        .where('sha256', 'in', [sha(a), sha(b), sha(big)])
        .execute();
      const by = new Map(rows.map((r) => [r.sha256, r]));
      expect(by.get(sha(a))).toMatchObject({ variants: '{"new":1}', created_at: 'old', used_at: 'now' });
      expect(by.get(sha(b))).toMatchObject({ variants: '{"kept":1}' });
      expect(by.get(sha(big))).toMatchObject({ size: big.length, variants: null, created_at: 'now' });
      for (const x of [a, b, big]) expect((await buffer(await s.store.get(sha(x)))).equals(x)).toBe(true);
      expect(await s.backing.has(sha(big))).toBe(true);
    });

    it('record: index rows go with (or after) their bytes; an aborted batch records nothing unflushed', async () => {
      const db = s.database.db;
      const recorded = async (d: string) =>
        (await db.selectFrom('blobs').select('sha256').where('sha256', '=', d).executeTakeFirst()) !==
        undefined;
      const a = randomBytes(250);
      const big = randomBytes(9000);
      const batch = s.store.beginBatch();
      await batch.putBuffer(sha(a), a);
      await batch.putBuffer(sha(big), big);
      batch.record!(
        [
          { sha256: sha(a), size: a.length },
          { sha256: sha(big), size: big.length },
        ],
        'now',
      );
      expect(await recorded(sha(a))).toBe(false);
      await batch.commitAndRecord!([], 'now');
      expect(await recorded(sha(a))).toBe(true);
      expect(await recorded(sha(big))).toBe(true);

      const c = randomBytes(260);
      const aborted = s.store.beginBatch();
      await aborted.putBuffer(sha(c), c);
      aborted.record!([{ sha256: sha(c), size: c.length }], 'now');
      await aborted.abort();
      expect(await recorded(sha(c))).toBe(false);
      expect(await s.store.has(sha(c))).toBe(false);
    });

    it('main-connection transactions interleaved with a batch writing from its thread never conflict', async () => {
      const db = s.database.db;
      const stop = { v: false };
      let txs = 0;
      // Read-then-write transactions on the main connection, as the services run them.
      const writer = (async () => {
        while (!stop.v) {
          await db.transaction().execute(async (trx) => {
            await trx.selectFrom('blobs').select('sha256').limit(1).execute();
            await trx
              .insertInto('blobs')
              .values({
                sha256: sha(`tx-${txs}-${Math.random()}`),
                size: 1,
                variants: null,
                created_at: 'x',
                used_at: 'x',
              })
              .execute();
          });
          txs++;
        }
      })();
      for (let round = 0; round < 3; round++) {
        const batch = s.store.beginBatch();
        for (let i = 0; i < 2500; i++) {
          const b = randomBytes(3500);
          await batch.putBuffer(sha(b), b);
        }
        await batch.commit();
      }
      stop.v = true;
      await writer;
      expect(txs).toBeGreaterThan(0);
    });

    it('a conditional delete keeps a fresh inline row without asking the backing store, and takes an old one', async () => {
      const body = randomBytes(300);
      const d = sha(body);
      await s.store.put(d, body.length, Readable.from([body]));
      const backingDelete = vi.spyOn(s.backing, 'delete');
      try {
        expect(await s.store.delete(d, { unusedSince: clock.now() })).toBe(false);
        expect(backingDelete).not.toHaveBeenCalled();
        expect(await rowOf(d)).toBeDefined();
        clock.advance(3600_000);
        expect(await s.store.delete(d, { unusedSince: clock.now() })).toBe(true);
        expect(await rowOf(d)).toBeUndefined();
        expect(await s.store.has(d)).toBe(false);
      } finally {
        backingDelete.mockRestore();
      }
    });

    it('a put of an inline blob refreshes its row; one stored in the backing store is freshened there', async () => {
      const small = randomBytes(310);
      await s.store.put(sha(small), small.length, Readable.from([small]));
      clock.advance(3600_000);
      const mark = clock.now();
      expect((await s.store.put(sha(small), small.length, Readable.from([small]))).created).toBe(false);
      expect((await rowOf(sha(small)))?.created_at).toBe(mark.toISOString());
      expect(await s.store.delete(sha(small), { unusedSince: mark })).toBe(false);

      // A small blob stored as a file (before inline storage): freshened where it is, not copied.
      const old = randomBytes(320);
      await s.backing.put(sha(old), old.length, Readable.from([old]));
      const file = s.backing.pathOf(sha(old));
      const dayAgo = new Date(Date.now() - 24 * 3600_000);
      fs.utimesSync(file, dayAgo, dayAgo);
      expect((await s.store.put(sha(old), old.length, Readable.from([old]))).created).toBe(false);
      expect(await rowOf(sha(old))).toBeUndefined();
      expect(fs.statSync(file).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    });

    it('a conditional delete of a blob both inline and in the backing store takes each copy only if old', async () => {
      const body = randomBytes(330);
      const d = sha(body);
      await s.backing.put(d, body.length, Readable.from([body]));
      const batch = s.store.beginBatch();
      await batch.putBuffer(d, body);
      await batch.commit();
      expect(await rowOf(d)).toBeDefined();
      clock.advance(3600_000);
      // The file was stored just now (real time), the row an hour before the clock's now.
      const file = s.backing.pathOf(d);
      const fresh = new Date(clock.now().getTime() + 60_000);
      fs.utimesSync(file, fresh, fresh);
      expect(await s.store.delete(d, { unusedSince: clock.now() })).toBe(true);
      expect(await rowOf(d)).toBeUndefined();
      expect(await s.backing.has(d)).toBe(true);
      expect(await s.store.delete(d, { unusedSince: new Date(fresh.getTime() + 60_000) })).toBe(true);
      expect(await s.store.has(d)).toBe(false);
    });

    it('the sweep removes old rows no blobs row records, keeps recorded and recent ones; a batch refreshes what it reuses', async () => {
      const db = s.database.db;
      const orphan = Buffer.from(`orphan-${Date.now()}`);
      const recorded = Buffer.from(`recorded-${Date.now()}`);
      const reused = Buffer.from(`reused-${Date.now()}`);
      for (const b of [orphan, recorded, reused]) await s.store.put(sha(b), b.length, Readable.from([b]));
      await db
        .insertInto('blobs')
        .values({
          sha256: sha(recorded),
          size: recorded.length,
          variants: null,
          created_at: 'x',
          used_at: 'x',
        })
        .execute();
      clock.advance(2 * 24 * 3600_000);
      // An open batch puts `reused` again: its row counts as new.
      const batch = s.store.beginBatch();
      await batch.putBuffer(sha(reused), reused);
      await batch.commit();
      const recent = Buffer.from(`recent-${Date.now()}`);
      await s.store.put(sha(recent), recent.length, Readable.from([recent]));
      const removed = await s.store.removeStaleTemp(new Date(clock.now().getTime() - 24 * 3600_000));
      expect(removed).toBeGreaterThanOrEqual(1);
      expect(await s.store.has(sha(orphan))).toBe(false);
      expect(await s.store.has(sha(recorded))).toBe(true);
      expect(await s.store.has(sha(reused))).toBe(true);
      expect(await s.store.has(sha(recent))).toBe(true);
    });
  });
}
