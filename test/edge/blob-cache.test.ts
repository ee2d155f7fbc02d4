import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobCache } from '../../src/serve/blob-cache.ts';
import { sha, tempStore } from './helpers.ts';

describe('BlobCache', () => {
  const ts = tempStore();
  afterAll(() => ts.cleanup());

  it('stays within its byte budget, evicting least recently used first', () => {
    const c = new BlobCache({ maxBytes: 100, maxEntryBytes: 60 });
    c.set('a', Buffer.alloc(40));
    c.set('b', Buffer.alloc(40));
    expect(c.get('a')).toBeDefined(); // a is now most recent
    c.set('c', Buffer.alloc(40));
    expect(c.bytes).toBeLessThanOrEqual(100);
    expect(c.has('b')).toBe(false);
    expect(c.has('a')).toBe(true);
    expect(c.has('c')).toBe(true);
    c.set('huge', Buffer.alloc(61));
    expect(c.has('huge')).toBe(false);
    c.set('a', Buffer.alloc(10));
    expect(c.bytes).toBe(50);
    c.delete('a');
    expect(c.bytes).toBe(40);
  });

  it('keeps hot entries over a budget that churns, whether or not a hit moved them', () => {
    // 10 entries of 10 bytes fill the budget; a and b are read after every insertion. Hits in the
    // newer half of the order don't move an entry, but one drifting into the older half is moved
    // on its next hit, so a and b survive 100 insertions while every other entry falls out in turn.
    const c = new BlobCache({ maxBytes: 100, maxEntryBytes: 10 });
    c.set('a', Buffer.alloc(10, 1));
    c.set('b', Buffer.alloc(10, 2));
    for (let i = 0; i < 100; i++) {
      c.set(`k${i}`, Buffer.alloc(10));
      expect(c.get('a')?.[0], `after k${i}`).toBe(1);
      expect(c.get('b')?.[0], `after k${i}`).toBe(2);
      expect(c.bytes).toBeLessThanOrEqual(100);
    }
    expect(c.size).toBe(10);
    // The 8 cold entries left are the newest insertions: least recently used went first.
    for (let i = 92; i < 100; i++) expect(c.has(`k${i}`)).toBe(true);
    expect(c.has('k91')).toBe(false);
  });

  it('is disabled with maxBytes 0', () => {
    const c = new BlobCache({ maxBytes: 0 });
    expect(c.accepts(1)).toBe(false);
    c.set('x', Buffer.alloc(1));
    expect(c.size).toBe(0);
  });

  it('loads from the store once for concurrent misses', async () => {
    const body = randomBytes(5000);
    const entry = await ts.add('x.bin', body, 'application/octet-stream');
    let gets = 0;
    const counting = new Proxy(ts.store, {
      get(target, prop, recv) {
        if (prop === 'get') {
          return (...args: Parameters<typeof target.get>) => {
            gets++;
            return target.get(...args);
          };
        }
        return Reflect.get(target, prop, recv);
      },
    });
    const c = new BlobCache();
    const [a, b] = await Promise.all([
      c.load(counting, entry.sha256, 5000),
      c.load(counting, entry.sha256, 5000),
    ]);
    expect(gets).toBe(1);
    expect(a.equals(body)).toBe(true);
    expect(b).toBe(a);
    await c.load(counting, entry.sha256, 5000);
    expect(gets).toBe(1);
  });

  it('refuses a blob whose size disagrees with the manifest', async () => {
    const body = Buffer.from('twelve bytes');
    await ts.add('y.txt', body, 'text/plain');
    const c = new BlobCache();
    await expect(c.load(ts.store, sha(body), 5)).rejects.toThrow(/larger/);
    await expect(c.load(ts.store, sha(body), 50)).rejects.toThrow(/manifest says/);
    expect(c.size).toBe(0);
    await expect(c.load(ts.store, 'a'.repeat(64), 5)).rejects.toThrow();
  });
});
