import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

// What a `_redirects` rule substitutes into its destination, and where it points, seen from a
// visitor of a served site: captures are encoded for the position they sit in (they can never add
// a query parameter, a fragment, a segment or a host), `?` inside a fragment is not a query, and a
// rule that sends a URL back to itself on one of the space's own hostnames never goes live.

describeEachDb('routing destinations on a served site', (db) => {
  let t: TestServer;
  let upstream: http.Server;
  /** Request targets the proxy upstream received, in order. */
  const seen: string[] = [];
  let up = '';

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('upstream');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as AddressInfo).port;
    up = `http://127.0.0.1:${port}`;
    t = await startServer({ db, env: { SPACES_PROXY_ALLOW: `127.0.0.1:${port}` } });
    const space = await createSpace(t, undefined, { slug: 'dest-site', access: 'public' });
    await publishViaVersions(t, space.id, {
      'index.html': 'home',
      _redirects: [
        '/ url=:url /get?url=:url 302',
        '/seg/:name /people/:name 302',
        '/files/* /store/:splat 302',
        '/q q=:q /docs/:q 302',
        '/frag /page#a?b 302',
        `/api q=:q ${up}/echo?q=:q 200`,
        `/item w=:w ${up}/v1/items/:w 200`,
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await t.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  const get = (path: string, host = 'dest-site.localhost', headers: Record<string, string> = {}) =>
    t.api('GET', path, { token: null, host, headers });

  it('encodes a query capture as a query value: it never adds a parameter', async () => {
    const r = await get('/?url=x%26admin%3D1');
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('/get?url=x%26admin%3D1');
    expect(new URL(String(r.headers.location), 'http://h').searchParams.get('admin')).toBeNull();
    const plus = await get('/?url=a%2Bb%20c%23d');
    expect(plus.headers.location).toBe('/get?url=a%2Bb%20c%23d');
  });

  it('encodes path captures: a segment keeps no `/`, `?` or `#`; a splat keeps only its `/`', async () => {
    expect((await get('/seg/a%3Fb%23c')).headers.location).toBe('/people/a%3Fb%23c');
    expect((await get('/files/a/b%3Fc%23d')).headers.location).toBe('/store/a/b%3Fc%23d');
    expect((await get('/q?q=a%2Fb%3Fc')).headers.location).toBe('/docs/a%2Fb%3Fc');
  });

  it('a capture that would make a `.` or `..` segment does not fire the rule', async () => {
    for (const q of ['..', '.', '%2e%2e']) expect((await get(`/q?q=${q}`)).status).toBe(404);
  });

  it('keeps `?` inside a fragment and merges the request query before the `#`', async () => {
    const r = await get('/frag?x=1');
    expect(r.headers.location).toBe('/page?x=1#a?b');
    expect((await get('/frag')).headers.location).toBe('/page#a?b');
  });

  it('proxies to the encoded destination: no new parameter, no path escape upstream', async () => {
    seen.length = 0;
    const r = await get('/api?q=x%26admin%3D1');
    expect(r.status).toBe(200);
    expect((await get('/item?w=..')).status).toBe(404);
    expect((await get('/item?w=a%2F..%2Fsecret')).status).toBe(200);
    expect(seen).toEqual(['/echo?q=x%26admin%3D1', '/v1/items/a%2F..%2Fsecret']);
  });

  it('refuses at finalize a redirect to the same URL on one of the space’s own hostnames', async () => {
    const s = await createSpace(t, undefined, { slug: 'loop-site', access: 'public' });
    const cases = [
      '/a https://loop-site.localhost/a 301',
      `/a http://loop-site.localhost:${t.port}/a/ 302`,
      '/a https://preview--loop-site.localhost/b 301\n/b https://LOOP-SITE.localhost/a 301',
      '/a/* https://loop-site.localhost/a/:splat 308',
    ];
    for (const rules of cases) {
      await expect(publishViaVersions(t, s.id, { 'index.html': 'x', _redirects: rules })).rejects.toThrow(
        /redirect_loop/,
      );
    }
    // Another space's hostname is not this space's: no loop there.
    await publishViaVersions(t, s.id, {
      'index.html': 'x',
      _redirects: '/a https://dest-site.localhost/a 301',
    });
  });

  it('answers 508 instead of redirecting to itself when a loop only shows at serve time', async () => {
    // A rule aimed at a hostname the space only gets later (a rename) is fine at finalize.
    const s = await createSpace(t, undefined, { slug: 'before-loop', access: 'public' });
    await publishViaVersions(t, s.id, {
      'index.html': 'x',
      _redirects: '/a https://after-loop.localhost/a 301\n/b https://after-loop.localhost/c 301',
    });
    expect((await get('/a', 'before-loop.localhost')).headers.location).toBe(
      'https://after-loop.localhost/a',
    );
    await t.api('POST', `/v1/spaces/${s.id}/rename`, { body: { slug: 'after-loop' } });
    const html = await get('/a', 'after-loop.localhost');
    expect(html.status).toBe(508);
    expect(html.headers.location).toBeUndefined();
    const json = await get('/a', 'after-loop.localhost', { accept: 'application/json' });
    expect(json.status).toBe(508);
    expect(json.headers['content-type']).toBe('application/problem+json');
    expect(json.body).toMatchObject({ status: 508, code: 'redirect_loop' });
    // Other rules of the version still redirect.
    expect((await get('/b', 'after-loop.localhost')).headers.location).toBe('https://after-loop.localhost/c');
  });
});
