import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

const HOUR = 3600_000;

describeEachDb('anonymous spaces: keys, claim window, claim, expiry, purge', (db) => {
  let t: TestServer;
  const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
  beforeAll(async () => {
    t = await startServer({ db, clock, env: { SPACES_ANON_SPACES_PER_IP: '3' } });
  });
  afterAll(() => t.close());

  const anon = (ip = '198.51.100.7') => t.server.services.anonymous.createSpace(ip, { title: 'Anon' });

  it('creates an anonymous space with a 6 h window and a key that works only for that space', async () => {
    const { space, key } = await anon();
    expect(key).toMatch(/^sfc_[A-Za-z0-9_-]{43}$/);
    expect(space.claim_expires_at).toBe(new Date(clock.now().getTime() + 6 * HOUR).toISOString());
    const got = await t.api('GET', `/v1/spaces/${space.id}`, { token: key });
    expect(got.status).toBe(200);
    expect(got.body.data.space).toMatchObject({
      anonymous: true,
      teamId: null,
      teamSlug: null,
      principal: null,
    });
    expect(got.body.data.space.claimState).toEqual({
      expiresAt: space.claim_expires_at,
      claimedAt: null,
      purgeAfter: null,
    });
    expect(got.body.data.access).toBe('private');
    const other = await anon();
    expectProblem(await t.api('GET', `/v1/spaces/${other.space.id}`, { token: key }), 404, 'not_found');
    // Every general endpoint refuses a space key.
    for (const [m, p, body] of [
      ['GET', '/v1/teams'],
      ['POST', '/v1/teams', { name: 'x' }],
      ['GET', '/v1/spaces'],
      ['POST', '/v1/spaces', {}],
      ['PATCH', `/v1/spaces/${space.id}`, { title: 'x' }],
      ['DELETE', `/v1/spaces/${space.id}`],
      ['POST', '/v1/account/api-keys', { name: 'x' }],
      ['POST', '/v1/claim', { key }],
    ] as Array<[string, string, unknown?]>) {
      expectProblem(await t.api(m, p, { token: key, body }), 403, 'forbidden');
    }
    // Anonymous spaces are invisible to team credentials.
    const list = await t.api('GET', '/v1/spaces?limit=100');
    expect(list.body.data.map((s: any) => s.id)).not.toContain(space.id);
  });

  it('caps live unclaimed spaces per client address', async () => {
    const ip = '203.0.113.9';
    for (let i = 0; i < 3; i++) await anon(ip);
    await expect(anon(ip)).rejects.toMatchObject({ code: 'anonymous_space_limit_reached' });
  });

  it('moves the deadline on update (capped at 30 days) and on claim-page visits (≤ 6 h extra)', async () => {
    const { space, key } = await anon('192.0.2.1');
    clock.advance(2 * HOUR);
    await t.server.services.anonymous.touch(space.id);
    let s = (await t.api('GET', '/v1/claim/status', { token: key })).body.data;
    expect(s.expiresAt).toBe(new Date(clock.now().getTime() + 6 * HOUR).toISOString());
    // A visit with more than an hour left changes nothing.
    s = (await t.api('POST', '/v1/claim/visit', { token: key })).body.data;
    expect(s.extendedTo).toBeNull();
    // 5.5 h later a visit extends toward one hour from the visit.
    clock.advance(5.5 * HOUR);
    s = (await t.api('POST', '/v1/claim/visit', { token: key })).body.data;
    expect(s.extendedTo).toBe(new Date(clock.now().getTime() + HOUR).toISOString());
    expect(s.secondsLeft).toBe(3600);
    const spaceRes = await t.api('GET', `/v1/spaces/${space.id}`, { token: key });
    expect(spaceRes.body.data.space.expiryExtension).toEqual({ extendedTo: s.extendedTo });
    // Repeated visits never push past publish deadline + 6 h.
    for (let i = 0; i < 12; i++) {
      clock.advance(0.9 * HOUR);
      s = (await t.api('POST', '/v1/claim/visit', { token: key })).body.data;
    }
    expect(Date.parse(s.extendedTo)).toBe(Date.parse(s.expiresAt) + 6 * HOUR);
  });

  it('claims into a team; the key then stops working; a second claim fails', async () => {
    const u = await createUser(t, 'claimer');
    const { space, key } = await anon('192.0.2.2');
    expectProblem(
      await t.api('POST', '/v1/claim', { token: u.token, body: { key: 'sfc_nope' } }),
      401,
      'invalid_claim_token',
    );
    expectProblem(
      await t.api('POST', '/v1/claim', { token: u.token, body: { key, team: 'team_nope' } }),
      404,
      'claim_target_not_found',
    );
    const results = await Promise.all([
      t.api('POST', '/v1/claim', { token: u.token, body: { key, team: u.teamId } }),
      t.api('POST', '/v1/claim', { token: u.token, body: { key, team: u.teamId } }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const ok = results.find((r) => r.status === 200)!;
    expect(ok.body.data.space).toMatchObject({
      anonymous: false,
      teamId: u.teamId,
      principal: { principalType: 'team', principalId: u.teamId },
    });
    expect(ok.body.data.space.claimState.claimedAt).toBe(clock.now().toISOString());
    const mine = await t.api('GET', '/v1/spaces', { token: u.token });
    expect(mine.body.data.map((s: any) => s.id)).toContain(space.id);
    expect((await t.api('GET', `/v1/spaces/${space.id}`, { token: u.token })).body.data.access).toBe(
      'private',
    );
    expectProblem(await t.api('GET', `/v1/spaces/${space.id}`, { token: key }), 409, 'space_already_claimed');
  });

  it('rotates the key: the old one stops, the new one works', async () => {
    const { space, key } = await anon('192.0.2.3');
    const r = await t.api('POST', '/v1/claim/rotate', { token: key });
    expect(r.body.data.claimUrl).toBe(`${t.server.services.config.publicUrl}/claim#${r.body.data.key}`);
    expectProblem(await t.api('GET', '/v1/claim/status', { token: key }), 401, 'unauthorized');
    expect((await t.api('GET', '/v1/claim/status', { token: r.body.data.key })).body.data.spaceId).toBe(
      space.id,
    );
  });

  it('expires (disabled anonymous_expired), can be claimed back in the recovery window, else is purged', async () => {
    const u = await createUser(t);
    const a = await anon('192.0.2.4');
    const b = await anon('192.0.2.4');
    clock.advance(6 * HOUR + 1000);
    expect(await t.server.services.anonymous.expireDue(clock.now())).toBeGreaterThanOrEqual(2);
    const st = (await t.api('GET', '/v1/claim/status', { token: a.key })).body.data;
    expect(st.expired).toBe(true);
    const got = (await t.api('GET', `/v1/spaces/${a.space.id}`, { token: a.key })).body.data.space;
    expect(got.disabled).toEqual({ at: clock.now().toISOString(), reasonCode: 'anonymous_expired' });
    expect(got.claimState.purgeAfter).toBe(new Date(clock.now().getTime() + 7 * 24 * HOUR).toISOString());
    // Claimed inside the window: it comes back.
    const claimed = await t.api('POST', '/v1/claim', { token: u.token, body: { key: a.key } });
    expect(claimed.body.data.space.disabled).toBeNull();
    // The other one is purged after the window and can't be claimed any more.
    clock.advance(7 * 24 * HOUR + 1000);
    expect(await t.server.services.anonymous.purgeDue(clock.now())).toBeGreaterThanOrEqual(1);
    expectProblem(
      await t.api('POST', '/v1/claim', { token: u.token, body: { key: b.key } }),
      401,
      'invalid_claim_token',
    );
  });

  it('serves the claim page without leaking the key', async () => {
    const res = await t.api('GET', '/claim', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(String(res.headers['content-security-policy'])).toMatch(/frame-ancestors 'none'/);
    // The dashboard's page (#23): no inline script; its script reads the key from the fragment.
    expect(String(res.headers['content-security-policy'])).not.toContain('unsafe-inline');
    const src = /<script type="module" crossorigin src="([^"]+)"/.exec(res.text)![1]!;
    expect((await t.api('GET', src, { token: null })).text).toContain('location.hash');
  });
});
