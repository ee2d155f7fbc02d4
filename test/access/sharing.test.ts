import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * Site access over real HTTP on the edge: a private space opened by a share link (token → cookie →
 * clean URL; revoke ends it at the next request), by a password (wrong → 401, rate-limited → 429,
 * right → session; rotation ends it), by a machine token in a header only, a public path from the
 * settings file's `access` key, logout-all, and Cache-Control: private for everything not public.
 */
interface Hit {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describeEachDb('sharing on the edge', (db) => {
  let t: TestServer;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let spaceId: string;
  let host: string;

  beforeAll(async () => {
    t = await startServer({ db });
    owner = await createUser(t, 'sharer');
    const s = await createSpace(t, owner.token, { access: 'private' });
    spaceId = s.id;
    const live = (await t.api('GET', `/v1/spaces/${spaceId}`, { token: owner.token })).body.data;
    host = new URL(live.url ?? live.liveUrl ?? `http://${s.slug}.localhost`).hostname;
    await publishViaVersions(
      t,
      spaceId,
      {
        'index.html': '<h1>home</h1>',
        'docs/a.html': '<h1>docs a</h1>',
        'open/page.html': 'open page',
        'secret/x.html': 'secret x',
        '_layout.html': '<html><body class="brand"><service-content></service-content></body></html>',
        'spaces.json': JSON.stringify({ access: { public: ['/open/**'] } }),
      },
      { token: owner.token },
    );
  });
  afterAll(() => t?.close());

  const site = async (
    path: string,
    headers: Record<string, string> = {},
    method = 'GET',
    body?: string,
  ): Promise<Hit> => {
    const r = await request(`${t.url}${path}`, {
      method: method as 'GET',
      headers: { host, ...headers },
      body,
    });
    return { status: r.statusCode, headers: r.headers as Hit['headers'], body: await r.body.text() };
  };
  const cookieOf = (h: Hit) => String([h.headers['set-cookie']].flat()[0]).split(';')[0]!;
  const api = (method: string, path: string, body?: unknown) =>
    t.api(method, `/v1/spaces/${spaceId}${path}`, { token: owner.token, body });

  it('keeps a private space unseen, and opens the paths the settings file makes public', async () => {
    expect((await site('/')).status).toBe(302);
    const open = await site('/open/page');
    expect(open.status).toBe(200);
    expect(open.body).toBe('open page');
    expect(String(open.headers['cache-control'])).not.toContain('private');
  });

  it('share link: served in place, cookie, clean URL; private cache; revoke ends it', async () => {
    const made = await api('POST', '/share-links', { landing: '/docs/a', paths: ['/docs/**'] });
    expect(made.status, made.text).toBe(201);
    const link = made.body.data;
    expect(link.role).toBe('commenter');
    const url = new URL(link.url);
    expect(url.pathname).toBe('/docs/a');
    const first = await site(`${url.pathname}${url.search}`);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/docs/a');
    const setCookie = String([first.headers['set-cookie']].flat()[0]);
    expect(setCookie).toMatch(/^__Host-spaces-session=.*; Path=\/; HttpOnly; Secure; SameSite=Lax/);
    const cookie = cookieOf(first);
    const page = await site('/docs/a', { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toBe('<h1>docs a</h1>');
    expect(page.headers['cache-control']).toBe('private, no-cache');
    // Outside the link's paths: as unseen as anything else.
    expect((await site('/secret/x', { cookie })).status).toBe(302);
    // An edit keeps the URL.
    const edited = await api('PATCH', `/share-links/${link.id}`, { name: 'client', role: 'viewer' });
    expect(edited.body.data.url).toBe(link.url);
    expect((await site('/docs/a', { cookie })).status).toBe(200);
    // A forged or unknown token reveals nothing.
    expect((await site('/docs/a?__=sl_nope')).status).toBe(302);
    expect((await api('DELETE', `/share-links/${link.id}`)).status).toBe(204);
    expect((await site('/docs/a', { cookie })).status).toBe(302);
    expect((await site(`${url.pathname}${url.search}`)).status).toBe(302);
    expectProblem(await api('DELETE', `/share-links/${link.id}`), 404, 'share_link_not_found');
  });

  it('share link with one use: a second visitor gets nothing', async () => {
    const link = (await api('POST', '/share-links', { constraints: { maxUses: 1 } })).body.data;
    const u = new URL(link.url);
    const a = await site(`${u.pathname}${u.search}`);
    expect(a.status).toBe(303);
    expect((await site('/', { cookie: cookieOf(a) })).status).toBe(200);
    expect((await site(`${u.pathname}${u.search}`)).status).toBe(302);
  });

  it('password: themed page, wrong → 401, right → session, rotation logs out, lockout → 429', async () => {
    const made = await api('POST', '/password-credentials', {
      password: 'open sesame',
      paths: ['/secret/**'],
    });
    expect(made.status, made.text).toBe(201);
    const cred = made.body.data;
    const page = await site('/secret/x', { accept: 'text/html' });
    expect(page.status).toBe(401);
    expect(page.body).toContain('class="brand"');
    expect(page.body).toContain('action="/__service/password"');
    expect(String(page.headers['content-security-policy'])).toContain("form-action 'self'");
    // Not covered by the password: unseen as before.
    expect((await site('/')).status).toBe(302);
    const form = (pw: string, ip: string) =>
      site(
        '/__service/password',
        { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
        'POST',
        new URLSearchParams({ password: pw, return: '/secret/x' }).toString(),
      );
    const wrong = await form('nope', '1.1.1.1');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('not right');
    const right = await form('open sesame', '1.1.1.1');
    expect(right.status).toBe(303);
    expect(right.headers.location).toBe('/secret/x');
    const cookie = cookieOf(right);
    const ok = await site('/secret/x', { cookie });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('secret x');
    expect(ok.headers['cache-control']).toBe('private, no-cache');
    const rotated = await api('POST', `/password-credentials/${cred.id}/rotate`, { password: 'new sesame!' });
    expect(rotated.status, rotated.text).toBe(200);
    expect((await site('/secret/x', { cookie })).status).toBe(401);
    // The limiter counts every attempt per space and address: the 11th within the window is refused.
    let last: Hit | null = null;
    for (let i = 0; i < 12; i++) last = await form('still wrong', '2.2.2.2');
    expect(last!.status).toBe(429);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('machine credential: header only, refused in the query, rotation replaces the token', async () => {
    const made = await api('POST', '/machine-credentials', { name: 'ci', role: 'editor' });
    expect(made.status, made.text).toBe(201);
    const { token, id } = made.body.data;
    expect(token).toMatch(/^smc_/);
    expect((await api('GET', '/machine-credentials')).body.data[0]).not.toHaveProperty('token');
    expect((await site('/', { 'x-spaces-access-token': token })).status).toBe(200);
    expect((await site('/', { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await site(`/?token=${token}`)).status).toBe(400);
    expect((await site('/', { 'x-spaces-access-token': 'smc_wrong' })).status).toBe(302);
    const rotated = await api('POST', `/machine-credentials/${id}/rotate`, {});
    expect((await site('/', { 'x-spaces-access-token': token })).status).toBe(302);
    expect((await site('/', { 'x-spaces-access-token': rotated.body.data.token })).status).toBe(200);
    expect((await api('DELETE', `/machine-credentials/${id}`)).status).toBe(204);
    expect((await site('/', { 'x-spaces-access-token': rotated.body.data.token })).status).toBe(302);
  });

  it('logout-all ends link sessions (the link still starts new ones)', async () => {
    const link = (await api('POST', '/share-links', {})).body.data;
    const u = new URL(link.url);
    const cookie = cookieOf(await site(`${u.pathname}${u.search}`));
    expect((await site('/', { cookie })).status).toBe(200);
    const out = await api('POST', '/sharing/logout-all');
    expect(out.status, out.text).toBe(200);
    expect((await site('/', { cookie })).status).toBe(302);
    const again = cookieOf(await site(`${u.pathname}${u.search}`));
    expect((await site('/', { cookie: again })).status).toBe(200);
  });
});
