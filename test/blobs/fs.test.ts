import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
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
});
