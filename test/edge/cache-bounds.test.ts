import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { HostsResolver } from '../../src/domain/hosts/resolve.ts';
import { cacheBudget } from '../../src/serve/budget.ts';
import { SiteDirectory } from '../../src/serve/directory.ts';
import { ByteLru } from '../../src/serve/lru.ts';
import { VersionCache } from '../../src/serve/versions.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

// SPACES_CACHE_BYTES (issue 20): the edge's caches are LRUs bounded by bytes, so memory follows the
// setting and not the number of spaces served.

describe('byte-bounded LRU', () => {
  it('evicts least recently used entries once the bytes pass the bound', () => {
    const evicted: string[] = [];
    const lru = new ByteLru<string, number>(100, (k) => evicted.push(k));
    lru.set('a', 1, 40);
    lru.set('b', 2, 40);
    expect(lru.get('a')).toBe(1); // a is now the most recently used
    lru.set('c', 3, 40);
    expect(evicted).toEqual(['b']);
    expect([...lru.keys()]).toEqual(['a', 'c']);
    expect(lru.bytes).toBe(80);
    lru.grow('c', 30);
    expect(evicted).toEqual(['b', 'a']);
    expect(lru.bytes).toBe(70);
    expect(lru.set('huge', 4, 101)).toBe(false);
    expect(lru.has('huge')).toBe(false);
    expect(lru.delete('c')).toBe(true);
    expect(lru.bytes).toBe(0);
  });

  it('SPACES_CACHE_BYTES is shared out whole, 256 MiB by default (128 MiB for file bodies)', () => {
    const b = cacheBudget(1000);
    expect(b.blobs + b.versions + b.hosts + b.rules).toBe(1000);
    const config = loadConfig({ SPACES_DATA_DIR: '/tmp/x' });
    expect(config.cacheBytes).toBe(256 * 1024 * 1024);
    expect(cacheBudget(config.cacheBytes).blobs).toBe(128 * 1024 * 1024);
    expect(loadConfig({ SPACES_DATA_DIR: '/tmp/x', SPACES_CACHE_BYTES: '0' }).cacheBytes).toBe(0);
  });
});

describeEachDb('edge caches bounded by bytes', (db) => {
  let t: TestServer;
  const versionIds: string[] = [];
  const SITES = 12;
  beforeAll(async () => {
    t = await startServer({ db });
    for (let i = 0; i < SITES; i++) {
      const s = await createSpace(t, undefined, { slug: `bound-${i}`, access: 'public' });
      const r = await publishViaVersions(t, s.id, { 'index.html': `site ${i}`, [`f${i}.txt`]: 'x' });
      versionIds.push(r.finalized.version.id);
    }
  });
  afterAll(() => t.close());

  const directory = (maxBytes: number) => {
    const { config, store } = t.server.services;
    return new SiteDirectory(new HostsResolver(store.repos.siteHosts, config.baseDomain), new ManualClock(), {
      maxBytes,
    });
  };

  it('host answers stay under their bound, the most recent kept, and all still resolve', async () => {
    const unbounded = directory(1024 * 1024);
    await unbounded.resolve('bound-0.localhost');
    const one = unbounded.stats().bytes;
    expect(one).toBeGreaterThan(100);
    const dir = directory(one * 4);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < SITES; i++) {
        expect((await dir.resolve(`bound-${i}.localhost`)).kind).toBe('site');
        expect(dir.stats().bytes).toBeLessThanOrEqual(one * 4);
      }
    }
    expect(dir.stats().entries).toBeLessThanOrEqual(4);
    expect(dir.peek(`bound-${SITES - 1}.localhost`)?.kind).toBe('site');
    expect(dir.peek('bound-0.localhost')).toBeUndefined();
  });

  it('an invalidation of one space does not throw away a load of another in flight', async () => {
    const dir = directory(1024 * 1024);
    const a = await dir.resolve('bound-0.localhost');
    if (a.kind !== 'site') throw new Error('not a site');
    const loading = dir.resolve('bound-1.localhost');
    dir.invalidate(a.space.id);
    expect((await loading).kind).toBe('site');
    expect(dir.peek('bound-1.localhost')?.kind).toBe('site');
    expect(dir.peek('bound-0.localhost')).toBeUndefined();
    // Of the same space it does (what was read may predate the write).
    const again = dir.resolve('bound-0.localhost');
    dir.invalidate(a.space.id);
    await again;
    expect(dir.peek('bound-0.localhost')).toBeUndefined();
  });

  it('versions stay under their bound', async () => {
    const probe = new VersionCache(t.server.services.store.repos.servableVersions, 1024 * 1024);
    expect((await probe.get(versionIds[0]!))?.id).toBe(versionIds[0]);
    const one = probe.stats().bytes;
    const cache = new VersionCache(t.server.services.store.repos.servableVersions, one * 3);
    for (const id of versionIds) {
      expect((await cache.get(id))?.id).toBe(id);
      expect(cache.stats().bytes).toBeLessThanOrEqual(one * 3);
    }
    expect(cache.peek(versionIds.at(-1)!)?.id).toBe(versionIds.at(-1));
    expect(cache.peek(versionIds[0]!)).toBeUndefined();
  });

  it('a server with a small SPACES_CACHE_BYTES serves every site correctly', async () => {
    const small = await startServer({ db, env: { SPACES_CACHE_BYTES: '20000' } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const s = await createSpace(small, undefined, { slug: `small-${i}`, access: 'public' });
        await publishViaVersions(small, s.id, { 'index.html': `small ${i}` });
        ids.push(s.id);
      }
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 6; i++) {
          const res = await small.api('GET', '/', { token: null, host: `small-${i}.localhost` });
          expect(res.status).toBe(200);
          expect(res.text).toBe(`small ${i}`);
        }
      }
    } finally {
      await small.close();
    }
  });
});
