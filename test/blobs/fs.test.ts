import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { FsBlobStore } from '../../src/blobs/fs.ts';
import { blobStoreContract } from './contract.ts';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

blobStoreContract('file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
  return {
    store: new FsBlobStore(dir),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

describe('file blob store', () => {
  it('never leaves a partial blob under its final name', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    const store = new FsBlobStore(dir);
    const body = randomBytes(64 * 1024);
    const d = sha(body);
    const failing = new Readable({
      read() {
        this.push(body.subarray(0, 1000));
        this.destroy(new Error('connection reset'));
      },
    });
    await expect(store.put(d, body.length, failing)).rejects.toThrow();
    expect(fs.existsSync(store.pathOf(d))).toBe(false);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lays a new store out flat and keeps an older nested store as it is', async () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    const a = Buffer.from('layout-a');
    const store = new FsBlobStore(fresh);
    expect(store.layout).toBe('flat');
    expect(fs.readFileSync(path.join(fresh, 'LAYOUT'), 'utf8').trim()).toBe('flat');
    await store.put(sha(a), a.length, Readable.from([a]));
    expect(fs.existsSync(path.join(fresh, sha(a).slice(0, 2), sha(a)))).toBe(true);
    // Reopened: still flat, and lists what it holds.
    const again = new FsBlobStore(fresh);
    expect(again.layout).toBe('flat');
    const listed: string[] = [];
    for await (const d of again.list()) listed.push(d);
    expect(listed).toEqual([sha(a)]);
    fs.rmSync(fresh, { recursive: true, force: true });

    // A store written before the marker existed: shard directories two levels deep, no LAYOUT.
    const old = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    const b = Buffer.from('layout-b');
    const d = sha(b);
    fs.mkdirSync(path.join(old, d.slice(0, 2), d.slice(2, 4)), { recursive: true });
    fs.writeFileSync(path.join(old, d.slice(0, 2), d.slice(2, 4), d), b);
    const legacy = new FsBlobStore(old);
    expect(legacy.layout).toBe('nested');
    expect(fs.readFileSync(path.join(old, 'LAYOUT'), 'utf8').trim()).toBe('nested');
    expect(await legacy.has(d)).toBe(true);
    const c = Buffer.from('layout-c');
    await legacy.put(sha(c), c.length, Readable.from([c]));
    expect(fs.existsSync(path.join(old, sha(c).slice(0, 2), sha(c).slice(2, 4), sha(c)))).toBe(true);
    const all: string[] = [];
    for await (const x of legacy.list()) all.push(x);
    expect(all.sort()).toEqual([d, sha(c)].sort());
    fs.rmSync(old, { recursive: true, force: true });
  });

  it('removes temp files a crash left behind once they are older than the cutoff', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    const store = new FsBlobStore(dir);
    const a = Buffer.from('kept');
    await store.put(sha(a), a.length, Readable.from([a]));
    const shard = path.dirname(store.pathOf(sha(a)));
    const besideOld = path.join(shard, `${sha(a)}.abc123.tmp`);
    const besideNew = path.join(shard, `${sha(a)}.def456.tmp`);
    const inTmpOld = path.join(dir, 'tmp', `${sha(a)}.0011`);
    for (const f of [besideOld, besideNew, inTmpOld]) fs.writeFileSync(f, 'partial');
    const old = new Date(Date.now() - 48 * 3600_000);
    fs.utimesSync(besideOld, old, old);
    fs.utimesSync(inTmpOld, old, old);
    expect(await store.removeStaleTemp(new Date(Date.now() - 24 * 3600_000))).toBe(2);
    expect(fs.existsSync(besideOld)).toBe(false);
    expect(fs.existsSync(inTmpOld)).toBe(false);
    expect(fs.existsSync(besideNew)).toBe(true);
    expect(await store.has(sha(a))).toBe(true);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses names that are not digests (no path escapes)', () => {
    const store = new FsBlobStore(fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-')));
    expect(() => store.pathOf('../../etc/passwd')).toThrow();
    expect(() => store.pathOf('A'.repeat(64))).toThrow();
  });

  it('batch puts become visible only at commit; abort and mismatches leave nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    const store = new FsBlobStore(dir);
    const a = Buffer.from('batch-a');
    const b = Buffer.from('batch-b');
    const batch = store.beginBatch();
    expect((await batch.put(sha(a), a.length, Readable.from([a]))).created).toBe(true);
    expect((await batch.put(sha(a), a.length, Readable.from([a]))).created).toBe(false);
    await expect(batch.put(sha(b), b.length, Readable.from([Buffer.from('batch-x')]))).rejects.toThrow(
      /mismatch/,
    );
    expect(await store.has(sha(a))).toBe(false);
    await batch.commit();
    expect(await store.has(sha(a))).toBe(true);
    expect(await store.has(sha(b))).toBe(false);

    const aborted = store.beginBatch();
    await aborted.put(sha(b), b.length, Readable.from([b]));
    await aborted.abort();
    expect(await store.has(sha(b))).toBe(false);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a conditional delete that finds its blob fresh links it back and leaves no trash', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    const store = new FsBlobStore(dir);
    const a = Buffer.from('fresh-a');
    await store.put(sha(a), a.length, Readable.from([a]));
    const inode = fs.statSync(store.pathOf(sha(a))).ino;
    expect(await store.delete(sha(a), { unusedSince: new Date(Date.now() - 60_000) })).toBe(false);
    expect(fs.statSync(store.pathOf(sha(a))).ino).toBe(inode);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    expect(await store.delete(sha(a), { unusedSince: new Date(Date.now() + 60_000) })).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    expect(await store.delete(sha(a))).toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a put racing a conditional delete stores its blob again (freshening finds it moved aside)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    const store = new FsBlobStore(dir);
    const a = Buffer.from('raced-a');
    const d = sha(a);
    await store.put(d, a.length, Readable.from([a]));
    // The put runs between the delete's rename and its stat: its utimes meets ENOENT.
    const realStat = fsp.stat;
    let created: boolean | undefined;
    const stat = vi.spyOn(fsp, 'stat').mockImplementationOnce(async (...args) => {
      created = (await store.put(d, a.length, Readable.from([a]))).created;
      return realStat(...(args as Parameters<typeof realStat>));
    });
    try {
      expect(await store.delete(d, { unusedSince: new Date(Date.now() + 60_000) })).toBe(true);
    } finally {
      stat.mockRestore();
    }
    expect(created).toBe(true);
    expect(fs.readFileSync(store.pathOf(d)).equals(a)).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);

    // Deterministically, for single and batch puts: the file gone between check and freshening.
    for (const viaBatch of [false, true]) {
      const b = Buffer.from(`vanished-${viaBatch}`);
      await store.put(sha(b), b.length, Readable.from([b]));
      const utimes = vi.spyOn(fsp, 'utimes').mockImplementationOnce(async (file) => {
        fs.rmSync(file as string);
        throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      });
      try {
        if (viaBatch) {
          const batch = store.beginBatch();
          expect((await batch.put(sha(b), b.length, Readable.from([b]))).created).toBe(true);
          await batch.commit();
        } else {
          expect((await store.put(sha(b), b.length, Readable.from([b]))).created).toBe(true);
        }
      } finally {
        utimes.mockRestore();
      }
      expect(fs.readFileSync(store.pathOf(sha(b))).equals(b)).toBe(true);
    }
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a blob a crash left moved aside is put back when the store is opened; the stale-temp sweep leaves it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    const store = new FsBlobStore(dir);
    const a = Buffer.from('aside-a');
    const b = Buffer.from('aside-b');
    for (const x of [a, b]) await store.put(sha(x), x.length, Readable.from([x]));
    // `a` moved aside with its shard directory gone too; `b` moved aside but stored again since.
    const trashA = path.join(dir, 'tmp', `del-${sha(a)}.0a1b2c`);
    const trashB = path.join(dir, 'tmp', `del-${sha(b)}.3d4e5f`);
    fs.renameSync(store.pathOf(sha(a)), trashA);
    fs.rmSync(path.dirname(store.pathOf(sha(a))), { recursive: true, force: true });
    fs.copyFileSync(store.pathOf(sha(b)), trashB);
    const old = new Date(Date.now() - 48 * 3600_000);
    fs.utimesSync(trashA, old, old);
    expect(await store.removeStaleTemp(new Date(Date.now() - 24 * 3600_000))).toBe(0);
    expect(fs.existsSync(trashA)).toBe(true);

    const reopened = new FsBlobStore(dir);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    for (const x of [a, b]) expect(fs.readFileSync(reopened.pathOf(sha(x))).equals(x)).toBe(true);
    // Still unused: the next sweep takes it.
    expect(await reopened.delete(sha(a), { unusedSince: new Date() })).toBe(true);
    expect(await reopened.has(sha(a))).toBe(false);

    // Another process opening the store while a delete has the blob aside: the blob stays.
    const realStat = fsp.stat;
    const stat = vi.spyOn(fsp, 'stat').mockImplementationOnce(async (...args) => {
      new FsBlobStore(dir);
      return realStat(...(args as Parameters<typeof realStat>));
    });
    try {
      expect(await reopened.delete(sha(b), { unusedSince: new Date(Date.now() + 60_000) })).toBe(false);
    } finally {
      stat.mockRestore();
    }
    expect(fs.readFileSync(reopened.pathOf(sha(b))).equals(b)).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
