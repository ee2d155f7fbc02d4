import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { Browser, formOf } from '../oauth/helpers.ts';

/** Issue #18, item 2: one e-mail rule for every body, form and the configuration. */
describeEachDb('one e-mail rule', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('lets the default owner (owner@localhost) sign in over the API', async () => {
    const boot = t.server.bootstrap!;
    expect(boot.email).toBe('owner@localhost');
    const res = await t.api('POST', '/v1/account/sessions', {
      token: null,
      body: { email: 'owner@localhost', password: boot.password },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.user.email).toBe('owner@localhost');
    const me = await t.api('GET', '/v1/account', { token: res.body.data.token });
    expect(me.body.data.user.isAdmin).toBe(true);
  });

  it('takes single-label hosts in users, sign-up and invitations, and refuses what is no address', async () => {
    const created = await t.api('POST', '/v1/users', {
      body: { email: 'dana@intranet', name: 'Dana', password: 'correct horse battery' },
    });
    expect(created.status).toBe(201);
    const session = await t.api('POST', '/v1/account/sessions', {
      token: null,
      body: { email: 'dana@intranet', password: 'correct horse battery' },
    });
    expect(session.status).toBe(201);
    const u = await createUser(t);
    const inv = await t.api('POST', `/v1/teams/${u.teamId}/invitations`, {
      token: u.token,
      body: { email: 'eve@intranet' },
    });
    expect(inv.status).toBe(201);

    for (const bad of ['no-at-sign', 'a@b@c', 'a b@c', 'a@-host', 'a@host.', 'a@exa_mple']) {
      const attempts: Array<[string, string, unknown, string | null]> = [
        ['POST', '/v1/account/sessions', { email: bad, password: 'x' }, null],
        ['POST', '/v1/users', { email: bad, name: 'X', password: 'correct horse battery' }, t.ownerKey],
        ['POST', '/v1/account', { email: bad, name: 'X', password: 'correct horse battery' }, null],
        ['POST', `/v1/teams/${u.teamId}/invitations`, { email: bad }, u.token],
      ];
      for (const [m, p, body, token] of attempts) {
        const problem = expectProblem(await t.api(m, p, { token, body }), 400, 'validation_error');
        expect(problem.pointer).toBe('/email');
        expect(problem.detail).toContain('e-mail address');
      }
    }
  });

  it('documents the rule once in the OpenAPI document (no dotted-domain `format: email`)', async () => {
    const doc = JSON.parse((await t.api('GET', '/v1/openapi.json', { token: null })).text);
    const emailFields = [
      'SignInRequest',
      'SignUpRequest',
      'CreateUserRequest',
      'CreateTeamInvitationRequest',
    ].map((name) => doc.components.schemas[name].properties.email);
    for (const f of emailFields) {
      expect(f.format).toBeUndefined();
      expect(f.pattern).toBe(emailFields[0].pattern);
    }
  });

  it('applies the rule to the HTML sign-in form too', async () => {
    const b = new Browser(t.url);
    const page = await b.get('/device');
    const form = formOf(page.text, '/v1/auth/oauth2/signin');
    const bad = await b.post('/v1/auth/oauth2/signin', { ...form, email: 'nobody', password: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('name@host');
    const ok = await b.post('/v1/auth/oauth2/signin', {
      ...form,
      email: 'owner@localhost',
      password: t.server.bootstrap!.password,
    });
    expect(ok.status).toBe(303);
  });
});

describe('SPACES_OWNER_EMAIL', () => {
  it('is checked by the same rule, so the owner can always sign in', () => {
    expect(loadConfig({}).ownerEmail).toBe('owner@localhost');
    expect(loadConfig({ SPACES_OWNER_EMAIL: 'admin@intranet' }).ownerEmail).toBe('admin@intranet');
    // Each of these passed the old "something@something" check but no API body would take it.
    for (const bad of ['owner@exa_mple', 'owner@-x', 'o(wner)@x', 'owner@x..y']) {
      expect(() => loadConfig({ SPACES_OWNER_EMAIL: bad }), bad).toThrow(/SPACES_OWNER_EMAIL/);
    }
  });
});
