import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { HostsResolver } from '../../src/domain/hosts/resolve.ts';
import { DIRECTORY_TTL_MS, SiteDirectory } from '../../src/serve/directory.ts';
import { Store } from '../../src/store/repos/index.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

describeEachDb('site directory', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
    const s = await createSpace(t, undefined, { slug: 'dir-site', access: 'public' });
    await publishViaVersions(t, s.id, { 'index.html': 'x' });
  });
  afterAll(() => t.close());

  /** A directory over the real database that counts the queries it starts. */
  const counted = () => {
    const { config, store } = t.server.services;
    const kdb = t.server.services.database.db;
    const clock = new ManualClock();
    let queries = 0;
    const proxy = new Proxy(kdb, {
      get(target, prop, receiver) {
        if (prop === 'selectFrom') {
          return (...args: unknown[]) => {
            queries++;
            return (target.selectFrom as (...a: unknown[]) => unknown)(...args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const counting = new Store({ ...store.database, db: proxy });
    const dir = new SiteDirectory(new HostsResolver(counting.repos.siteHosts, config.baseDomain), clock);
    return { dir, clock, queries: () => queries };
  };

  it('shares one load between requests that arrive while a host is loading', async () => {
    const { dir, clock, queries } = counted();
    const all = await Promise.all(Array.from({ length: 20 }, () => dir.resolve('dir-site.localhost')));
    for (const target of all) expect(target.kind).toBe('site');
    const once = queries();
    expect(once).toBeGreaterThan(0);
    expect(once).toBeLessThanOrEqual(3);
    // Cached and synchronously visible until the TTL runs out, then loaded again (once).
    expect(dir.peek('dir-site.localhost')?.kind).toBe('site');
    await dir.resolve('dir-site.localhost');
    expect(queries()).toBe(once);
    clock.advance(DIRECTORY_TTL_MS);
    expect(dir.peek('dir-site.localhost')).toBeUndefined();
    await Promise.all([dir.resolve('dir-site.localhost'), dir.resolve('dir-site.localhost')]);
    expect(queries()).toBe(2 * once);
  });

  it('does not keep an answer loaded across an invalidation', async () => {
    const { dir, queries } = counted();
    const loading = dir.resolve('dir-site.localhost');
    dir.invalidate();
    expect((await loading).kind).toBe('site');
    const first = queries();
    // The load that straddled the invalidation was not stored: the next request loads afresh.
    expect(dir.peek('dir-site.localhost')).toBeUndefined();
    await dir.resolve('dir-site.localhost');
    expect(queries()).toBe(2 * first);
    expect(dir.peek('dir-site.localhost')?.kind).toBe('site');
  });
});
