import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliLoginCommand } from '../../src/config.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { Browser, formOf } from '../oauth/helpers.ts';

/** Issue #18, item 6: the sign-in URL the first start prints (`/`) is a page for browsers, JSON for programs. */
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

  it('shows browsers what the server is and a sign-in form, under a CSP without scripts', async () => {
    for (const accept of [BROWSER_ACCEPT, 'text/html']) {
      const res = await t.api('GET', '/', { token: null, headers: { accept } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain('script-src');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.text).not.toMatch(/<script/i);
      expect(res.text).toContain('self-hostable publishing service');
      expect(formOf(res.text, '/v1/auth/oauth2/signin')).toMatchObject({ return_to: '/' });
      expect(res.text).toContain('href="/docs"');
      expect(res.text).toContain('href="/v1/openapi.json"');
    }
  });

  it('signs the owner in with the same page session as the other pages, then shows the next steps', async () => {
    const b = new Browser(t.url);
    b.headers.accept = BROWSER_ACCEPT;
    const home = await b.get('/');
    const after = await b.signInVia(home, 'owner@localhost', t.server.bootstrap!.password);
    expect(after.status).toBe(200);
    expect(after.text).toContain('Signed in as <strong>owner@localhost</strong>');
    expect(after.text).toContain('npm link');
    // Not on the CLI's default address: the login command names this server.
    expect(after.text).toContain(`<code>spaces login --api-url ${t.server.services.config.publicUrl}</code>`);
    expect(after.text).toContain('spaces publish');
    expect(after.text).toContain('spaces teams set-default-access public');
    expect(after.text).toContain(`<code>${t.server.bootstrap!.teamSlug}</code>`);
    expect(after.text).not.toContain('action="/v1/auth/oauth2/signin"');
    // The same session works on the other pages (device login)…
    expect((await b.get('/device')).text).toContain('Enter the code your device shows');
    // …and a wrong password shows the form again, coming back home.
    const stranger = new Browser(t.url);
    stranger.headers.accept = BROWSER_ACCEPT;
    const form = formOf((await stranger.get('/')).text, '/v1/auth/oauth2/signin');
    const wrong = await stranger.post('/v1/auth/oauth2/signin', {
      ...form,
      email: 'owner@localhost',
      password: 'not the password',
    });
    expect(wrong.status).toBe(401);
    expect(formOf(wrong.text, '/v1/auth/oauth2/signin').return_to).toBe('/');

    // Sign out: a forged post does nothing; the page's own form ends the session.
    const forged = await b.post('/v1/auth/oauth2/signout', { csrf_token: 'forged' });
    expect(forged.status).toBe(303);
    expect((await b.get('/')).text).toContain('Signed in as');
    const out = await b.post('/v1/auth/oauth2/signout', formOf(after.text, '/v1/auth/oauth2/signout'));
    expect(out.status).toBe(303);
    expect(out.location).toBe('/');
    const again = await b.get('/');
    expect(again.text).toContain('action="/v1/auth/oauth2/signin"');
    expect(again.text).not.toContain('Signed in as');
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
    expect(res.text).not.toContain('action="/v1/auth/oauth2/signin"');
  });
});
