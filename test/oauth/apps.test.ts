import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { oauthPost, signInUser } from './helpers.ts';

describeEachDb('OAuth apps', (db) => {
  let t: TestServer;
  let owner: Awaited<ReturnType<typeof signInUser>>;
  let member: Awaited<ReturnType<typeof signInUser>>;
  let outsider: Awaited<ReturnType<typeof signInUser>>;
  beforeAll(async () => {
    t = await startServer({ db });
    owner = await signInUser(t, 'owner');
    member = await signInUser(t, 'member');
    outsider = await signInUser(t, 'outsider');
    // member joins owner's team as a plain member
    const inv = await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
      token: owner.token,
      body: { email: member.email, role: 'member' },
    });
    expect(inv.status).toBe(201);
    const id = inv.body.data.id;
    const acc = await t.api('POST', `/v1/account/invitations/${id}/accept`, { token: member.token });
    expect(acc.status).toBeLessThan(300);
  });
  afterAll(() => t.close());

  const create = (body: unknown, token = owner.token, team = owner.teamId) =>
    t.api('POST', `/v1/teams/${team}/oauth-apps`, { token, body });

  it('registers a confidential app: the secret is shown once and stored hashed', async () => {
    const res = await create({
      name: 'Deployer',
      type: 'confidential',
      redirectUris: ['https://deploy.example.com/cb', 'com.example.deployer:/cb', 'http://127.0.0.1:8123/cb'],
      scopes: ['spaces:read', 'teams:read'],
    });
    expect(res.status).toBe(201);
    const app = res.body.data;
    expect(app.clientSecret).toMatch(/^sfcs_[A-Za-z0-9_-]{43}$/);
    expect(app).toMatchObject({
      clientId: app.id,
      teamId: owner.teamId,
      type: 'confidential',
      scopes: ['spaces:read', 'teams:read'],
      secretHint: app.clientSecret.slice(-4),
    });
    expect(res.body.$schema).toMatch(/OAuthAppSecretResponse\.json$/);
    const row = await t.server.services.database.db
      .selectFrom('oauth_apps')
      .selectAll()
      .where('id', '=', app.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_hash).not.toContain(app.clientSecret);
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);

    const got = await t.api('GET', `/v1/teams/${owner.teamId}/oauth-apps/${app.id}`, { token: owner.token });
    expect(got.status).toBe(200);
    expect(got.body.data.clientSecret).toBeUndefined();
    expect(got.text).not.toContain(app.clientSecret);

    const list = await t.api('GET', `/v1/teams/${owner.teamId}/oauth-apps`, { token: owner.token });
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(app.id);
  });

  it('registers a public app without a secret; it cannot rotate one', async () => {
    const res = await create({
      name: 'SPA',
      type: 'public',
      redirectUris: ['https://spa.example.com/'],
      scopes: ['teams:read'],
    });
    expect(res.status).toBe(201);
    expect(res.body.data.clientSecret).toBeNull();
    expect(res.body.data.secretHint).toBeNull();
    const rot = await t.api(
      'POST',
      `/v1/teams/${owner.teamId}/oauth-apps/${res.body.data.id}/rotate-secret`,
      {
        token: owner.token,
      },
    );
    expectProblem(rot, 409, 'oauth_app_public');
  });

  it('refuses unsafe redirect URIs with a pointer', async () => {
    for (const [i, uri] of [
      'http://example.com/cb',
      'https://example.com/cb#frag',
      'https://user@example.com/cb',
      'javascript:alert(1)',
      '/relative',
    ].entries()) {
      const res = await create({
        name: 'Bad',
        type: 'public',
        redirectUris: ['https://ok.example.com/cb', uri],
        scopes: ['teams:read'],
      });
      const p = expectProblem(res, 400, 'invalid_redirect_uri');
      expect(p.pointer, `case ${i}`).toBe('/redirectUris/1');
    }
    expectProblem(
      await create({ name: 'Bad', type: 'public', redirectUris: ['https://a.example/'], scopes: ['nope'] }),
      400,
      'validation_error',
    );
  });

  it('updates and rotates: the old secret stops working at once', async () => {
    const res = await create({ name: 'Rotator', type: 'confidential', scopes: ['spaces:read'] });
    const app = res.body.data;
    const patched = await t.api('PATCH', `/v1/teams/${owner.teamId}/oauth-apps/${app.id}`, {
      token: owner.token,
      body: { name: 'Rotator 2', scopes: ['spaces:read', 'teams:read'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ name: 'Rotator 2', scopes: ['spaces:read', 'teams:read'] });

    const before = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      { grant_type: 'client_credentials' },
      {
        id: app.id,
        secret: app.clientSecret,
      },
    );
    expect(before.status).toBe(200);
    const rot = await t.api('POST', `/v1/teams/${owner.teamId}/oauth-apps/${app.id}/rotate-secret`, {
      token: owner.token,
    });
    expect(rot.status).toBe(200);
    const secret = rot.body.data.clientSecret;
    expect(secret).not.toBe(app.clientSecret);
    const old = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      { grant_type: 'client_credentials' },
      {
        id: app.id,
        secret: app.clientSecret,
      },
    );
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('invalid_client');
    const fresh = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      { grant_type: 'client_credentials' },
      {
        id: app.id,
        secret,
      },
    );
    expect(fresh.status).toBe(200);
  });

  it('deleting an app revokes its tokens', async () => {
    const res = await create({ name: 'Doomed', type: 'confidential', scopes: ['teams:read'] });
    const app = res.body.data;
    const tok = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      { grant_type: 'client_credentials' },
      {
        id: app.id,
        secret: app.clientSecret,
      },
    );
    expect((await t.api('GET', '/v1/teams', { token: tok.body.access_token })).status).toBe(200);
    const del = await t.api('DELETE', `/v1/teams/${owner.teamId}/oauth-apps/${app.id}`, {
      token: owner.token,
    });
    expect(del.status).toBe(204);
    expectProblem(await t.api('GET', '/v1/teams', { token: tok.body.access_token }), 401, 'unauthorized');
    expectProblem(
      await t.api('GET', `/v1/teams/${owner.teamId}/oauth-apps/${app.id}`, { token: owner.token }),
      404,
      'not_found',
    );
  });

  it('only owners and admins manage apps; other teams see 404', async () => {
    const res = await create({
      name: 'Guarded',
      type: 'public',
      redirectUris: ['https://g.example/'],
      scopes: ['teams:read'],
    });
    const id = res.body.data.id;
    expectProblem(
      await create({ name: 'x', type: 'public', scopes: ['teams:read'] }, member.token),
      403,
      'forbidden',
    );
    expectProblem(
      await t.api('GET', `/v1/teams/${owner.teamId}/oauth-apps`, { token: member.token }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.api('DELETE', `/v1/teams/${owner.teamId}/oauth-apps/${id}`, { token: member.token }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.api('GET', `/v1/teams/${owner.teamId}/oauth-apps/${id}`, { token: outsider.token }),
      404,
      'not_found',
    );
    // The outsider's own team can't reach the app either.
    expectProblem(
      await t.api('GET', `/v1/teams/${outsider.teamId}/oauth-apps/${id}`, { token: outsider.token }),
      404,
      'not_found',
    );
    expectProblem(
      await t.api('GET', `/v1/teams/${owner.teamId}/oauth-apps`, { token: null }),
      401,
      'unauthorized',
    );
  });
});
