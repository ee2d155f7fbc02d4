/**
 * The dashboard over HTTP (issue 23): its page at `/` for browsers only on the API host, its assets,
 * and the browser session: a cookie that authenticates the API, with CSRF checks on every request
 * that changes state, and that never reaches a site's hostname.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const PASSWORD = 'correct horse battery';

/** The cookies a Set-Cookie list sets, by name, with their attributes. */
function cookiesOf(
  setCookie: string | string[] | undefined,
): Map<string, { value: string; attrs: string[] }> {
  const out = new Map<string, { value: string; attrs: string[] }>();
  for (const line of [setCookie ?? []].flat()) {
    const [pair, ...attrs] = line.split(';').map((s) => s.trim());
    const i = pair!.indexOf('=');
    out.set(pair!.slice(0, i), { value: decodeURIComponent(pair!.slice(i + 1)), attrs });
  }
  return out;
}

async function signIn(t: TestServer, email: string, headers: Record<string, string> = {}) {
  const res = await t.api('POST', '/v1/account/browser-sessions', {
    token: null,
    body: { email, password: PASSWORD },
    headers: { 'sec-fetch-site': 'same-origin', ...headers },
  });
  const jar = cookiesOf(res.headers['set-cookie']);
  const session = jar.get('spaces_session')?.value ?? '';
  const xsrf = jar.get('spaces_xsrf')?.value ?? '';
  return { res, jar, session, xsrf, cookie: `spaces_session=${session}; spaces_xsrf=${xsrf}` };
}

