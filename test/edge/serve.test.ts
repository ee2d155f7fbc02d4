import { FormData, request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const site = {
  'index.html': '<!doctype html><html><head><title>Home</title></head><body><h1>Hello</h1></body></html>',
  'about.html': '<html><head></head><body>About us</body></html>',
  'app/index.html': '<html><head></head><body>SPA shell</body></html>',
  'assets/app.css': 'body { color: red; }'.repeat(50),
  '404.html': '<html><body>Custom not found</body></html>',
  _redirects: '/old /about 301\n/go/* https://example.com/:splat 302\n/app/* /app/index.html 200\n',
  _headers: '/assets/*\n  X-Asset: yes\n/*\n  X-Frame-Options: DENY\n',
  '.env': 'SECRET=1',
};

describeEachDb('site edge', (db) => {
  let t: TestServer;
  let space: any;
  let v1: any;
  beforeAll(async () => {
    t = await startServer({ db });
    space = await createSpace(t, undefined, { slug: 'edge-site', access: 'public' });
    v1 = (await publishViaVersions(t, space.id, site)).finalized;
  });
  afterAll(() => t.close());

  const get = (path: string, host = 'edge-site.localhost', headers: Record<string, string> = {}) =>
    t.api('GET', path, { token: null, host, headers });

  it('serves the live version with ETag, 304, clean URLs, rules and headers', async () => {
    const home = await get('/');
    expect(home.status).toBe(200);
    expect(home.text).toContain('<h1>Hello</h1>');
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(home.headers['x-frame-options']).toBe('DENY');
    expect(home.headers['x-robots-tag']).toBeUndefined();
    const etag = String(home.headers.etag);
    expect((await get('/', undefined, { 'if-none-match': etag })).status).toBe(304);
    expect((await get('/about')).text).toContain('About us');
    const clean = await get('/about.html');
    expect(clean.status).toBe(301);
    expect(clean.headers.location).toBe('/about');
    const old = await get('/old?x=1');
    expect(old.status).toBe(301);
    expect(old.headers.location).toBe('/about?x=1');
    const spa = await get('/app/deep/link');
    expect(spa.status).toBe(200);
    expect(spa.text).toContain('SPA shell');
    const css = await get('/assets/app.css', undefined, { 'accept-encoding': 'br' });
    expect(css.headers['x-asset']).toBe('yes');
    expect(css.headers['content-encoding']).toBe('br');
    const missing = await get('/nope');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('Custom not found');
    for (const hidden of ['/_redirects', '/_headers', '/.env']) expect((await get(hidden)).status).toBe(404);
    const range = await get('/assets/app.css', undefined, { range: 'bytes=0-3' });
    expect(range.status).toBe(206);
    expect(range.text).toBe('body');
  });

  it('serves versions and channels on their own hostnames with noindex, and follows promote/rollback', async () => {
    const v2 = (await publishViaVersions(t, space.id, { ...site, 'index.html': '<h1>Second</h1>' }))
      .finalized;
    expect((await get('/')).text).toContain('Second');
    const pinned = await get('/', `${v1.version.id}--edge-site.localhost`);
    expect(pinned.text).toContain('<h1>Hello</h1>');
    expect(pinned.headers['x-robots-tag']).toBe('noindex');
    const dns = await get('/', `${v1.version.id.replace('_', '-')}--edge-site.localhost`);
    expect(dns.text).toContain('<h1>Hello</h1>');
    const back = await t.api('POST', `/v1/spaces/${space.id}/versions/${v1.version.id}/promote`, {
      body: {},
    });
    expect(back.status).toBe(200);
    expect((await get('/')).text).toContain('<h1>Hello</h1>');
    await t.api('POST', `/v1/spaces/${space.id}/versions/${v2.version.id}/promote`, {
      body: { channel: 'beta' },
    });
    const beta = await get('/', 'beta--edge-site.localhost');
    expect(beta.text).toContain('Second');
    expect(beta.headers['x-robots-tag']).toBe('noindex');
  });

  it('redirects a previous hostname (307, path and query kept); unknown hosts go to sign-in or a 404 page', async () => {
    const s = await createSpace(t, undefined, { slug: 'before-rename', access: 'public' });
    await publishViaVersions(t, s.id, { 'index.html': 'renamed site' });
    await t.api('POST', `/v1/spaces/${s.id}/rename`, { body: { slug: 'after-rename' } });
    const moved = await get('/a/b?c=d', 'before-rename.localhost');
    expect(moved.status).toBe(307);
    expect(moved.headers.location).toBe(`http://after-rename.localhost:${t.port}/a/b?c=d`);
    expect((await get('/', 'after-rename.localhost')).text).toContain('renamed site');
    // Any name under the base domain could be a private space: it is answered like one (see access.test.ts).
    const unknown = await get('/', 'never-existed.localhost');
    expect(unknown.status).toBe(302);
    expect(new URL(String(unknown.headers.location)).pathname).toBe('/v1/access/acquire');
    // Other hostnames can never be a space.
    const foreign = await get('/', 'www.example.org');
    expect(foreign.status).toBe(404);
    expect(foreign.headers['content-type']).toMatch(/text\/html/);
    expect(foreign.text).toContain('www.example.org');
  });

  it('applies noindex and settings changes at once, and stops serving a deleted space', async () => {
    const s = await createSpace(t, undefined, { slug: 'settings-site', access: 'public' });
    await publishViaVersions(t, s.id, {
      'index.html': '<html><head></head><body>x</body></html>',
      'docs/a.txt': 'a',
    });
    await t.api('PATCH', `/v1/spaces/${s.id}`, { body: { noindex: true, config: { listing: true } } });
    const home = await get('/', 'settings-site.localhost');
    expect(home.headers['x-robots-tag']).toBe('noindex');
    const listing = await get('/docs/', 'settings-site.localhost');
    expect(listing.status).toBe(200);
    expect(listing.text).toContain('a.txt');
    await t.api('DELETE', `/v1/spaces/${s.id}`);
    const deleted = await get('/', 'settings-site.localhost');
    expect(deleted.status).toBe(302);
    expect(deleted.text).toBe('');
    expect(new URL(String(deleted.headers.location)).pathname).toBe('/v1/access/acquire');
  });

  it('keeps team spaces behind sign-in: a URL alone grants nothing', async () => {
    const u = await createUser(t, 'viewer');
    const s = await createSpace(t, u.token, { slug: 'team-only' });
    await publishViaVersions(t, s.id, { 'index.html': 'members only' }, { token: u.token });
    const res = await get('/', 'team-only.localhost');
    expect(res.status).toBe(302);
    const acquire = new URL(String(res.headers.location));
    expect(acquire.pathname).toBe('/v1/access/acquire');
    expect(acquire.searchParams.get('host')).toBe('team-only.localhost');
    // Not signed in on the API: a sign-in page, no hand-off.
    const page = await request(`${t.url}${acquire.pathname}${acquire.search}`);
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toContain('Sign in');
  });

  it('injects the team’s released tags into HTML, and respects disable_all_injection', async () => {
    const u = await createUser(t, 'tagger');
    const s = await createSpace(t, u.token, { slug: 'tagged-site', access: 'public' });
    await publishViaVersions(
      t,
      s.id,
      { 'index.html': '<html><head></head><body><p>page</p></body></html>', 'a.txt': 'x' },
      { token: u.token },
    );
    const base = `/v1/teams/${u.teamId}/tags`;
    const d = await t.api('POST', `${base}/versions`, { token: u.token });
    await t.api('PUT', `${base}/versions/${d.body.data.id}/graph`, {
      token: u.token,
      headers: { 'if-match': '"1"' },
      body: {
        graph: {
          tags: [
            {
              id: 'hello',
              type: 'script',
              consentCategory: 'necessary',
              config: { code: 'window.helloTag=1' },
            },
          ],
        },
      },
    });
    for (const step of ['submit', 'approve', 'publish']) {
      expect(
        (await t.api('POST', `${base}/versions/${d.body.data.id}/${step}`, { token: u.token })).status,
      ).toBe(200);
    }
    const page = await get('/', 'tagged-site.localhost');
    expect(page.text).toContain('window.helloTag=1');
    expect(page.text.indexOf('window.helloTag=1')).toBeLessThan(page.text.indexOf('</body>'));
    expect((await get('/a.txt', 'tagged-site.localhost')).text).toBe('x');
    await t.api('PATCH', `/v1/spaces/${s.id}`, {
      token: u.token,
      body: { config: { superpowers: { disable_all_injection: true } } },
    });
    expect((await get('/', 'tagged-site.localhost')).text).not.toContain('helloTag');
  });

  it('serves a site published in one call with payload access public', async () => {
    const fd = new FormData();
    fd.append('files', new Blob(['<h1>one call</h1>']), 'index.html');
    fd.set('payload', JSON.stringify({ access: 'public', title: 'One call' }));
    const res = await request(`${t.url}/v1/publish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.ownerKey}` },
      body: fd,
    });
    const body: any = await res.body.json();
    expect(res.statusCode).toBe(201);
    expect((await get('/', `${body.data.space.slug}.localhost`)).text).toContain('one call');
  });

  it('shows the unclaimed notice on anonymous spaces until the /__/<key> door is used', async () => {
    const { space: anon, key } = await t.server.services.anonymous.createSpace('198.51.100.99', {
      title: 'anon',
    });
    await publishViaVersions(t, anon.id, { 'index.html': 'anonymous content' }, { token: key });
    const host = `${anon.slug}.localhost`;
    const notice = await get('/', host);
    expect(notice.text).not.toContain('anonymous content');
    const door = await get(`/__/${key}`, host);
    expect(door.status).toBe(302);
    const cookie = String(door.headers['set-cookie']).split(';')[0]!;
    expect(String(door.headers['set-cookie'])).toMatch(/HttpOnly/);
    const inside = await get('/', host, { cookie });
    expect(inside.text).toContain('anonymous content');
    expect((await get('/__/sfc_wrong', host)).status).toBe(404);
    // A malformed escape is a wrong key too, not a 500.
    expect((await get('/__/%ZZ', host)).status).toBe(404);
  });
});
