import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { authorizeInBrowser, Browser, oauthPost, pkce, registerApp, signInUser } from './helpers.ts';

const REDIRECT = 'https://app.example.com/callback';

describeEachDb('OAuth authorization code + PKCE', (db) => {
  let t: TestServer;
  let alice: Awaited<ReturnType<typeof signInUser>>;
  let app: { clientId: string; clientSecret: string | null };
  /** One signed-in browser for most tests (sign-in is rate-limited per address). */
  let browser: Browser;
  beforeAll(async () => {
    t = await startServer({ db });
    browser = new Browser(t.url);
    alice = await signInUser(t, 'alice');
    app = await registerApp(t, alice.teamId, alice.token);
  });
  afterAll(() => t.close());

  const basic = () => ({ id: app.clientId, secret: app.clientSecret! });

  async function codeFor(scope: string, p = pkce(), extra: Record<string, string> = {}) {
    const b = browser;
    const back = await authorizeInBrowser(b, alice.email, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: REDIRECT,
      scope,
      state: 'st-123',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('iss')).toBe(t.server.services.config.publicUrl);
    return { code: back.searchParams.get('code')!, verifier: p.verifier, browser: b };
  }

  it('signs in on the page, shows consent, and issues tokens that work on a scoped endpoint', async () => {
    const b = new Browser(t.url);
    const p = pkce();
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: REDIRECT,
      scope: 'teams:create offline_access',
      state: 'xyz',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    });
    const signIn = await b.get(`/v1/auth/oauth2/authorize?${q}`);
    expect(signIn.status).toBe(200);
    expect(signIn.text).toContain('<label for="email">');
    expect(signIn.headers['x-frame-options']).toBe('DENY');
    // A wrong password stays on the form, with no session cookie.
    const { formOf } = await import('./helpers.ts');
    const bad = await b.post('/v1/auth/oauth2/signin', {
      ...formOf(signIn.text, '/v1/auth/oauth2/signin'),
      email: alice.email,
      password: 'wrong password!',
    });
    expect(bad.status).toBe(401);
    expect(b.cookies.has('spaces_session')).toBe(false);
    // A sign-in post without the form's CSRF token is refused.
    const forged = await new Browser(t.url).post('/v1/auth/oauth2/signin', {
      email: alice.email,
      password: 'correct horse battery',
      return_to: `/v1/auth/oauth2/authorize?${q}`,
    });
    expect(forged.status).toBe(401);
    expect(forged.headers['set-cookie'] ?? '').not.toMatch(/spaces_session/);

    const consent = await b.signInVia(signIn, alice.email);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Allow Test app to use your Spaces account?');
    expect(consent.text).toContain('registered by the team alice&#39;s team');
    expect(consent.text).toContain('<code>teams:create</code>');
    expect(consent.text).toContain('<code>offline_access</code>');
    expect(consent.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const form = formOf(consent.text, '/v1/auth/oauth2/authorize');

    // Without the CSRF token the decision is refused.
    const noCsrf = await b.post('/v1/auth/oauth2/authorize', {
      ...form,
      csrf_token: 'x',
      decision: 'approve',
    });
    expect(noCsrf.status).toBe(403);

    const res = await b.post('/v1/auth/oauth2/authorize', { ...form, decision: 'approve' });
    expect(res.status).toBe(303);
    const back = new URL(res.location!);
    expect(back.searchParams.get('state')).toBe('xyz');
    const code = back.searchParams.get('code')!;

    const tok = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: p.verifier },
      basic(),
    );
    expect(tok.status).toBe(200);
    expect(tok.headers['cache-control']).toBe('no-store');
    expect(tok.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'teams:create offline_access',
    });
    expect(tok.body.access_token).toMatch(/^sfo_/);
    expect(tok.body.refresh_token).toMatch(/^sfr_/);

    const created = await t.api('POST', '/v1/teams', {
      token: tok.body.access_token,
      body: { name: 'Via OAuth' },
    });
    expect(created.status).toBe(201);
    // The token lacks teams:read: 403 naming the scope.
    const listed = await t.api('GET', '/v1/teams', { token: tok.body.access_token });
    const problem = expectProblem(listed, 403, 'forbidden');
    expect(problem.details.requiredScope).toBe('teams:read');
  });

  it('a token without teams:create gets 403 forbidden naming the scope', async () => {
    const { code, verifier } = await codeFor('teams:read');
    const tok = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(),
    );
    expect(tok.status).toBe(200);
    expect(tok.body.refresh_token).toBeUndefined(); // no offline_access, no refresh token
    const res = await t.api('POST', '/v1/teams', { token: tok.body.access_token, body: { name: 'Nope' } });
    const problem = expectProblem(res, 403, 'forbidden');
    expect(problem.details.requiredScope).toBe('teams:create');
    // It sees the person's teams (membership checked like a session's).
    const teams = await t.api('GET', '/v1/teams', { token: tok.body.access_token });
    expect(teams.status).toBe(200);
    expect(teams.body.data.map((x: { id: string }) => x.id)).toContain(alice.teamId);
  });

  it('a consent post after the session ended signs in again and comes back to the same request', async () => {
    const b = new Browser(t.url);
    const p = pkce();
    const q = {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: REDIRECT,
      scope: 'teams:read',
      state: 'again',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    };
    const page = await b.post('/v1/auth/oauth2/authorize', { ...q, decision: 'approve', csrf_token: 'x' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('action="/v1/auth/oauth2/signin"');
    const consent = await b.signInVia(page, alice.email);
    expect(consent.text).toContain('Allow Test app to use your Spaces account?');
    const { formOf } = await import('./helpers.ts');
    expect(formOf(consent.text, '/v1/auth/oauth2/authorize')).toMatchObject({
      state: 'again',
      code_challenge: p.challenge,
    });
  });

  it('denying sends access_denied back with the state', async () => {
    const p = pkce();
    const back = await authorizeInBrowser(
      browser,
      alice.email,
      {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        scope: 'teams:read',
        state: 's1',
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
      },
      'deny',
    );
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('s1');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('accepts client_secret_post as well, and refuses a wrong secret with invalid_client', async () => {
    const { code, verifier } = await codeFor('teams:read');
    const wrong = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: app.clientId,
      client_secret: 'sfcs_wrong',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(String(wrong.headers['content-type'])).toMatch(/^application\/json/);
    const ok = await oauthPost(t, '/v1/auth/oauth2/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(ok.status).toBe(200);
  });

  describe('RFC 9700 negative cases', () => {
    const variants = [
      ['case', 'https://APP.example.com/callback'],
      ['path case', 'https://app.example.com/Callback'],
      ['trailing slash', 'https://app.example.com/callback/'],
      ['extra query', 'https://app.example.com/callback?x=1'],
      ['userinfo', 'https://app.example.com@evil.example/callback'],
      ['good@evil', 'https://good@evil.example/callback'],
      ['prefix', 'https://app.example.com/callback/../evil'],
      ['longer prefix', 'https://app.example.com/callbackx'],
      ['subdomain', 'https://app.example.com.evil.example/callback'],
      ['http downgrade', 'http://app.example.com/callback'],
      ['fragment', 'https://app.example.com/callback#x'],
    ];
    for (const [name, uri] of variants) {
      it(`refuses a redirect_uri differing by ${name}, without redirecting`, async () => {
        const p = pkce();
        const res = await new Browser(t.url).get(
          `/v1/auth/oauth2/authorize?${new URLSearchParams({
            response_type: 'code',
            client_id: app.clientId,
            redirect_uri: uri!,
            code_challenge: p.challenge,
            code_challenge_method: 'S256',
          })}`,
        );
        expect(res.status).toBe(400);
        expect(res.location).toBeNull();
        expect(res.text).toContain('not registered');
      });
    }

    it('refuses an unknown client without redirecting', async () => {
      const res = await new Browser(t.url).get(
        `/v1/auth/oauth2/authorize?response_type=code&client_id=oap_nope&redirect_uri=${encodeURIComponent(REDIRECT)}`,
      );
      expect(res.status).toBe(400);
      expect(res.location).toBeNull();
    });

    async function authorizeError(q: Record<string, string>) {
      const res = await new Browser(t.url).get(
        `/v1/auth/oauth2/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: REDIRECT,
          state: 'e',
          ...q,
        })}`,
      );
      expect(res.status).toBe(303);
      const back = new URL(res.location!);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(back.searchParams.get('state')).toBe('e');
      return back.searchParams.get('error');
    }

    it('refuses a request without PKCE', async () => {
      expect(await authorizeError({ scope: 'teams:read' })).toBe('invalid_request');
    });

    it('refuses the plain PKCE method, and a missing method (which means plain)', async () => {
      const p = pkce();
      expect(await authorizeError({ code_challenge: p.challenge, code_challenge_method: 'plain' })).toBe(
        'invalid_request',
      );
      expect(await authorizeError({ code_challenge: p.challenge })).toBe('invalid_request');
    });

    it('refuses other response types, unknown scopes and scopes the app may not ask for', async () => {
      const p = pkce();
      const pk = { code_challenge: p.challenge, code_challenge_method: 'S256' };
      expect(await authorizeError({ ...pk, response_type: 'token' })).toBe('unsupported_response_type');
      expect(await authorizeError({ ...pk, scope: 'teams:read admin' })).toBe('invalid_scope');
      expect(await authorizeError({ ...pk, scope: 'domains:write' })).toBe('invalid_scope');
    });

    it('a PKCE downgrade at the token endpoint fails: no verifier, or a wrong one', async () => {
      const { code } = await codeFor('teams:read');
      const none = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
        basic(),
      );
      expect(none.status).toBe(400);
      expect(none.body.error).toBe('invalid_grant');
      const wrong = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: pkce().verifier },
        basic(),
      );
      expect(wrong.body.error).toBe('invalid_grant');
    });

    it('a code works once; reusing it revokes the tokens it produced', async () => {
      const { code, verifier } = await codeFor('teams:read offline_access');
      const form = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      };
      const first = await oauthPost(t, '/v1/auth/oauth2/token', form, basic());
      expect(first.status).toBe(200);
      expect((await t.api('GET', '/v1/teams', { token: first.body.access_token })).status).toBe(200);
      const second = await oauthPost(t, '/v1/auth/oauth2/token', form, basic());
      expect(second.status).toBe(400);
      expect(second.body.error).toBe('invalid_grant');
      expectProblem(await t.api('GET', '/v1/teams', { token: first.body.access_token }), 401, 'unauthorized');
      const refresh = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
        basic(),
      );
      expect(refresh.body.error).toBe('invalid_grant');
    });

    it('a client cannot redeem another client’s code', async () => {
      const other = await registerApp(t, alice.teamId, alice.token, { name: 'Other' });
      const { code, verifier } = await codeFor('teams:read');
      const res = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
        { id: other.clientId, secret: other.clientSecret! },
      );
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
      // The rightful client can still redeem it.
      const ok = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
        basic(),
      );
      expect(ok.status).toBe(200);
    });

    it('the token request must repeat the exact redirect_uri', async () => {
      const { code, verifier } = await codeFor('teams:read');
      const res = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'authorization_code', code, redirect_uri: `${REDIRECT}/`, code_verifier: verifier },
        basic(),
      );
      expect(res.body.error).toBe('invalid_grant');
    });
  });

  describe('refresh tokens', () => {
    async function tokens(scope: string) {
      const { code, verifier } = await codeFor(scope);
      const res = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
        basic(),
      );
      expect(res.status).toBe(200);
      return res.body;
    }
    const refresh = (token: string, scope?: string) =>
      oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'refresh_token', refresh_token: token, ...(scope ? { scope } : {}) },
        basic(),
      );

    it('rotates on every use; the scope can narrow', async () => {
      const first = await tokens('teams:read teams:create offline_access');
      const second = await refresh(first.refresh_token, 'teams:read');
      expect(second.status).toBe(200);
      expect(second.body.scope).toBe('teams:read');
      expect(second.body.refresh_token).not.toBe(first.refresh_token);
      const narrowed = await t.api('POST', '/v1/teams', {
        token: second.body.access_token,
        body: { name: 'x' },
      });
      expect(expectProblem(narrowed, 403, 'forbidden').details.requiredScope).toBe('teams:create');
      // The rotated refresh token still carries the whole grant.
      const third = await refresh(second.body.refresh_token);
      expect(third.body.scope).toBe('teams:read teams:create offline_access');
    });

    it('refuses scope escalation on refresh', async () => {
      const first = await tokens('teams:read offline_access');
      const res = await refresh(first.refresh_token, 'teams:read teams:create');
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_scope');
      // The refused attempt did not consume the token.
      expect((await refresh(first.refresh_token)).status).toBe(200);
    });

    it('reuse of a rotated refresh token revokes the whole family', async () => {
      const first = await tokens('teams:read offline_access');
      const second = await refresh(first.refresh_token);
      expect(second.status).toBe(200);
      expect((await t.api('GET', '/v1/teams', { token: second.body.access_token })).status).toBe(200);
      const reuse = await refresh(first.refresh_token);
      expect(reuse.status).toBe(400);
      expect(reuse.body.error).toBe('invalid_grant');
      expectProblem(
        await t.api('GET', '/v1/teams', { token: second.body.access_token }),
        401,
        'unauthorized',
      );
      expect((await refresh(second.body.refresh_token)).body.error).toBe('invalid_grant');
    });

    it('another client cannot use the refresh token', async () => {
      const first = await tokens('teams:read offline_access');
      const other = await registerApp(t, alice.teamId, alice.token, { name: 'Thief' });
      const res = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'refresh_token', refresh_token: first.refresh_token },
        { id: other.clientId, secret: other.clientSecret! },
      );
      expect(res.body.error).toBe('invalid_grant');
    });
  });

  it('answers OAuth errors for a missing or unknown grant type', async () => {
    const none = await oauthPost(t, '/v1/auth/oauth2/token', {}, basic());
    expect(none.status).toBe(400);
    expect(none.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    const odd = await oauthPost(t, '/v1/auth/oauth2/token', { grant_type: 'password' }, basic());
    expect(odd.body.error).toBe('unsupported_grant_type');
  });
});

