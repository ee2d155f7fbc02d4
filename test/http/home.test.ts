import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliLoginCommand } from '../../src/config.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { Browser } from '../oauth/helpers.ts';

/** Issue #18, item 6 and #23: the URL the first start prints (`/`) is the dashboard for browsers, JSON for programs. */
describe('the home page (GET /)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

  it('answers programs with JSON links (no Accept, */*, application/json)', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html']) {
      const res = await t.api('GET', '/', { token: null, headers: accept ? { accept } : {} });
      expect(res.status, accept).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.vary).toContain('Accept');
      expect(res.body.$schema).toMatch(/\/schemas\/ServiceIndexResponse\.json$/);
      expect(res.body.data.name).toBe('Spaces');
    }
    const { links } = (await t.api('GET', '/', { token: null })).body.data;
    for (const url of [links.openapi, links.docs, links.docsIndex, links.llms]) {
      const res = await request(url);
      await res.body.dump();
      expect(res.statusCode, url).toBe(200);
    }
  });

  it('shows browsers the dashboard: its page, with scripts only from this origin (test/dashboard/)', async () => {
    for (const accept of [BROWSER_ACCEPT, 'text/html']) {
      const res = await t.api('GET', '/', { token: null, headers: { accept } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.text).toMatch(
        /<script type="module" crossorigin src="\/dashboard\/assets\/[^"]+\.js"><\/script>/,
      );
      expect(res.headers.vary).toContain('Accept');
    }
  });

  it('shares the page session of the other HTML pages: signed in on /device, the dashboard is too', async () => {
    const b = new Browser(t.url);
    b.headers.accept = BROWSER_ACCEPT;
    const device = await b.get('/device');
    await b.signInVia(device, 'owner@localhost', t.server.bootstrap!.password);
    expect((await b.get('/device')).text).toContain('Enter the code your device shows');
    // The dashboard's page adds the CSRF cookie its scripts send back; the API knows the person.
    const home = await b.get('/');
    expect(home.status).toBe(200);
    expect(b.cookies.get('spaces_xsrf')).toBeTruthy();
    const me = await b.get('/v1/account');
    expect(me.status).toBe(200);
    expect(JSON.parse(me.text).data.user.email).toBe('owner@localhost');
    // The pages' own sign-out form refuses a forged token: nothing happens.
    const forged = await b.post('/v1/auth/oauth2/signout', { csrf_token: 'forged' });
    expect(forged.status).toBe(303);
    expect((await b.get('/v1/account')).status).toBe(200);
  });

  it('says plain `spaces login` only where the CLI looks by default', () => {
    expect(cliLoginCommand('http://localhost:8080')).toBe('spaces login');
    expect(cliLoginCommand('http://localhost:8080/')).toBe('spaces login');
    expect(cliLoginCommand('http://localhost:8081')).toBe('spaces login --api-url http://localhost:8081');
    expect(cliLoginCommand('https://spaces.example.com')).toBe(
      'spaces login --api-url https://spaces.example.com',
    );
  });

  it('leaves site hosts to the sites', async () => {
    const res = await t.api('GET', '/', {
      token: null,
      host: 'nothing-here.localhost',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(res.status).not.toBe(200);
    expect(res.text).not.toContain('/dashboard/assets/');
  });
});
