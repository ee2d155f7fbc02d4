import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { Browser, formOf, registerApp, signInUser } from './helpers.ts';

/** A standard OAuth client library (oauth4webapi) against the server, discovery included. */
describeEachDb('oauth4webapi against the authorization server', (db) => {
  let t: TestServer;
  let clock: ManualClock;
  let alice: Awaited<ReturnType<typeof signInUser>>;
  let as: oauth.AuthorizationServer;
  let browser: Browser;
  // The issuer is the public URL (http://localhost:<port>); requests go to the listener directly.
  const options = () => ({
    [oauth.allowInsecureRequests]: true,
    [oauth.customFetch]: (url: string, init: RequestInit) =>
      fetch(url.replace(t.server.services.config.publicUrl, t.url), init),
  });

  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    t = await startServer({ db, clock });
    alice = await signInUser(t, 'libuser');
    browser = new Browser(t.url);
    const issuer = new URL(t.server.services.config.publicUrl);
    const res = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...options() });
    as = await oauth.processDiscoveryResponse(issuer, res);
  });
  afterAll(() => t.close());

  it('discovers the server', () => {
    expect(as.token_endpoint).toBe(`${t.server.services.config.publicUrl}/v1/auth/oauth2/token`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('completes authorization code + PKCE with a confidential client and refreshes', async () => {
    const app = await registerApp(t, alice.teamId, alice.token, {
      redirectUris: ['https://lib.example.com/cb'],
      scopes: ['teams:create', 'teams:read', 'offline_access'],
    });
    const client: oauth.Client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.clientSecret!);
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('client_id', client.client_id);
    url.searchParams.set('redirect_uri', 'https://lib.example.com/cb');
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', 'teams:create offline_access');
    url.searchParams.set('code_challenge', challenge);
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('state', state);

    let page = await browser.get(url.pathname + url.search);
    page = await browser.signInVia(page, alice.email);
    const res = await browser.post('/v1/auth/oauth2/authorize', {
      ...formOf(page.text, '/v1/auth/oauth2/authorize'),
      decision: 'approve',
    });
    expect(res.status).toBe(303);

    const params = oauth.validateAuthResponse(as, client, new URL(res.location!), state);
    const tokenRes = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      params,
      'https://lib.example.com/cb',
      verifier,
      options(),
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenRes);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('teams:create offline_access');
    const created = await t.api('POST', '/v1/teams', {
      token: tokens.access_token,
      body: { name: 'lib team' },
    });
    expect(created.status).toBe(201);
    const denied = await t.api('GET', '/v1/teams', { token: tokens.access_token });
    expect(expectProblem(denied, 403, 'forbidden').details.requiredScope).toBe('teams:read');

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, options()),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    // A reused code surfaces as the library's invalid_grant error.
    const again = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      params,
      'https://lib.example.com/cb',
      verifier,
      options(),
    );
    await expect(oauth.processAuthorizationCodeResponse(as, client, again)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('completes the device flow as the built-in CLI client', async () => {
    const client: oauth.Client = { client_id: 'spaces-cli' };
    const none = oauth.None();
    const started = await oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(as, client, none, { scope: 'teams:create' }, options()),
    );
    expect(started.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);

    const poll = async () =>
      oauth.processDeviceCodeResponse(
        as,
        client,
        await oauth.deviceCodeGrantRequest(as, client, none, started.device_code, options()),
      );
    await expect(poll()).rejects.toMatchObject({ error: 'authorization_pending' });

    const complete = new URL(started.verification_uri_complete!);
    let page = await browser.get(complete.pathname + complete.search);
    if (page.text.includes('action="/v1/auth/oauth2/signin"'))
      page = await browser.signInVia(page, alice.email);
    const done = await browser.post('/device', { ...formOf(page.text, '/device'), decision: 'approve' });
    expect(done.status).toBe(200);

    clock.advance(started.interval! * 1000);
    const tokens = await poll();
    expect(tokens.scope).toBe('teams:create');
    const created = await t.api('POST', '/v1/teams', {
      token: tokens.access_token,
      body: { name: 'device lib' },
    });
    expect(created.status).toBe(201);
  });
});
