import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

describeEachDb('teams API', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('creates a team with the create variant, exactly the spec’s fields', async () => {
    const res = await t.api('POST', '/v1/teams', { body: { name: 'Acme' } });
    expect(res.status).toBe(201);
    expect(res.headers.link).toMatch(/\/schemas\/TeamCreateResponse\.json>; rel="describedby"/);
    const team = res.body.data;
    expect(res.body.$schema).toBe(`${t.server.services.config.publicUrl}/schemas/TeamCreateResponse.json`);
    expect(Object.keys(team).sort()).toEqual(
      [
        'id',
        'name',
        'slug',
        'role',
        'plan',
        'partner',
        'defaultDataLocation',
        'defaultAccess',
        'createdAt',
        'updatedAt',
        'logo',
        'metadata',
        'billingCustomerId',
        'systemSpaceId',
        'manifestStatus',
        'presentation',
      ].sort(),
    );
    expect(team).toMatchObject({
      name: 'Acme',
      slug: 'acme',
      role: 'member', // API keys are not sessions
      plan: 'free',
      partner: null,
      defaultDataLocation: 'auto',
      defaultAccess: 'team',
      logo: null,
      metadata: null,
      billingCustomerId: null,
      systemSpaceId: null,
      manifestStatus: { items: [], sourceVersionId: null },
      presentation: null,
    });
    expect(team.id).toMatch(/^team_[0-9a-z]{26}$/);
    expect(team.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it('generates the lowest available slug from the name', async () => {
    const a = await t.api('POST', '/v1/teams', { body: { name: 'Blue Bird' } });
    const b = await t.api('POST', '/v1/teams', { body: { name: 'Blue  Bird!' } });
    const c = await t.api('POST', '/v1/teams', { body: { name: 'blue-bird' } });
    expect([a.body.data.slug, b.body.data.slug, c.body.data.slug]).toEqual([
      'blue-bird',
      'blue-bird-2',
      'blue-bird-3',
    ]);
    const odd = await t.api('POST', '/v1/teams', { body: { name: '✨✨' } });
    expect(odd.body.data.slug).toMatch(/^team(-\d+)?$/);
  });

  it('refuses a taken slug with team_slug_conflict', async () => {
    await t.api('POST', '/v1/teams', { body: { name: 'X', slug: 'taken-slug' } });
    const res = await t.api('POST', '/v1/teams', { body: { name: 'Y', slug: 'taken-slug' } });
    const p = expectProblem(res, 409, 'team_slug_conflict');
    expect(p.pointer).toBe('/slug');
  });

  const invalid: Array<[string, unknown, string]> = [
    ['unknown property', { name: 'Acme', extra: 1 }, '/extra'],
    ['missing name', {}, '/name'],
    ['empty name', { name: '' }, '/name'],
    ['name too long', { name: 'a'.repeat(256) }, '/name'],
    ['name wrong type', { name: 5 }, '/name'],
    ['empty slug', { name: 'a', slug: '' }, '/slug'],
    ['slug too long', { name: 'a', slug: 'a'.repeat(256) }, '/slug'],
    ['slug uppercase', { name: 'a', slug: 'Acme' }, '/slug'],
    ['slug leading hyphen', { name: 'a', slug: '-acme' }, '/slug'],
    ['slug trailing hyphen', { name: 'a', slug: 'acme-' }, '/slug'],
    ['slug underscore', { name: 'a', slug: 'ac_me' }, '/slug'],
  ];
  it.each(invalid)('rejects %s with a pointer', async (_name, body, pointer) => {
    const res = await t.api('POST', '/v1/teams', { body });
    const p = expectProblem(res, 400, 'validation_error');
    expect(p.pointer).toBe(pointer);
  });

  it('accepts the bounds themselves', async () => {
    const long = await t.api('POST', '/v1/teams', { body: { name: 'n'.repeat(255), slug: 'a'.repeat(255) } });
    expect(long.status).toBe(201);
    const single = await t.api('POST', '/v1/teams', { body: { name: 'n', slug: '7' } });
    expect(single.status).toBe(201);
    expect(single.body.data.slug).toBe('7');
  });

  it('answers malformed JSON, wrong media type and no credential with problems', async () => {
    expectProblem(
      await t.api('POST', '/v1/teams', { raw: '{"name":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
    );
    expectProblem(
      await t.api('POST', '/v1/teams', { raw: 'name=x', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    const res = await t.api('POST', '/v1/teams', { token: null, body: { name: 'x' } });
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expectProblem(await t.api('GET', '/v1/teams', { token: 'sfa_nope' }), 401, 'unauthorized');
  });

  it('lists teams newest first with keyset pages that do not shift under inserts', async () => {
    const u = await createUser(t, 'lister');
    for (let i = 0; i < 5; i++) {
      const r = await t.api('POST', '/v1/teams', { token: u.token, body: { name: `L${i}` } });
      expect(r.status).toBe(201);
    }
    const p1 = await t.api('GET', '/v1/teams?limit=2', { token: u.token });
    expect(p1.status).toBe(200);
    expect(p1.body.data.map((x: any) => x.name)).toEqual(['L4', 'L3']);
    expect(p1.body.pagination.hasMore).toBe(true);
    expect(Object.keys(p1.body.data[0]).sort()).toEqual(
      [
        'id',
        'tenantId',
        'name',
        'slug',
        'role',
        'plan',
        'partner',
        'defaultDataLocation',
        'defaultAccess',
        'createdAt',
        'updatedAt',
      ].sort(),
    );
    expect(p1.body.data[0].role).toBe('owner'); // sessions see their real role
    // A team created between pages doesn't shift the next page.
    await t.api('POST', '/v1/teams', { token: u.token, body: { name: 'L5' } });
    const p2 = await t.api(
      'GET',
      `/v1/teams?limit=2&cursor=${encodeURIComponent(p1.body.pagination.nextCursor)}`,
      {
        token: u.token,
      },
    );
    expect(p2.body.data.map((x: any) => x.name)).toEqual(['L2', 'L1']);
    const p3 = await t.api(
      'GET',
      `/v1/teams?limit=2&cursor=${encodeURIComponent(p2.body.pagination.nextCursor)}`,
      {
        token: u.token,
      },
    );
    expect(p3.body.data.map((x: any) => x.name)).toEqual(['L0', "lister's team"]);
    expect(p3.body.pagination).toEqual({ nextCursor: null, hasMore: false });
  });

  const badPages: Array<[string, string]> = [
    ['limit=0', '/limit'],
    ['limit=101', '/limit'],
    ['limit=abc', '/limit'],
    [`cursor=${'x'.repeat(4097)}`, '/cursor'],
    ['cursor=', '/cursor'],
    ['cursor=bm90LWEtY3Vyc29y.AAAA', '/cursor'],
  ];
  it.each(badPages)('rejects %s', async (qs, pointer) => {
    const res = await t.api('GET', `/v1/teams?${qs}`);
    expect(res.status).toBe(400);
    expect(['validation_error', 'invalid_cursor']).toContain(res.body.code);
    expect(res.body.pointer).toBe(pointer);
  });

  it('refuses a cursor from another listing', async () => {
    const u = await createUser(t);
    const keys = await t.api('GET', '/v1/account/api-keys?limit=1');
    // Forge: take a cursor issued for one listing and use it on another.
    for (let i = 0; i < 2; i++) await t.api('POST', '/v1/account/api-keys', { body: { name: `k${i}` } });
    const page = await t.api('GET', '/v1/account/api-keys?limit=1');
    expect(keys.status).toBe(200);
    const res = await t.api(
      'GET',
      `/v1/teams?cursor=${encodeURIComponent(page.body.pagination.nextCursor)}`,
      {
        token: u.token,
      },
    );
    expectProblem(res, 400, 'invalid_cursor');
  });
});

describeEachDb('default access of new spaces (defaultAccess)', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('is team for a new team; owners and admins change it; new spaces start with it', async () => {
    const owner = await createUser(t, 'da-owner');
    const team = (await t.api('POST', '/v1/teams', { token: owner.token, body: { name: 'Defaults' } })).body
      .data;
    expect(team.defaultAccess).toBe('team');
    const before = await t.api('POST', '/v1/spaces', { token: owner.token, body: { teamId: team.id } });
    expect(before.body.data.access).toBe('team');

    const patched = await t.api('PATCH', `/v1/teams/${team.slug}`, {
      token: owner.token,
      body: { defaultAccess: 'public' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.defaultAccess).toBe('public');
    expect((await t.api('GET', `/v1/teams/${team.id}`, { token: owner.token })).body.data.defaultAccess).toBe(
      'public',
    );
    const listed = (await t.api('GET', '/v1/teams', { token: owner.token })).body.data;
    expect(listed.find((x: any) => x.id === team.id).defaultAccess).toBe('public');

    // A new space without `access` takes the default, through every way of creating one.
    const created = await t.api('POST', '/v1/spaces', { token: owner.token, body: { teamId: team.id } });
    expect(created.body.data.access).toBe('public');
    const key = (
      await t.api('POST', '/v1/account/api-keys', { token: owner.token, body: { name: 'k', team: team.id } })
    ).body.data.token;
    const published = await t.api('POST', '/v1/publish', {
      token: key,
      body: { files: [{ path: 'index.html', content: '<h1>hi</h1>' }] },
    });
    expect(published.status).toBe(201);
    const space = await t.api('GET', `/v1/spaces/${published.body.data.space.id}`, { token: key });
    expect(space.body.data.access).toBe('public');
    // An explicit access still wins, and spaces made before keep theirs.
    const explicit = await t.api('POST', '/v1/spaces', {
      token: owner.token,
      body: { teamId: team.id, access: 'private' },
    });
    expect(explicit.body.data.access).toBe('private');
    const old = await t.api('GET', `/v1/spaces/${before.body.data.space.id}`, { token: owner.token });
    expect(old.body.data.access).toBe('team');
  });

  it('is for owners and admins only, validated with a pointer, and 404 across teams', async () => {
    const owner = await createUser(t);
    const member = await createUser(t);
    const stranger = await createUser(t);
    const inv = await t.api('POST', `/v1/teams/${owner.teamId}/invitations`, {
      token: owner.token,
      body: { email: member.email, role: 'member' },
    });
    await t.api('POST', `/v1/account/invitations/${inv.body.data.id}/accept`, { token: member.token });
    const path = `/v1/teams/${owner.teamId}`;
    const p = expectProblem(
      await t.api('PATCH', path, { token: member.token, body: { defaultAccess: 'public' } }),
      403,
      'forbidden',
    );
    expect(p.details.permission).toBe('team.update');
    expectProblem(
      await t.api('PATCH', path, { token: stranger.token, body: { defaultAccess: 'public' } }),
      404,
      'not_found',
    );
    const bad = expectProblem(
      await t.api('PATCH', path, { token: owner.token, body: { defaultAccess: 'everyone' } }),
      400,
      'validation_error',
    );
    expect(bad.pointer).toBe('/defaultAccess');
    // Promote the member to admin: now it works.
    await t.api('PATCH', `${path}/members/${member.userId}`, { token: owner.token, body: { role: 'admin' } });
    const ok = await t.api('PATCH', path, { token: member.token, body: { defaultAccess: 'private' } });
    expect(ok.body.data.defaultAccess).toBe('private');
    const fresh = await t.api('POST', '/v1/spaces', { token: owner.token, body: { teamId: owner.teamId } });
    expect(fresh.body.data.access).toBe('private');
  });
});

describeEachDb('team members and invitations', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('invites, accepts, changes roles and protects the last owner', async () => {
    const owner = await createUser(t, 'owner1');
    const bob = await createUser(t, 'bob');
    const team = (await t.api('POST', '/v1/teams', { token: owner.token, body: { name: 'Crew' } })).body.data;

    const inv = await t.api('POST', `/v1/teams/${team.id}/invitations`, {
      token: owner.token,
      body: { email: bob.email },
    });
    expect(inv.status).toBe(201);
    expect(inv.body.data).toMatchObject({ email: bob.email, role: 'member', status: 'pending' });
    expectProblem(
      await t.api('POST', `/v1/teams/${team.id}/invitations`, {
        token: owner.token,
        body: { email: bob.email },
      }),
      409,
      'invitation_already_exists',
    );
    // Bob sees it in his account and accepts.
    const me = await t.api('GET', '/v1/account', { token: bob.token });
    expect(me.body.data.invitations.map((i: any) => i.id)).toContain(inv.body.data.id);
    // Someone else can't accept Bob's invitation.
    const eve = await createUser(t, 'eve');
    expectProblem(
      await t.api('POST', `/v1/account/invitations/${inv.body.data.id}/accept`, { token: eve.token }),
      403,
      'invitation_email_mismatch',
    );
    const acc = await t.api('POST', `/v1/account/invitations/${inv.body.data.id}/accept`, {
      token: bob.token,
    });
    expect(acc.status).toBe(200);
    expect(acc.body.data.status).toBe('accepted');
    expectProblem(
      await t.api('POST', `/v1/account/invitations/${inv.body.data.id}/accept`, { token: bob.token }),
      409,
      'invitation_not_pending',
    );

    const members = await t.api('GET', `/v1/teams/${team.slug}/members`, { token: bob.token });
    expect(members.body.data.map((m: any) => [m.email, m.role]).sort()).toEqual(
      [
        [bob.email, 'member'],
        [owner.email, 'owner'],
      ].sort(),
    );

    // A member can't manage members or settings.
    expectProblem(
      await t.api('PATCH', `/v1/teams/${team.id}/members/${owner.userId}`, {
        token: bob.token,
        body: { role: 'member' },
      }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.api('PATCH', `/v1/teams/${team.id}`, { token: bob.token, body: { name: 'Nope' } }),
      403,
      'forbidden',
    );

    // The last owner can't be demoted or removed.
    expectProblem(
      await t.api('PATCH', `/v1/teams/${team.id}/members/${owner.userId}`, {
        token: owner.token,
        body: { role: 'admin' },
      }),
      409,
      'last_owner',
    );
    expectProblem(
      await t.api('DELETE', `/v1/teams/${team.id}/members/${owner.userId}`, { token: owner.token }),
      409,
      'last_owner',
    );

    // Promote Bob to admin: admins can't make owners.
    const promoted = await t.api('PATCH', `/v1/teams/${team.id}/members/${bob.userId}`, {
      token: owner.token,
      body: { role: 'admin' },
    });
    expect(promoted.body.data.role).toBe('admin');
    expectProblem(
      await t.api('PATCH', `/v1/teams/${team.id}/members/${bob.userId}`, {
        token: bob.token,
        body: { role: 'owner' },
      }),
      403,
      'forbidden',
    );
    // With a second owner, the first can step down.
    await t.api('PATCH', `/v1/teams/${team.id}/members/${bob.userId}`, {
      token: owner.token,
      body: { role: 'owner' },
    });
    const down = await t.api('PATCH', `/v1/teams/${team.id}/members/${owner.userId}`, {
      token: owner.token,
      body: { role: 'member' },
    });
    expect(down.status).toBe(200);
    // Members may leave.
    expect(
      (await t.api('DELETE', `/v1/teams/${team.id}/members/${owner.userId}`, { token: owner.token })).status,
    ).toBe(204);
    expectProblem(await t.api('GET', `/v1/teams/${team.id}`, { token: owner.token }), 404, 'not_found');
  });

  it('cancels invitations and rejects an invite of an existing member', async () => {
    const owner = await createUser(t);
    const team = (await t.api('POST', '/v1/teams', { token: owner.token, body: { name: 'Inv' } })).body.data;
    const inv = await t.api('POST', `/v1/teams/${team.id}/invitations`, {
      token: owner.token,
      body: { email: 'someone@example.test', role: 'admin' },
    });
    const list = await t.api('GET', `/v1/teams/${team.id}/invitations`, { token: owner.token });
    expect(list.body.data.map((i: any) => i.id)).toEqual([inv.body.data.id]);
    const cancel = await t.api('DELETE', `/v1/teams/${team.id}/invitations/${inv.body.data.id}`, {
      token: owner.token,
    });
    expect(cancel.body.data.status).toBe('canceled');
    expectProblem(
      await t.api('POST', `/v1/teams/${team.id}/invitations`, {
        token: owner.token,
        body: { email: owner.email },
      }),
      409,
      'member_already_exists',
    );
    expectProblem(
      await t.api('POST', `/v1/teams/${team.id}/invitations`, {
        token: owner.token,
        body: { email: 'not-an-email' },
      }),
      400,
      'validation_error',
    );
  });
});

describeEachDb('team isolation', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('answers 404 for every team endpoint across the boundary', async () => {
    const alice = await createUser(t, 'alice');
    const mallory = await createUser(t, 'mallory');
    const team = (await t.api('POST', '/v1/teams', { token: alice.token, body: { name: 'Private' } })).body
      .data;
    const inv = (
      await t.api('POST', `/v1/teams/${team.id}/invitations`, {
        token: alice.token,
        body: { email: 'x@example.test' },
      })
    ).body.data;
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/v1/teams/${team.id}`],
      ['GET', `/v1/teams/${team.slug}`],
      ['PATCH', `/v1/teams/${team.id}`, { name: 'pwned' }],
      ['GET', `/v1/teams/${team.id}/members`],
      ['PATCH', `/v1/teams/${team.id}/members/${alice.userId}`, { role: 'member' }],
      ['DELETE', `/v1/teams/${team.id}/members/${alice.userId}`],
      ['POST', `/v1/teams/${team.id}/invitations`, { email: 'm@example.test' }],
      ['GET', `/v1/teams/${team.id}/invitations`],
      ['DELETE', `/v1/teams/${team.id}/invitations/${inv.id}`],
      ['POST', `/v1/account/api-keys`, { name: 'k', team: team.id }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await t.api(method, path, { token: mallory.token, body });
      expectProblem(res, 404, 'not_found');
    }
    const list = await t.api('GET', '/v1/teams', { token: mallory.token });
    expect(list.body.data.map((x: any) => x.id)).not.toContain(team.id);
    // Alice's team is untouched.
    const still = await t.api('GET', `/v1/teams/${team.id}`, { token: alice.token });
    expect(still.body.data.name).toBe('Private');
  });

  it('limits an API key to its own team', async () => {
    const alice = await createUser(t);
    const other = (await t.api('POST', '/v1/teams', { token: alice.token, body: { name: 'Other' } })).body
      .data;
    const key = await t.api('POST', '/v1/account/api-keys', {
      token: alice.token,
      body: { name: 'ci', team: alice.teamId, preset: 'team_admin' },
    });
    expect(key.status).toBe(201);
    const token = key.body.data.token;
    expect(token).toMatch(/^sfa_/);
    const list = await t.api('GET', '/v1/teams', { token });
    expect(list.body.data.map((x: any) => x.id)).toEqual([alice.teamId]);
    expectProblem(await t.api('GET', `/v1/teams/${other.id}`, { token }), 404, 'not_found');
  });

  it('explains the 404 of a key on another of its person’s teams, and says nothing of strangers’ teams', async () => {
    // The quickstart's path: the bootstrap key (team_admin of the owner's team) creates a team…
    const created = await t.api('POST', '/v1/teams', { body: { name: 'Acme Quick' } });
    expect(created.status).toBe(201);
    const acme = created.body.data;
    const ownTeam = (await t.api('GET', '/v1/teams')).body.data[0];
    // …and then can't use it: the 404 says why and what to do.
    const p = expectProblem(await t.api('GET', `/v1/teams/${acme.slug}`), 404, 'not_found');
    expect(p.detail).toContain(`Team ${acme.slug} is another of your teams`);
    expect(p.detail).toContain(`this API key belongs to team ${ownTeam.slug}`);
    expect(p.details).toMatchObject({ teamSlug: acme.slug, credentialTeams: [ownTeam.slug] });
    expect(p.suggestions.join(' ')).toContain(`"team":"${acme.slug}"`);
    // The same where a space is created in it or read from it.
    const space = expectProblem(
      await t.api('POST', '/v1/spaces', { body: { teamId: acme.id, slug: 'quick-site' } }),
      404,
      'not_found',
    );
    expect(space.pointer).toBe('/teamId');
    expect(space.detail).toContain('this API key belongs to team');
    const owner = await t.api('POST', '/v1/account/sessions', {
      token: null,
      body: { email: t.ownerEmail, password: t.server.bootstrap!.password },
    });
    const made = await t.api('POST', '/v1/spaces', {
      token: owner.body.data.token,
      body: { teamId: acme.id, slug: 'quick-site' },
    });
    expect(made.status).toBe(201);
    const read = expectProblem(await t.api('GET', '/v1/spaces/quick-site'), 404, 'not_found');
    expect(read.detail).toContain(`Space quick-site is in team ${acme.slug}`);
    // A key for that team, made with the session as the suggestion says, works.
    const key = await t.api('POST', '/v1/account/api-keys', {
      token: owner.body.data.token,
      body: { name: 'acme', team: acme.slug },
    });
    expect((await t.api('GET', '/v1/spaces/quick-site', { token: key.body.data.token })).status).toBe(200);

    // Teams and spaces of other people: the plain 404, naming nothing.
    const stranger = await createUser(t, 'stranger');
    const theirs = (await t.api('POST', '/v1/teams', { token: stranger.token, body: { name: 'Theirs' } }))
      .body.data;
    await t.api('POST', '/v1/spaces', {
      token: stranger.token,
      body: { teamId: theirs.id, slug: 'their-site' },
    });
    const nowhere = expectProblem(await t.api('GET', '/v1/teams/no-such-team'), 404, 'not_found');
    for (const path of [`/v1/teams/${theirs.slug}`, `/v1/teams/${theirs.id}`, '/v1/spaces/their-site']) {
      const plain = expectProblem(await t.api('GET', path), 404, 'not_found');
      expect(plain.detail).toMatch(/^(Team|Space) \S+ was not found\.$/);
      expect(plain.details).toBeUndefined();
      // Exactly what a team that doesn't exist answers: nothing tells the two apart.
      expect(plain.suggestions).toEqual(nowhere.suggestions);
    }
  });
});

describe('scopes', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  it('refuses a key whose preset lacks the operation’s scope, naming the scope', async () => {
    const key = await t.api('POST', '/v1/account/api-keys', {
      body: { name: 'deploy', preset: 'ci_deploy' },
    });
    const res = await t.api('POST', '/v1/teams', { token: key.body.data.token, body: { name: 'nope' } });
    const p = expectProblem(res, 403, 'forbidden');
    expect(p.details.requiredScope).toBe('teams:create');
  });

  it('never gives a key more than its creator holds', async () => {
    const weak = await t.api('POST', '/v1/account/api-keys', {
      body: { name: 'weak', preset: 'domain_manager' },
    });
    const res = await t.api('POST', '/v1/account/api-keys', {
      token: weak.body.data.token,
      body: { name: 'strong', preset: 'team_admin' },
    });
    expectProblem(res, 403, 'policy_exceeds_grantor');
  });
});