describe('OAuth code lifetime', () => {
  it('an authorization code expires after 60 s', async () => {
    const clock = new ManualClock(Date.now());
    const t = await startServer({ clock });
    try {
      const alice = await signInUser(t, 'clocked');
      const app = await registerApp(t, alice.teamId, alice.token);
      const p = pkce();
      const back = await authorizeInBrowser(new Browser(t.url), alice.email, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        scope: 'teams:read',
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
      });
      clock.advance(61_000);
      const res = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        {
          grant_type: 'authorization_code',
          code: back.searchParams.get('code')!,
          redirect_uri: REDIRECT,
          code_verifier: p.verifier,
        },
        { id: app.clientId, secret: app.clientSecret! },
      );
      expect(res.body.error).toBe('invalid_grant');
      expect(res.body.error_description).toMatch(/expired/);
    } finally {
      await t.close();
    }
  });
});

describe('OAuth refresh lifetime', () => {
  it('a refresh token lives 30 days from its issue; rotation starts a new 30 days', async () => {
    const clock = new ManualClock(Date.now());
    const t = await startServer({ clock });
    try {
      const alice = await signInUser(t, 'longlived');
      const app = await registerApp(t, alice.teamId, alice.token);
      const basic = { id: app.clientId, secret: app.clientSecret! };
      const p = pkce();
      const back = await authorizeInBrowser(new Browser(t.url), alice.email, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        scope: 'teams:read offline_access',
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
      });
      const first = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        {
          grant_type: 'authorization_code',
          code: back.searchParams.get('code')!,
          redirect_uri: REDIRECT,
          code_verifier: p.verifier,
        },
        basic,
      );
      const day = 24 * 3600_000;
      clock.advance(29 * day);
      const second = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
        basic,
      );
      expect(second.status).toBe(200);
      clock.advance(29 * day);
      const third = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'refresh_token', refresh_token: second.body.refresh_token },
        basic,
      );
      expect(third.status).toBe(200);
      clock.advance(30 * day + 1000);
      const late = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'refresh_token', refresh_token: third.body.refresh_token },
        basic,
      );
      expect(late.body.error).toBe('invalid_grant');
      expect(late.body.error_description).toMatch(/expired/);
    } finally {
      await t.close();
    }
  });
});
