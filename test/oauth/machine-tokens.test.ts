import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { oauthPost, registerApp, signInUser } from './helpers.ts';

/**
 * What a team-bound machine token (OAuth client credentials: no person behind it) may do: act in its
 * own team with a member's permissions — read the team, create and manage its spaces, publish, edit
 * tag graphs — and nothing that needs a person (members, invitations, team settings, API keys,
 * new teams). Other teams are 404 as for anyone outside them.
 */
describeEachDb('client-credentials tokens', (db) => {
  let t: TestServer;
  let owner: Awaited<ReturnType<typeof signInUser>>;
  let other: Awaited<ReturnType<typeof signInUser>>;
  let token: string;
  beforeAll(async () => {
    t = await startServer({ db });
    owner = await signInUser(t, 'owner');
    other = await signInUser(t, 'other');
    const app = await registerApp(t, owner.teamId, owner.token, {
      name: 'CI',
      scopes: ['teams:read', 'teams:create', 'spaces:read', 'spaces:write', 'publish:write', 'domains:read'],
    });
    const res = await oauthPost(
      t,
      '/v1/auth/oauth2/token',
      {
        grant_type: 'client_credentials',
        scope: 'teams:read teams:create spaces:read spaces:write publish:write domains:read',
      },
      { id: app.clientId, secret: app.clientSecret! },
    );
    expect(res.status).toBe(200);
    token = res.body.access_token;
  });
  afterAll(() => t?.close());

  it('reads its own team (by id and slug) and lists it', async () => {
    const list = await t.api('GET', '/v1/teams', { token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([owner.teamId]);
    const one = await t.api('GET', `/v1/teams/${owner.teamId}`, { token });
    expect(one.status).toBe(200);
    const bySlug = await t.api('GET', `/v1/teams/${one.body.data.slug}`, { token });
    expect(bySlug.status).toBe(200);
    expectProblem(await t.api('GET', `/v1/teams/${other.teamId}`, { token }), 404, 'not_found');
  });

  it('creates spaces in its team and publishes', async () => {
    const created = await t.api('POST', '/v1/spaces', {
      token,
      body: { slug: 'machine-made', teamId: owner.teamId },
    });
    expect(created.status).toBe(201);
    const pub = await t.api('POST', '/v1/publish', {
      token,
      body: { spaceId: 'machine-made', files: [{ path: 'index.html', content: 'hi' }] },
    });
    expect(pub.status).toBe(201);
    expectProblem(
      await t.api('POST', '/v1/spaces', { token, body: { slug: 'elsewhere', teamId: other.teamId } }),
      404,
      'not_found',
    );
  });

  it('edits its team’s tag graph (PUT …/tags/versions/{id}/graph)', async () => {
    const draft = await t.api('POST', `/v1/teams/${owner.teamId}/tags/versions`, { token });
    expect(draft.status).toBe(201);
    const id = draft.body.data.id;
    const put = await t.api('PUT', `/v1/teams/${owner.teamId}/tags/versions/${id}/graph`, {
      token,
      headers: { 'if-match': '"1"' },
      body: { graph: { triggers: [{ id: 'tr', type: 'pageview' }], variables: [], tags: [] } },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data.graphRevision).toBe(2);
  });

  it('is refused what needs a person: members, invitations, settings, API keys, new teams', async () => {
    const members = expectProblem(
      await t.api('GET', `/v1/teams/${owner.teamId}/members`, { token }),
      403,
      'forbidden',
    );
    expect(members.detail).toMatch(/machine credential/);
    const invite = expectProblem(
      await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
        token,
        body: { email: 'x@example.test', role: 'member' },
      }),
      403,
      'forbidden',
    );
    expect(invite.detail).toMatch(/machine credential .* member’s permissions/);
    expectProblem(
      await t.api('PATCH', `/v1/teams/${owner.teamId}`, { token, body: { name: 'Renamed' } }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.api('POST', '/v1/account/api-keys', { token, body: { name: 'k', team: owner.teamId } }),
      403,
      'forbidden',
    );
    const team = await t.api('POST', '/v1/teams', { token, body: { name: 'Robots' } });
    expect(team.status).toBe(403);
    // Admin permissions: the audit log, webhooks.
    expectProblem(await t.api('GET', `/v1/teams/${owner.teamId}/audit-log`, { token }), 403, 'forbidden');
    const hook = await t.api('POST', '/v1/webhooks', {
      token,
      body: { url: 'https://hooks.example.com/x', team: owner.teamId },
    });
    expect(hook.status).toBe(403);
  });

  it('reads its team’s activity and usage', async () => {
    expect((await t.api('GET', `/v1/teams/${owner.teamId}/activity`, { token })).status).toBe(200);
    expect((await t.api('GET', `/v1/teams/${owner.teamId}/usage`, { token })).status).toBe(200);
  });
});
