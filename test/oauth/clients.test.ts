import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { authorizeInBrowser, Browser, formOf, oauthPost, pkce, registerApp, signInUser } from './helpers.ts';

describeEachDb('OAuth client credentials, revocation, introspection, metadata', (db) => {
  let t: TestServer;
  let alice: Awaited<ReturnType<typeof signInUser>>;
  let machine: { clientId: string; clientSecret: string | null };
  let spa: { clientId: string; clientSecret: string | null };
  let browser: Browser;
  beforeAll(async () => {
    t = await startServer({ db });
    alice = await signInUser(t, 'cc');
    machine = await registerApp(t, alice.teamId, alice.token, {
      name: 'Machine',
      scopes: ['teams:read', 'teams:create', 'offline_access'],
    });
    spa = await registerApp(t, alice.teamId, alice.token, {
      name: 'SPA',
      type: 'public',
      redirectUris: ['https://spa.example.com/cb'],
      scopes: ['teams:read', 'offline_access'],
    });
    browser = new Browser(t.url);
  });
  afterAll(() => t.close());

  const cc = (form: Record<string, string>, basic = true) =>
    oauthPost(
      t,
      '/v1/auth/oauth2/token',
      basic ? { grant_type: 'client_credentials', ...form } : { grant_type: 'client_credentials', ...form },
      basic ? { id: machine.clientId, secret: machine.clientSecret! } : undefined,
    );

  it('issues client-credentials tokens (basic and post) acting for the app’s team only', async () => {
    const viaBasic = await cc({ scope: 'teams:read' });
    expect(viaBasic.status).toBe(200);
    expect(viaBasic.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'teams:read' });
    expect(viaBasic.body.refresh_token).toBeUndefined();
    const viaPost = await cc({ client_id: machine.clientId, client_secret: machine.clientSecret! }, false);
    expect(viaPost.status).toBe(200);
    expect(viaPost.body.scope).toBe('teams:read teams:create'); // default: allowed scopes minus offline_access

    const principal = await t.server.services.credentials.resolve(viaBasic.body.access_token);
    expect(principal).toMatchObject({
      kind: 'client',
      userId: null,
      teamIds: [alice.teamId],
      clientId: machine.clientId,
    });

    // Scope check first: teams:create is missing from this token.
    const noScope = await t.api('POST', '/v1/teams', {
      token: viaBasic.body.access_token,
      body: { name: 'x' },
    });
    expect(expectProblem(noScope, 403, 'forbidden').details.requiredScope).toBe('teams:create');
  });

  it('refuses offline_access, scopes beyond the app, public clients and bad secrets', async () => {
    expect((await cc({ scope: 'offline_access' })).body.error).toBe('invalid_scope');
    expect((await cc({ scope: 'domains:write' })).body.error).toBe('invalid_scope');
    const pub = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'client_credentials',
      client_id: spa.clientId,
    });
    expect(pub.body.error).toBe('unauthorized_client');
    const bad = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      { grant_type: 'client_credentials' },
      { id: machine.clientId, secret: 'sfcs_nope' },
    );
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('invalid_client');
    expect(bad.headers['www-authenticate']).toMatch(/^Basic/);
    const both = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      { grant_type: 'client_credentials', client_secret: machine.clientSecret! },
      { id: machine.clientId, secret: machine.clientSecret! },
    );
    expect(both.body.error).toBe('invalid_request');
    // A confidential client must authenticate: its client_id alone is not enough.
    const idOnly = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'client_credentials',
      client_id: machine.clientId,
    });
    expect(idOnly.body.error).toBe('invalid_client');
  });

  it('answers JSON bodies too, and OAuth errors rather than problem documents', async () => {
    const res = await t.api('POST', '/v1/auth/oauth2/token', {
      token: null,
      body: {
        grant_type: 'client_credentials',
        client_id: machine.clientId,
        client_secret: machine.clientSecret,
      },
    });
    expect(res.status).toBe(200);
    const err = await t.api('POST', '/v1/auth/oauth2/token', {
      token: null,
      body: { grant_type: ['a', 'b'] },
    });
    expect(err.status).toBe(400);
    expect(String(err.headers['content-type'])).toMatch(/^application\/json/);
    expect(err.body.error).toBe('invalid_request');
    const repeated = await t.api('POST', '/v1/auth/oauth2/token', {
      token: null,
      raw: `grant_type=client_credentials&grant_type=client_credentials&client_id=${machine.clientId}&client_secret=${machine.clientSecret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(repeated.status).toBe(400);
    expect(repeated.body.error).toBe('invalid_request');
    // Even unreadable bodies and other media types get OAuth errors on this endpoint.
    const broken = await t.api('POST', '/v1/auth/oauth2/token', {
      token: null,
      raw: '{"grant_type":',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    const text = await t.api('POST', '/v1/auth/oauth2/token', {
      token: null,
      raw: 'grant_type=client_credentials',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.body.error).toBe('invalid_request');
    expect(text.headers['cache-control']).toBe('no-store');
  });

  it('introspects its own tokens; revocation makes them inactive', async () => {
    const tok = await cc({ scope: 'teams:read' });
    const basic = { id: machine.clientId, secret: machine.clientSecret! };
    const info = await oauthPost(t, '/v1/auth/oauth2/introspect', { token: tok.body.access_token }, basic);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      active: true,
      scope: 'teams:read',
      client_id: machine.clientId,
      token_type: 'Bearer',
    });
    expect(info.body.exp - info.body.iat).toBe(3600);

    // Public clients cannot introspect.
    const pub = await oauthPost(t, '/v1/auth/oauth2/introspect', {
      token: tok.body.access_token,
      client_id: spa.clientId,
    });
    expect(pub.body.error).toBe('unauthorized_client');
    // Another confidential client learns nothing about it.
    const other = await registerApp(t, alice.teamId, alice.token, { name: 'Nosy', scopes: ['teams:read'] });
    const nosy = await oauthPost(
      t,
      '/v1/auth/oauth2/introspect',
      { token: tok.body.access_token },
      { id: other.clientId, secret: other.clientSecret! },
    );
    expect(nosy.body).toEqual({ active: false });
    // …and cannot revoke it (200, but nothing happens).
    const nosyRevoke = await oauthPost(
      t,
      '/v1/auth/oauth2/revoke',
      { token: tok.body.access_token },
      { id: other.clientId, secret: other.clientSecret! },
    );
    expect(nosyRevoke.status).toBe(200);
    expect((await t.api('GET', '/v1/teams', { token: tok.body.access_token })).status).toBe(200);

    const rev = await oauthPost(
      t,
      '/v1/auth/oauth2/revoke',
      { token: tok.body.access_token, token_type_hint: 'access_token' },
      basic,
    );
    expect(rev.status).toBe(200);
    expectProblem(await t.api('GET', '/v1/teams', { token: tok.body.access_token }), 401, 'unauthorized');
    const after = await oauthPost(t, '/v1/auth/oauth2/introspect', { token: tok.body.access_token }, basic);
    expect(after.body).toEqual({ active: false });
    // Unknown tokens: 200 as RFC 7009 says.
    expect((await oauthPost(t, '/v1/auth/oauth2/revoke', { token: 'sfo_nothing' }, basic)).status).toBe(200);
  });

  it('a public client revokes its refresh token, ending the grant', async () => {
    const p = pkce();
    const back = await authorizeInBrowser(browser, alice.email, {
      response_type: 'code',
      client_id: spa.clientId,
      redirect_uri: 'https://spa.example.com/cb',
      scope: 'teams:read offline_access',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    });
    const tok = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'authorization_code',
      client_id: spa.clientId,
      code: back.searchParams.get('code')!,
      redirect_uri: 'https://spa.example.com/cb',
      code_verifier: p.verifier,
    });
    expect(tok.status).toBe(200);
    expect(tok.body.refresh_token).toMatch(/^sfr_/);
    // A public client sending a secret is not authenticated.
    const withSecret = await oauthPost(t, '/v1/auth/oauth2/revoke', {
      token: tok.body.refresh_token,
      client_id: spa.clientId,
      client_secret: 'x',
    });
    expect(withSecret.body.error).toBe('invalid_client');
    const rev = await oauthPost(t, '/v1/auth/oauth2/revoke', {
      token: tok.body.refresh_token,
      client_id: spa.clientId,
    });
    expect(rev.status).toBe(200);
    expectProblem(await t.api('GET', '/v1/teams', { token: tok.body.access_token }), 401, 'unauthorized');
    const refresh = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'refresh_token',
      client_id: spa.clientId,
      refresh_token: tok.body.refresh_token,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('an OAuth access token cannot mint an API key that would outlive it', async () => {
    // The token holds every scope of the ci_deploy preset, so only the credential kind stops it.
    const d = await oauthPost(t, '/v1/auth/oauth2/device', {
      client_id: 'spaces-cli',
      scope: 'spaces:read publish:write spaces:publish builds:trigger',
    });
    let page = await browser.get(`/device?user_code=${d.body.user_code}`);
    if (page.text.includes('action="/v1/auth/oauth2/signin"'))
      page = await browser.signInVia(page, alice.email);
    await browser.post('/device', { ...formOf(page.text, '/device'), decision: 'approve' });
    const tok = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: d.body.device_code,
      client_id: 'spaces-cli',
    });
    expect(tok.status).toBe(200);
    const res = await t.api('POST', '/v1/account/api-keys', {
      token: tok.body.access_token,
      body: { name: 'escape', team: alice.teamId, preset: 'ci_deploy' },
    });
    expectProblem(res, 403, 'forbidden');
  });

  it('the built-in CLI client uses a loopback redirect on any port, and nothing else', async () => {
    const p = pkce();
    const q = (redirect: string) => ({
      response_type: 'code',
      client_id: 'spaces-cli',
      redirect_uri: redirect,
      scope: 'teams:create',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    });
    const back = await authorizeInBrowser(browser, alice.email, q('http://127.0.0.1:49152/callback'));
    expect(back.origin).toBe('http://127.0.0.1:49152');
    const tok = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'authorization_code',
      client_id: 'spaces-cli',
      code: back.searchParams.get('code')!,
      redirect_uri: 'http://127.0.0.1:49152/callback',
      code_verifier: p.verifier,
    });
    expect(tok.status).toBe(200);
    expect(
      (await t.api('POST', '/v1/teams', { token: tok.body.access_token, body: { name: 'CLI team' } })).status,
    ).toBe(201);
    for (const bad of [
      'http://localhost:49152/callback',
      'http://127.0.0.1:49152/callback/',
      'http://127.0.0.1:49152/other',
      'http://127.0.0.1:99999/callback',
      'https://127.0.0.1:49152/callback',
      'http://127.0.0.1.evil.example/callback',
    ]) {
      const res = await browser.get(`/v1/auth/oauth2/authorize?${new URLSearchParams(q(bad))}`);
      expect(res.status, bad).toBe(400);
      expect(res.location).toBeNull();
    }
  });

  it('publishes RFC 8414 metadata describing what is implemented', async () => {
    const res = await t.api('GET', '/.well-known/oauth-authorization-server', { token: null });
    expect(res.status).toBe(200);
    const base = t.server.services.config.publicUrl;
    expect(res.body).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/v1/auth/oauth2/authorize`,
      token_endpoint: `${base}/v1/auth/oauth2/token`,
      device_authorization_endpoint: `${base}/v1/auth/oauth2/device`,
      revocation_endpoint: `${base}/v1/auth/oauth2/revoke`,
      introspection_endpoint: `${base}/v1/auth/oauth2/introspect`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: [
        'authorization_code',
        'refresh_token',
        'client_credentials',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    });
    expect(res.body.scopes_supported).toContain('offline_access');
    const openapi = await t.api('GET', '/v1/openapi.json', { token: null });
    const paths = openapi.body.paths;
    expect(paths['/v1/auth/oauth2/token'].post).toBeDefined();
    expect(paths['/v1/auth/oauth2/authorize'].get).toBeDefined();
    expect(paths['/v1/teams/{teamId}/oauth-apps'].post.security).toContainEqual({ oauth2: ['teams:create'] });
  });

  it('rate-limits the page sign-in form like the API sign-in', async () => {
    const b = new Browser(t.url);
    const page = await b.get('/device');
    const form = formOf(page.text, '/v1/auth/oauth2/signin');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await b.post('/v1/auth/oauth2/signin', {
        ...form,
        email: 'guess@example.test',
        password: `nope-${i}`,
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  it('rate-limits the token endpoint per client', async () => {
    const statuses: number[] = [];
    const form = { grant_type: 'client_credentials', client_id: 'rate-probe', client_secret: 'x' };
    for (let i = 0; i < 61; i++) statuses.push((await oauthPost(t, '/v1/auth/oauth2/token', form)).status);
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(statuses[60]).toBe(429);
  });
});
