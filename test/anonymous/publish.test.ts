import { FormData, request } from 'undici';
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

describeEachDb('anonymous publish end to end', (db) => {
  let t: TestServer;
  const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
  beforeAll(async () => {
    t = await startServer({
      db,
      clock,
      env: { SPACES_ANON_PUBLISHES_PER_HOUR: '6', SPACES_ANON_MAX_FILES: '3' },
    });
  });
  afterAll(() => t.close());

  const publish = async (files: Record<string, string>, token?: string) => {
    const fd = new FormData();
    for (const [name, body] of Object.entries(files)) fd.append('files', new Blob([body]), name);
    const res = await request(`${t.url}/v1/publish`, {
      method: 'POST',
      headers: token ? { authorization: `Bearer ${token}` } : {},
      body: fd,
    });
    return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as any };
  };

  it('publishes without an account, updates with the key, claims, expires, and is purged', async () => {
    const first = await publish({ 'index.html': '<h1>v1</h1>' });
    expect(first.status).toBe(201);
    const { claim, space } = first.body.data;
    expect(claim.key).toMatch(/^sfc_/);
    expect(claim.claimUrl).toBe(`${t.server.services.config.publicUrl}/claim#${claim.key}`);
    expect(claim.openUrl).toBe(`${space.liveUrl}/__/open#${claim.key}`);
    expect(claim.expiresAt).toBe(new Date(clock.now().getTime() + 6 * HOUR).toISOString());
    expect(first.body.data.version.status).toBe('ready');

    // The bare live URL shows the unclaimed notice; the door opens the real site.
    const host = `${space.slug}.localhost`;
    expect((await t.api('GET', '/', { token: null, host })).text).not.toContain('v1');
    const door = await t.api('GET', `/__/${claim.key}`, { token: null, host });
    const cookie = String(door.headers['set-cookie']).split(';')[0]!;
    expect((await t.api('GET', '/', { token: null, host, headers: { cookie } })).text).toContain(
      '<h1>v1</h1>',
    );

    // An update with the key moves the deadline.
    clock.advance(2 * HOUR);
    const second = await publish({ 'index.html': '<h1>v2</h1>' }, claim.key);
    expect(second.status).toBe(201);
    expect(second.body.data.space.id).toBe(space.id);
    expect(second.body.data.claim).toBeUndefined();
    const st = await t.api('GET', '/v1/claim/status', { token: claim.key });
    expect(st.body.data.expiresAt).toBe(new Date(clock.now().getTime() + 6 * HOUR).toISOString());

    // Claim into a team: the key no longer publishes.
    const u = await createUser(t, 'anonclaimer');
    const claimed = await t.api('POST', '/v1/claim', { token: u.token, body: { key: claim.key } });
    expect(claimed.status).toBe(200);
    const refused = await publish({ 'index.html': 'v3' }, claim.key);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('space_already_claimed');
    expect(claimed.body.data.space.channels.live).toBeDefined();

    // A second space left to expire: 410 page, then claimed back inside the recovery window.
    const other = (await publish({ 'index.html': 'other' })).body.data;
    const third = (await publish({ 'index.html': 'third' })).body.data;
    clock.advance(6 * HOUR + 1000);
    await t.server.services.anonymous.expireDue(clock.now());
    const expired = await t.api('GET', '/', { token: null, host: `${other.space.slug}.localhost` });
    expect(expired.status).toBe(410);
    const back = await t.api('POST', '/v1/claim', { token: u.token, body: { key: other.claim.key } });
    expect(back.status).toBe(200);
    // Now team-owned (private): served to signed-in members through the access hand-off.
    const after = await t.api('GET', '/', { token: null, host: `${other.space.slug}.localhost` });
    expect(after.status).toBe(302);
    // The third is purged after the window; its hostname stays taken.
    clock.advance(7 * 24 * HOUR + 1000);
    await t.server.services.anonymous.purgeDue(clock.now());
    expectProblem(
      await t.api('POST', '/v1/claim', { token: u.token, body: { key: third.claim.key } }),
      401,
      'invalid_claim_token',
    );
    // The expired page stays forever.
    expect((await t.api('GET', '/', { token: null, host: `${third.space.slug}.localhost` })).status).toBe(
      410,
    );
  });

  it('enforces the anonymous limits and the per-address rate', async () => {
    const big = await publish({ 'a.html': 'a', 'b.html': 'b', 'c.html': 'c', 'd.html': 'd' });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('version_file_count_exceeded');
    let last;
    for (let i = 0; i < 8; i++) last = await publish({ 'index.html': `n${i}` });
    expect(last!.status).toBe(429);
    expect(last!.body.code).toBe('anonymous_publish_rate_limited');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
  });
});
