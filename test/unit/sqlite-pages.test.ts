import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, openDatabase, releaseFreePages, SQLITE_PAGE_SIZE } from '../../src/store/db.ts';

describe('SQLite page size', () => {
  it('creates databases with large pages and opens older ones with the pages they have', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-pages-'));
    const fresh = await openDatabase(`sqlite:${path.join(dir, 'new.db')}`);
    await migrate(fresh);
    expect(fresh.sqlite!.pragma('page_size', { simple: true })).toBe(SQLITE_PAGE_SIZE);
    expect(SQLITE_PAGE_SIZE).toBe(16384);
    expect(fresh.sqlite!.pragma('auto_vacuum', { simple: true })).toBe(2); // incremental
    await fresh.close();

    // A database made with SQLite's default pages (as before): it keeps them, and works.
    const oldFile = path.join(dir, 'old.db');
    const raw = new SQLite(oldFile);
    raw.pragma('journal_mode = WAL');
    raw.exec('create table t (x integer)');
    raw.close();
    const old = await openDatabase(`sqlite:${oldFile}`);
    await migrate(old);
    expect(old.sqlite!.pragma('page_size', { simple: true })).toBe(4096);
    expect(old.sqlite!.pragma('auto_vacuum', { simple: true })).toBe(0);
    expect(await releaseFreePages(old.sqlite!)).toBe(0);
    await old.db
      .insertInto('blobs')
      .values({ sha256: 'a'.repeat(64), size: 1, variants: null, created_at: 'x', used_at: 'x' })
      .execute();
    expect(await old.db.selectFrom('blobs').select('size').execute()).toEqual([{ size: 1 }]);
    await old.close();
  });

  it('gives free pages back in steps, each through the caller’s lock', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-pages-'));
    const file = path.join(dir, 'vac.db');
    const d = await openDatabase(`sqlite:${file}`);
    const raw = d.sqlite!;
    raw.exec('create table b (x blob)');
    const insert = raw.prepare('insert into b values (?)');
    raw.transaction(() => {
      for (let i = 0; i < 400; i++) insert.run(Buffer.alloc(8000, i));
    })();
    const full = Number(raw.pragma('page_count', { simple: true }));
    raw.exec('delete from b');
    const free = Number(raw.pragma('freelist_count', { simple: true }));
    expect(free).toBeGreaterThan(100);
    let steps = 0;
    const released = await releaseFreePages(
      raw,
      async (step) => {
        steps++;
        step();
      },
      50,
    );
    expect(released).toBe(free);
    expect(steps).toBe(Math.ceil(free / 50));
    expect(raw.pragma('freelist_count', { simple: true })).toBe(0);
    expect(Number(raw.pragma('page_count', { simple: true }))).toBe(full - free);
    raw.pragma('wal_checkpoint(TRUNCATE)');
    expect(fs.statSync(file).size).toBe((full - free) * SQLITE_PAGE_SIZE);
    await d.close();
  });
});
