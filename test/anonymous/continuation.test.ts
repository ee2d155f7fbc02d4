import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

/** Issue #18, item 10: agent continuation after a claim (behaviour §2 "Continuation"). */
describeEachDb('claim continuation and space-bound keys', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  let ip = 0;
  const site = (text: string) => ({ files: [{ path: 'index.html', content: `<h1>${text}</h1>` }] });
  /** An anonymous publish, as an agent without an account does it. */
  const anonymousPublish = async () => {
    const res = await t.api('POST', '/v1/publish', {
      token: null,
      body: site('first'),
      headers: { 'x-forwarded-for': `198.51.100.${++ip}` },
    });
    expect(res.status).toBe(201);
    return { spaceId: res.body.data.space.id as string, key: res.body.data.claim.key as string };
  };
  const claim = (token: string, key: string, team: string, allowContinuation?: boolean) =>
    t.api('POST', '/v1/claim', {
      token,
      body: { key, team, ...(allowContinuation === undefined ? {} : { allowContinuation }) },
    });
  const exchange = (key: string) => t.api('POST', '/v1/claim/exchange', { token: key });

  it('turns the key into a one-use voucher for a key that reads and publishes to that space only', async () => {
    const owner = await createUser(t, 'claimer');
    const { spaceId, key } = await anonymousPublish();
    expect((await claim(owner.token, key, owner.teamId, true)).status).toBe(200);

    // The agent's next publish with the key: 409, saying what to do.
    const next = expectProblem(
      await t.api('POST', '/v1/publish', { token: key, body: site('second') }),
      409,
      'space_claimed_credential_available',
    );
    expect(next.details.spaceId).toBe(spaceId);
    expect(next.next.join(' ')).toContain('/v1/claim/exchange');

    const ex = await exchange(key);
    expect(ex.status).toBe(201);
    const cred = ex.body.data.credential;
    expect(cred.accessToken).toMatch(/^sfa_/);
    expect(cred).toMatchObject({ spaceId, teamId: owner.teamId, preset: 'ci_deploy', revokedAt: null });
    expect(cred.scopes).not.toContain('spaces:write');
    expect(ex.body.data.space.id).toBe(spaceId);
    const token = cred.accessToken as string;

    // It publishes to its space (named or not) and reads it…
    const pub = await t.api('POST', '/v1/publish', { token, body: site('from the agent') });
    expect(pub.status).toBe(201);
    expect(pub.body.data.space.id).toBe(spaceId);
    expect((await t.api('GET', `/v1/spaces/${spaceId}`, { token })).status).toBe(200);
    expect((await t.api('GET', `/v1/spaces/${spaceId}/versions`, { token })).status).toBe(200);
    const named = await t.api('POST', '/v1/publish', { token, body: { ...site('named'), spaceId } });
    expect(named.status).toBe(201);
    // …and nothing else: another space of the same team is not there for it.
    const other = await t.api('POST', '/v1/spaces', { token: owner.token, body: { teamId: owner.teamId } });
    const otherId = other.body.data.space.id;
    expectProblem(await t.api('GET', `/v1/spaces/${otherId}`, { token }), 404, 'not_found');
    expectProblem(await t.api('GET', `/v1/spaces/${otherId}/versions`, { token }), 404, 'not_found');
    expectProblem(
      await t.api('POST', '/v1/publish', { token, body: { ...site('x'), spaceId: otherId } }),
      404,
      'not_found',
    );
    for (const [m, p, body] of [
      ['GET', '/v1/spaces'],
      ['POST', '/v1/spaces', {}],
      ['GET', '/v1/teams'],
      ['GET', `/v1/teams/${owner.teamId}`],
      ['PATCH', `/v1/spaces/${spaceId}`, { title: 'renamed' }],
      ['DELETE', `/v1/spaces/${spaceId}`],
      ['POST', '/v1/account/api-keys', { name: 'more' }],
      ['GET', '/v1/account/api-keys'],
      ['POST', '/v1/claim', { key }],
    ] as Array<[string, string, unknown?]>) {
      expectProblem(await t.api(m, p, { token, body }), 403, 'forbidden');
    }
    const me = await t.api('GET', '/v1/account', { token });
    expect(me.body.data).toMatchObject({ user: null, teams: [], credential: { kind: 'api_key', spaceId } });

    // The voucher is spent: a second exchange and the key itself are refused.
    expectProblem(await exchange(key), 409, 'continuation_used');
    expectProblem(
      await t.api('POST', '/v1/publish', { token: key, body: site('again') }),
      409,
      'space_already_claimed',
    );

    // The owner sees the key with their keys, and revoking it ends it.
    const keys = await t.api('GET', '/v1/account/api-keys', { token: owner.token });
    const listed = keys.body.data.find((k: any) => k.id === cred.id);
    expect(listed).toMatchObject({ spaceId, preset: 'ci_deploy' });
    expect((await t.api('DELETE', `/v1/account/api-keys/${cred.id}`, { token: owner.token })).status).toBe(
      200,
    );
    expectProblem(await t.api('GET', `/v1/spaces/${spaceId}`, { token }), 401, 'unauthorized');
  });

  it('refuses the exchange when the owner did not allow it, before a claim, and for other tokens', async () => {
    const owner = await createUser(t);
    const off = await anonymousPublish();
    expectProblem(await exchange(off.key), 409, 'space_unclaimed');
    expect((await claim(owner.token, off.key, owner.teamId)).status).toBe(200);
    expectProblem(await exchange(off.key), 403, 'continuation_unavailable');
    expectProblem(
      await t.api('POST', '/v1/publish', { token: off.key, body: site('x') }),
      409,
      'space_already_claimed',
    );
    const no = await anonymousPublish();
    expect((await claim(owner.token, no.key, owner.teamId, false)).status).toBe(200);
    expectProblem(await exchange(no.key), 403, 'continuation_unavailable');
    expectProblem(await exchange('sfc_not-a-key'), 401, 'unauthorized');
    expectProblem(await exchange(t.ownerKey), 401, 'unauthorized');
    expectProblem(await t.api('POST', '/v1/claim/exchange', { token: null }), 401, 'unauthorized');
    const bad = expectProblem(
      await t.api('POST', '/v1/claim', {
        token: owner.token,
        body: { key: no.key, allowContinuation: 'yes' },
      }),
      400,
      'validation_error',
    );
    expect(bad.pointer).toBe('/allowContinuation');
  });

  it('spends the voucher exactly once under concurrent exchanges', async () => {
    const owner = await createUser(t);
    const { key } = await anonymousPublish();
    await claim(owner.token, key, owner.teamId, true);
    const results = await Promise.all([exchange(key), exchange(key), exchange(key)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.code).toBe('continuation_used');
    const keys = (await t.api('GET', '/v1/account/api-keys', { token: owner.token })).body.data;
    expect(keys.filter((k: any) => k.name.startsWith('continuation:'))).toHaveLength(1);
  });

  it('ends with the membership of whoever allowed it', async () => {
    const owner = await createUser(t);
    const member = await createUser(t);
    const team = (await t.api('POST', '/v1/teams', { token: owner.token, body: { name: 'Shared' } })).body
      .data;
    const inv = await t.api('POST', `/v1/teams/${team.id}/invitations`, {
      token: owner.token,
      body: { email: member.email },
    });
    await t.api('POST', `/v1/account/invitations/${inv.body.data.id}/accept`, { token: member.token });
    const a = await anonymousPublish();
    const b = await anonymousPublish();
    expect((await claim(member.token, a.key, team.id, true)).status).toBe(200);
    expect((await claim(member.token, b.key, team.id, true)).status).toBe(200);
    const token = (await exchange(a.key)).body.data.credential.accessToken;
    expect((await t.api('GET', `/v1/spaces/${a.spaceId}`, { token })).status).toBe(200);
    // The member leaves: the key they vouched for stops, and the unspent voucher can't be used.
    expect(
      (await t.api('DELETE', `/v1/teams/${team.id}/members/${member.userId}`, { token: member.token }))
        .status,
    ).toBe(204);
    expectProblem(await t.api('GET', `/v1/spaces/${a.spaceId}`, { token }), 404, 'not_found');
    expectProblem(await exchange(b.key), 403, 'continuation_unavailable');
  });

  it('binds an API key to one space on request (POST /v1/account/api-keys with space)', async () => {
    const owner = await createUser(t);
    const s1 = (await t.api('POST', '/v1/spaces', { token: owner.token, body: { teamId: owner.teamId } }))
      .body.data.space;
    const s2 = (await t.api('POST', '/v1/spaces', { token: owner.token, body: { teamId: owner.teamId } }))
      .body.data.space;
    const created = await t.api('POST', '/v1/account/api-keys', {
      token: owner.token,
      body: { name: 'one site', space: s1.slug, preset: 'space_publisher' },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ spaceId: s1.id, teamId: owner.teamId });
    const token = created.body.data.token;
    expect((await t.api('POST', '/v1/publish', { token, body: site('one') })).body.data.space.id).toBe(s1.id);
    expectProblem(await t.api('GET', `/v1/spaces/${s2.id}`, { token }), 404, 'not_found');
    // A space outside the caller's reach, or outside the team named, is refused.
    const stranger = await createUser(t);
    expectProblem(
      await t.api('POST', '/v1/account/api-keys', {
        token: stranger.token,
        body: { name: 'x', space: s1.id },
      }),
      404,
      'not_found',
    );
    const other = (await t.api('POST', '/v1/teams', { token: owner.token, body: { name: 'Other' } })).body
      .data;
    const mismatch = expectProblem(
      await t.api('POST', '/v1/account/api-keys', {
        token: owner.token,
        body: { name: 'x', space: s1.id, team: other.id },
      }),
      400,
      'validation_error',
    );
    expect(mismatch.pointer).toBe('/space');
  });
});