describeEachDb('dashboard sessions over HTTP', (db) => {
  let t: TestServer;
  let user: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    t = await startServer({ db });
    user = await createUser(t, 'dash');
  });
  afterAll(() => t?.close());

  it('serves the dashboard to browsers at / under a CSP without inline scripts, JSON to programs', async () => {
    const page = await t.api('GET', '/', { token: null, headers: { accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    const scriptSrc = /script-src ([^;]+)/.exec(csp)?.[1];
    expect(scriptSrc).toBe("'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    // Every script is an external file of this origin.
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/dashboard\/assets\/[^"]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(page.text).toContain('<meta name="spaces-signup" content="closed">');
    // Its assets answer, compressed, cached for good.
    for (const [, src] of page.text.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)) {
      const res = await request(`${t.url}${src}`, { headers: { 'accept-encoding': 'br, gzip' } });
      await res.body.dump();
      expect(res.statusCode, src).toBe(200);
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers['cache-control']).toContain('immutable');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    expectProblem(await t.api('GET', '/dashboard/assets/nothing.js', { token: null }), 404, 'not_found');
    // Programs keep their JSON.
    const json = await t.api('GET', '/', { token: null, headers: { accept: 'application/json' } });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.body.data.name).toBe('Spaces');
  });

  it('never serves the dashboard on a site hostname', async () => {
    for (const host of ['nothing-here.localhost', 'x.localhost']) {
      const res = await t.api('GET', '/', { token: null, host, headers: { accept: BROWSER_ACCEPT } });
      expect(res.text).not.toContain('/dashboard/assets/');
    }
    const asset = (await t.api('GET', '/', { token: null, headers: { accept: BROWSER_ACCEPT } })).text.match(
      /\/dashboard\/assets\/[^"]+\.js/,
    )![0];
    const onSite = await t.api('GET', asset, { token: null, host: 'x.localhost' });
    expect(onSite.status).not.toBe(200);
  });

  it('signs a browser in with an HttpOnly, SameSite=Lax, host-only cookie and no token in the body', async () => {
    const { res, jar, session, xsrf } = await signIn(t, user.email);
    expect(res.status).toBe(201);
    expect(res.body.data.user.email).toBe(user.email);
    expect(res.text).not.toContain('sfs_');
    expect(session).toMatch(/^sfs_/);
    const attrs = jar.get('spaces_session')!.attrs.map((a) => a.toLowerCase());
    expect(attrs).toContain('httponly');
    expect(attrs).toContain('samesite=lax');
    expect(attrs).toContain('path=/');
    // No Domain attribute: the browser sends it to this host only, never to `<site>.<base>`.
    expect(attrs.some((a) => a.startsWith('domain='))).toBe(false);
    expect(attrs).not.toContain('secure'); // plain HTTP here; see the HTTPS case below
    const xattrs = jar.get('spaces_xsrf')!.attrs.map((a) => a.toLowerCase());
    expect(xattrs).not.toContain('httponly');
    expect(xattrs.some((a) => a.startsWith('domain='))).toBe(false);
    expect(xsrf.length).toBeGreaterThan(20);
    // A wrong password is the API's problem, and sets nothing.
    const wrong = await t.api('POST', '/v1/account/browser-sessions', {
      token: null,
      body: { email: user.email, password: 'not the password' },
    });
    expectProblem(wrong, 401, 'invalid_credentials');
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('authenticates the API with the cookie; state changes need the CSRF token from the same origin', async () => {
    const { cookie, xsrf } = await signIn(t, user.email);
    const me = await t.api('GET', '/v1/account', { token: null, headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body.data.user.email).toBe(user.email);
    expect(me.body.data.credential.kind).toBe('session');

    const ok = await t.api('POST', '/v1/teams', {
      token: null,
      body: { name: 'Cookie Crew' },
      headers: { cookie, 'x-csrf-token': xsrf, 'sec-fetch-site': 'same-origin' },
    });
    expect(ok.status).toBe(201);
    // Older browsers (no Sec-Fetch-Site) pass on the token alone.
    const noFetchMeta = await t.api('POST', '/v1/teams', {
      token: null,
      body: { name: 'Cookie Crew 2' },
      headers: { cookie, 'x-csrf-token': xsrf },
    });
    expect(noFetchMeta.status).toBe(201);
  });

  it('refuses a cross-site state-changing request carrying the cookie with a problem document', async () => {
    const { cookie, xsrf } = await signIn(t, user.email);
    const before = (await t.api('GET', '/v1/teams', { token: user.token })).body.data.length;
    const attempts: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'cross-site' }, // a form or fetch from another site
      { 'sec-fetch-site': 'same-site' }, // a sibling subdomain: a site hosted here
      { 'sec-fetch-site': 'cross-site', 'x-csrf-token': xsrf }, // even with the right token
      {}, // no fetch metadata and no token
      { 'x-csrf-token': 'forged' },
      { 'sec-fetch-site': 'same-origin' }, // same origin but no token
    ];
    for (const h of attempts) {
      const res = await t.api('POST', '/v1/teams', {
        token: null,
        body: { name: 'Forged' },
        headers: { cookie, ...h },
      });
      const p = expectProblem(res, 403, 'csrf_failed');
      expect(p.detail).toBeTruthy();
      expect(p.suggestions?.length).toBeGreaterThan(0);
    }
    // DELETE and PATCH too.
    expectProblem(
      await t.api('DELETE', '/v1/account/browser-sessions/current', {
        token: null,
        headers: { cookie, 'sec-fetch-site': 'cross-site' },
      }),
      403,
      'csrf_failed',
    );
    expect((await t.api('GET', '/v1/teams', { token: user.token })).body.data.length).toBe(before);
    // A sign-in another site posts is refused (login CSRF).
    expectProblem(
      await t.api('POST', '/v1/account/browser-sessions', {
        token: null,
        body: { email: user.email, password: PASSWORD },
        headers: { 'sec-fetch-site': 'cross-site' },
      }),
      403,
      'csrf_failed',
    );
  });

  it('checks CSRF on every state-changing operation of the OpenAPI document that takes a credential', async () => {
    const { cookie, xsrf } = await signIn(t, user.email);
    const doc = (await t.api('GET', '/v1/openapi.json', { token: null })).body;
    const refused: string[] = [];
    const other: string[] = [];
    for (const [p, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (['get', 'head', 'options'].includes(method) || !op.security?.length) continue;
        const url = p.replace(/\{(\w+)\}/g, (_, n) => `x-${n}`);
        for (const headers of [
          { cookie, 'sec-fetch-site': 'cross-site', 'x-csrf-token': xsrf },
          { cookie, 'sec-fetch-site': 'same-origin' },
        ] as Array<Record<string, string>>) {
          const res = await t.api(method.toUpperCase(), url, { token: null, headers });
          if (res.status === 403 && res.body?.code === 'csrf_failed') refused.push(`${method} ${p}`);
          else other.push(`${method} ${p} → ${res.status} ${res.body?.code}`);
        }
      }
    }
    // Only operations that take a space key alone refuse the session before CSRF matters (403/401).
    for (const o of other) expect(o).toMatch(/ → (401 unauthorized|403 forbidden)$/);
    expect(
      other.every((o) => / \/v1\/claim\//.test(o)),
      other.join('\n'),
    ).toBe(true);
    expect(refused.length).toBeGreaterThan(2 * 40);
  });

  it('keeps Authorization working, without CSRF checks, and it wins over a cookie', async () => {
    const other = await createUser(t, 'dash-other');
    const { cookie } = await signIn(t, user.email);
    const res = await t.api('POST', '/v1/teams', {
      token: other.token,
      body: { name: 'Bearer Crew' },
      headers: { cookie, 'sec-fetch-site': 'cross-site' },
    });
    expect(res.status).toBe(201);
    const me = await t.api('GET', '/v1/account', { token: other.token, headers: { cookie } });
    expect(me.body.data.user.email).toBe(other.email);
    // A wrong bearer token is not rescued by the cookie.
    expectProblem(
      await t.api('GET', '/v1/account', { token: 'sfs_nope', headers: { cookie } }),
      401,
      'unauthorized',
    );
  });

  it('signs out: revokes the session and clears both cookies', async () => {
    const { cookie, xsrf } = await signIn(t, user.email);
    const out = await t.api('DELETE', '/v1/account/browser-sessions/current', {
      token: null,
      headers: { cookie, 'x-csrf-token': xsrf, 'sec-fetch-site': 'same-origin' },
    });
    expect(out.status).toBe(204);
    const jar = cookiesOf(out.headers['set-cookie']);
    expect(jar.get('spaces_session')?.value).toBe('');
    expect(jar.get('spaces_session')?.attrs).toContain('Max-Age=0');
    expect(jar.get('spaces_xsrf')?.attrs).toContain('Max-Age=0');
    expectProblem(
      await t.api('GET', '/v1/account', { token: null, headers: { cookie } }),
      401,
      'unauthorized',
    );
    // The JSON home still answers a stale cookie (no credential needed there).
    expect((await t.api('GET', '/', { token: null, headers: { cookie } })).status).toBe(200);
  });

  it('gives a session from the other sign-in pages its CSRF cookie when the dashboard loads', async () => {
    // The OAuth/device pages set only spaces_session; the dashboard's page adds spaces_xsrf.
    const cookie = `spaces_session=${user.token}`;
    const page = await t.api('GET', '/', { token: null, headers: { accept: BROWSER_ACCEPT, cookie } });
    const xsrf = cookiesOf(page.headers['set-cookie']).get('spaces_xsrf')?.value;
    expect(xsrf).toBeTruthy();
    const res = await t.api('POST', '/v1/teams', {
      token: null,
      body: { name: 'Paged Crew' },
      headers: { cookie, 'x-csrf-token': xsrf!, 'sec-fetch-site': 'same-origin' },
    });
    expect(res.status).toBe(201);
  });
});

describe('dashboard session cookie on HTTPS', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ env: { SPACES_PUBLIC_URL: 'https://spaces.example.test' } });
  });
  afterAll(() => t?.close());

  it('is Secure when the public URL is HTTPS', async () => {
    const user = await createUser(t, 'dash-https');
    const { res, jar } = await signIn(t, user.email, { host: 'spaces.example.test' });
    expect(res.status).toBe(201);
    expect(jar.get('spaces_session')!.attrs).toContain('Secure');
    expect(jar.get('spaces_xsrf')!.attrs).toContain('Secure');
  });
});
