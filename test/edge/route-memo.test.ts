import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

// The edge remembers routing answers per (rules, robots, host, URL) when the rules allow it. These
// tests ask the same thing several times so a wrong memo (a stale or shared answer) would show.

const site = {
  'index.html': '<html><head></head><body>home</body></html>',
  'app/index.html': '<html><head></head><body>shell</body></html>',
  _redirects: '/old /index.html 301\n/search q=:q /find/:q 302\n/app/* /app/index.html 200\n',
  _headers: '/*\n  X-Frame-Options: DENY\n',
};

describeEachDb('site edge route memo', (db) => {
  let t: TestServer;
  let space: any;
  beforeAll(async () => {
    t = await startServer({ db });
    space = await createSpace(t, undefined, { slug: 'memo-site', access: 'public' });
    await publishViaVersions(t, space.id, site);
  });
  afterAll(() => t.close());

  const get = (path: string, host = 'memo-site.localhost', headers: Record<string, string> = {}) =>
    t.api('GET', path, { token: null, host, headers });

  it('answers repeated requests identically, with the query part of what is remembered', async () => {
    for (let i = 0; i < 3; i++) {
      const home = await get('/');
      expect(home.status).toBe(200);
      expect(home.text).toContain('home');
      expect(home.headers['x-frame-options']).toBe('DENY');
      const spa = await get('/app/some/deep/link');
      expect(spa.text).toContain('shell');
      const old = await get(`/old?n=${i}`);
      expect(old.status).toBe(301);
      expect(old.headers.location).toBe(`/index.html?n=${i}`);
      const search = await get(`/search?q=w${i}`);
      expect(search.status).toBe(302);
      expect(search.headers.location).toBe(`/find/w${i}`);
    }
    // A different query set does not match the query rule, even after the rule answered before.
    expect((await get('/search?q=a&x=1')).status).toBe(404);
    expect((await get('/search?q=a')).headers.location).toBe('/find/a');
  });

  it('keeps answers apart per hostname and follows noindex and promote after being warm', async () => {
    const live = await get('/');
    expect(live.headers['x-robots-tag']).toBeUndefined();
    const v2 = (await publishViaVersions(t, space.id, { ...site, 'index.html': '<body>second</body>' }))
      .finalized;
    expect((await get('/')).text).toContain('second');
    const pinned = await get('/', `${v2.version.id}--memo-site.localhost`);
    expect(pinned.text).toContain('second');
    expect(pinned.headers['x-robots-tag']).toBe('noindex');
    expect((await get('/')).headers['x-robots-tag']).toBeUndefined();
    await t.api('PATCH', `/v1/spaces/${space.id}`, { body: { noindex: true } });
    const after = await get('/');
    expect(after.text).toContain('second');
    expect(after.headers['x-robots-tag']).toBe('noindex');
    const redirect = await get('/old');
    expect(redirect.headers['x-robots-tag']).toBe('noindex');
  });

  it('never remembers answers that depend on the request beyond host and URL', async () => {
    const s = await createSpace(t, undefined, { slug: 'memo-cond', access: 'public' });
    await publishViaVersions(t, s.id, {
      'index.html': 'x',
      _redirects: '/members /welcome 302 Cookie=session\n/members /login 302\n',
    });
    const host = 'memo-cond.localhost';
    for (let i = 0; i < 2; i++) {
      expect((await get('/members', host, { cookie: 'session=1' })).headers.location).toBe('/welcome');
      expect((await get('/members', host)).headers.location).toBe('/login');
    }
  });

  it('answers other methods per request even when GET for the same URL is remembered', async () => {
    expect((await get('/app/x')).status).toBe(200);
    const head = await t.api('HEAD', '/app/x', { token: null, host: 'memo-site.localhost' });
    expect(head.status).toBe(200);
    const post = await t.api('POST', '/app/x', { token: null, host: 'memo-site.localhost' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});
