import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, openDatabase, SQLITE_PAGE_SIZE } from '../../src/store/db.ts';

describe('SQLite page size', () => {
  it('creates databases with large pages and opens older ones with the pages they have', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-pages-'));
    const fresh = await openDatabase(`sqlite:${path.join(dir, 'new.db')}`);
    await migrate(fresh);
    expect(fresh.sqlite!.pragma('page_size', { simple: true })).toBe(SQLITE_PAGE_SIZE);
    expect(SQLITE_PAGE_SIZE).toBe(16384);
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
    await old.db
      .insertInto('blobs')
      .values({ sha256: 'a'.repeat(64), size: 1, variants: null, created_at: 'x', used_at: 'x' })
      .execute();
    expect(await old.db.selectFrom('blobs').select('size').execute()).toEqual([{ size: 1 }]);
    await old.close();
  });
});
