import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { authorizeInBrowser, Browser, formOf, oauthPost, signInUser } from '../oauth/helpers.ts';
import { type CliEnv, cli, cliEnv, cliStart } from './helpers.ts';

// `spaces login` end to end: the test is the person at the browser, speaking HTTP to the real server.
let t: TestServer;
/** The server's clock runs with real time (device polling needs it) plus what a test adds. */
let skewMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + skewMs) };
let user: Awaited<ReturnType<typeof signInUser>>;

beforeAll(async () => {
  t = await startServer({ clock });
  user = await signInUser(t, 'cli-login');
});
afterAll(async () => {
  await t.close();
});

const profileOf = (e: CliEnv) =>
  JSON.parse(fs.readFileSync(path.join(e.configDir, 'config.json'), 'utf8')).profiles.default;

describe('spaces login', () => {
  it('logs in in the browser (authorization code + PKCE, loopback redirect) and renews itself afterwards', async () => {
    const e = cliEnv(t.url);
    // No DISPLAY here: the CLI prints the URL to open instead of opening a browser.
    const run = cliStart(e, ['login']);
    const [, printed] = await run.waitForStderr(/open this URL in a browser on this machine:\n\s+(\S+)/);
    const url = new URL(printed!);
    expect(url.origin + url.pathname).toBe(`${t.url}/v1/auth/oauth2/authorize`);
    expect(url.searchParams.get('client_id')).toBe('spaces-cli');
    expect(url.searchParams.get('scope')?.split(' ')).toContain('offline_access');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    const redirectUri = url.searchParams.get('redirect_uri')!;
    expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);

    // Sign in, approve the consent page, follow the redirect to the CLI's loopback port.
    const back = await authorizeInBrowser(
      new Browser(t.url),
      user.email,
      Object.fromEntries(url.searchParams),
    );
    expect(back.origin + back.pathname).toBe(redirectUri);
    const landing = await request(back.toString());
    expect(landing.statusCode).toBe(200);
    expect(await landing.body.text()).toContain('You are logged in');
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`Logged in to ${t.url} as ${user.email}`);
    expect(done.stdout).toContain('renews itself');
    const first = profileOf(e);
    expect(first).toMatchObject({ tokenKind: 'oauth', token: expect.stringMatching(/^sfo_/) });
    expect(first.refreshToken).toMatch(/^sfr_/);
    expect(Date.parse(first.expiresAt) - Date.now()).toBeGreaterThan(50 * 60_000);

    // Two hours later the access token has expired (the server refuses it); the next command renews
    // the login with the refresh token and works.
    skewMs += 2 * 3600_000;
    expect((await t.api('GET', '/v1/account', { token: first.token })).status).toBe(401);
    const who = await cli(e, ['whoami', '--json']);
    expect(who.code, who.stderr).toBe(0);
    expect(who.json().user.email).toBe(user.email);
    const renewed = profileOf(e);
    expect(renewed.token).not.toBe(first.token);
    expect(renewed.refreshToken).not.toBe(first.refreshToken);
    // A command that writes goes through too (spaces:write, publish:write).
    const site = path.join(e.cwd, 'site');
    fs.mkdirSync(site);
    fs.writeFileSync(path.join(site, 'index.html'), '<h1>from an OAuth login</h1>');
    const pub = await cli(e, ['publish', 'site', '--json']);
    expect(pub.code, pub.stdout + pub.stderr).toBe(0);

    // The recorded expiry passed (the server would still take the token): renewed before the request.
    const cfgFile = path.join(e.configDir, 'config.json');
    const cfg = JSON.parse(fs.readFileSync(cfgFile, 'utf8'));
    cfg.profiles.default.expiresAt = new Date(Date.now() - 1000).toISOString();
    fs.writeFileSync(cfgFile, JSON.stringify(cfg));
    expect((await cli(e, ['whoami'])).code).toBe(0);
    const early = profileOf(e);
    expect(early.token).not.toBe(renewed.token);
    expect(Date.parse(early.expiresAt)).toBeGreaterThan(Date.now());

    // Logging out ends the whole login: its refresh token is refused from then on.
    const out = await cli(e, ['logout', '--json']);
    expect(out.json()).toMatchObject({ loggedOut: true, revoked: true });
    const spent = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: early.refreshToken,
      client_id: 'spaces-cli',
    });
    expect(spent.body.error).toBe('invalid_grant');
  });

  it('logs in with --device: the code is approved on the device page; it lasts an hour and says so', async () => {
    const e = cliEnv(t.url);
    const run = cliStart(e, ['login', '--device']);
    const [, complete] = await run.waitForStderr(/\(or open (\S+)\)/);
    const b = new Browser(t.url);
    const u = new URL(complete!);
    let page = await b.get(u.pathname + u.search);
    if (page.text.includes('action="/v1/auth/oauth2/signin"')) page = await b.signInVia(page, user.email);
    expect(page.status).toBe(200);
    const approved = await b.post('/device', { ...formOf(page.text, '/device'), decision: 'approve' });
    expect(approved.status).toBeLessThan(400);
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain('This login lasts 1 hour');
    expect(done.stdout).toContain('API key');
    const p = profileOf(e);
    expect(p.token).toMatch(/^sfo_/);
    expect(p.refreshToken).toBeUndefined();
    const who = await cli(e, ['whoami', '--json']);
    expect(who.code, who.stderr).toBe(0);
    expect(who.json().user.email).toBe(user.email);
  });

  it('says at once, with what to check, when no server answers at the address (both ways)', async () => {
    // A port nothing listens on: a newcomer whose server runs on another port than the CLI's default.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const nowhere = `http://127.0.0.1:${(probe.address() as net.AddressInfo).port}`;
    await new Promise((resolve) => probe.close(resolve));
    for (const args of [['login'], ['login', '--device']]) {
      const started = Date.now();
      const r = await cli(cliEnv(nowhere), args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(`Could not reach ${nowhere}: ECONNREFUSED.`);
      expect(r.stderr).toContain(
        `hint: Is the server running at ${nowhere}? For another address give --api-url <url> or set SPACES_API_URL.`,
      );
      // The browser login does not wait for a browser that could not load the page either.
      expect(r.stderr).not.toContain('open this URL');
      expect(Date.now() - started).toBeLessThan(20_000);
    }
  });
});
