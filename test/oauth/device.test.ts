import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { Browser, formOf, oauthPost, registerApp, signInUser } from './helpers.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

describeEachDb('OAuth device authorization (RFC 8628)', (db) => {
  let t: TestServer;
  let clock: ManualClock;
  let alice: Awaited<ReturnType<typeof signInUser>>;
  let browser: Browser;
  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    t = await startServer({ db, clock });
    alice = await signInUser(t, 'devicer');
    browser = new Browser(t.url);
  });
  afterAll(() => t.close());

  const start = (
    form: Record<string, string> = { client_id: 'spaces-cli', scope: 'teams:create teams:read' },
  ) => oauthPost(t, '/v1/auth/oauth2/device', form);
  const poll = (deviceCode: string, clientId = 'spaces-cli') =>
    oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: DEVICE_GRANT,
      device_code: deviceCode,
      client_id: clientId,
    });

  /** Opens verification_uri_complete, signs in if needed, and posts the decision. */
  async function decide(uri: string, decision: 'approve' | 'deny') {
    let page = await browser.get(uri);
    if (page.text.includes('action="/v1/auth/oauth2/signin"'))
      page = await browser.signInVia(page, alice.email);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    const form = formOf(page.text, '/device');
    expect(form.csrf_token).toBeTruthy();
    return browser.post('/device', { ...form, decision });
  }

  it('starts, polls pending, slows down, and issues a token once approved', async () => {
    const d = await start();
    expect(d.status).toBe(200);
    expect(d.headers['cache-control']).toBe('no-store');
    const base = t.server.services.config.publicUrl;
    expect(d.body).toMatchObject({
      verification_uri: `${base}/device`,
      expires_in: 600,
      interval: 5,
    });
    expect(d.body.device_code).toMatch(/^sfd_/);
    expect(d.body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(d.body.verification_uri_complete).toBe(`${base}/device?user_code=${d.body.user_code}`);

    const p1 = await poll(d.body.device_code);
    expect(p1.status).toBe(400);
    expect(p1.body.error).toBe('authorization_pending');
    const p2 = await poll(d.body.device_code); // no time passed: too fast
    expect(p2.body.error).toBe('slow_down');
    clock.advance(10_000); // the interval is now 10 s
    expect((await poll(d.body.device_code)).body.error).toBe('authorization_pending');

    const path =
      new URL(d.body.verification_uri_complete).pathname + new URL(d.body.verification_uri_complete).search;
    const page = await browser.get(path);
    // Not signed in yet: a sign-in form that comes back here.
    expect(page.text).toContain('action="/v1/auth/oauth2/signin"');
    const confirm = await browser.signInVia(page, alice.email);
    expect(confirm.text).toContain(d.body.user_code);
    expect(confirm.text).toContain('Spaces CLI');
    expect(confirm.text).toContain('<code>teams:create</code>');
    // A forged post (no CSRF token) changes nothing.
    const forged = await browser.post('/device', { user_code: d.body.user_code, decision: 'approve' });
    expect(forged.status).toBe(403);
    clock.advance(10_000);
    expect((await poll(d.body.device_code)).body.error).toBe('authorization_pending');

    const done = await browser.post('/device', { ...formOf(confirm.text, '/device'), decision: 'approve' });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Device connected');

    clock.advance(10_000);
    const tok = await poll(d.body.device_code);
    expect(tok.status).toBe(200);
    expect(tok.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'teams:create teams:read',
    });
    expect(tok.body.refresh_token).toBeUndefined();
    const created = await t.api('POST', '/v1/teams', {
      token: tok.body.access_token,
      body: { name: 'From device' },
    });
    expect(created.status).toBe(201);

    clock.advance(10_000);
    expect((await poll(d.body.device_code)).body.error).toBe('invalid_grant'); // single use
  });

  it('a device token without teams:create is refused with the scope named', async () => {
    const d = await start({ client_id: 'spaces-cli', scope: 'teams:read' });
    await decide(`/device?user_code=${d.body.user_code.toLowerCase().replace('-', '')}`, 'approve');
    const tok = await poll(d.body.device_code);
    expect(tok.status).toBe(200);
    const res = await t.api('POST', '/v1/teams', { token: tok.body.access_token, body: { name: 'x' } });
    expect(expectProblem(res, 403, 'forbidden').details.requiredScope).toBe('teams:create');
  });

  it('access tokens live one hour', async () => {
    const d = await start({ client_id: 'spaces-cli', scope: 'teams:read' });
    await decide(`/device?user_code=${d.body.user_code}`, 'approve');
    const tok = await poll(d.body.device_code);
    expect(tok.body.expires_in).toBe(3600);
    clock.advance(3599_000);
    expect((await t.api('GET', '/v1/teams', { token: tok.body.access_token })).status).toBe(200);
    clock.advance(2_000);
    expectProblem(await t.api('GET', '/v1/teams', { token: tok.body.access_token }), 401, 'unauthorized');
  });

  it('answers access_denied after a denial', async () => {
    const d = await start();
    const res = await decide(`/device?user_code=${d.body.user_code}`, 'deny');
    expect(res.text).toContain('Request denied');
    expect((await poll(d.body.device_code)).body.error).toBe('access_denied');
  });

  it('answers expired_token after 10 minutes, and the page refuses the code', async () => {
    const d = await start();
    clock.advance(601_000);
    expect((await poll(d.body.device_code)).body.error).toBe('expired_token');
    const page = await browser.get(`/device?user_code=${d.body.user_code}`);
    expect(page.status).toBe(400);
    expect(page.text).toContain('unknown, expired or used');
  });

  it('a device code works only for the client it was issued to', async () => {
    const d = await start();
    await decide(`/device?user_code=${d.body.user_code}`, 'approve');
    const other = await registerApp(t, alice.teamId, alice.token, { type: 'public', scopes: ['teams:read'] });
    expect((await poll(d.body.device_code, other.clientId)).body.error).toBe('invalid_grant');
    expect((await poll(d.body.device_code)).status).toBe(200);
  });

  it('refuses offline_access, unknown scopes and unknown clients', async () => {
    expect((await start({ client_id: 'spaces-cli', scope: 'offline_access' })).body.error).toBe(
      'invalid_scope',
    );
    expect((await start({ client_id: 'spaces-cli', scope: 'root' })).body.error).toBe('invalid_scope');
    const bad = await start({ client_id: 'nobody' });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('invalid_client');
    expect((await poll('sfd_unknown')).body.error).toBe('invalid_grant');
  });

  it('shows an entry form without a code, and rejects unknown codes', async () => {
    const form = await browser.get('/device');
    expect(form.status).toBe(200);
    expect(form.text).toContain('<label for="user_code">');
    const unknown = await browser.get('/device?user_code=BBBB-BBBB');
    expect(unknown.status).toBe(400);
  });

  it('prunes codes and tokens a day past their expiry', async () => {
    const { db } = t.server.services.database;
    const count = async () => {
      const codes = await db.selectFrom('oauth_device_codes').select('id').execute();
      const tokens = await db.selectFrom('oauth_tokens').select('id').execute();
      return codes.length + tokens.length;
    };
    expect(await count()).toBeGreaterThan(0);
    clock.advance(2 * 24 * 3600_000);
    const d = await start({ client_id: 'spaces-cli', scope: 'teams:read' });
    expect(d.status).toBe(200);
    const left = await db.selectFrom('oauth_device_codes').select('id').execute();
    expect(left).toHaveLength(1); // only the one just started
    expect((await db.selectFrom('oauth_tokens').select('id').execute()).length).toBe(0);
    expect(await count()).toBe(1);
  });

  it('rate-limits the device endpoint', async () => {
    clock.advance(120_000);
    let last = 0;
    for (let i = 0; i < 21; i++)
      last = (await start({ client_id: 'spaces-cli', scope: 'teams:read' })).status;
    expect(last).toBe(429);
    const res = await start({ client_id: 'spaces-cli', scope: 'teams:read' });
    expect(res.body.error).toBe('rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    clock.advance(61_000);
    expect((await start({ client_id: 'spaces-cli', scope: 'teams:read' })).status).toBe(200);
  });
});
