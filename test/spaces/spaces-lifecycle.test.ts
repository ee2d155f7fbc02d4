import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { settingsDigest } from '../../src/domain/spaces/settings-digest.ts';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

describeEachDb('spaces: settings, rename, delete, operations', (db) => {
  let t: TestServer;
  const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
  beforeAll(async () => {
    t = await startServer({ db, clock });
  });
  afterAll(() => t.close());

  const create = async (body: object = {}, token?: string) => {
    const res = await t.api('POST', '/v1/spaces', { body, token });
    expect(res.status).toBe(201);
    return res.body.data.space;
  };

  it('computes the settings digest over title and overlay, equal on every database', async () => {
    const s = await create({ title: 'Digest', config: { cleanUrls: true, index: 'home.html' } });
    expect(s.settingsDigest).toBe(settingsDigest('Digest', { index: 'home.html', cleanUrls: true }));
    // Documented canonical form: sorted keys, no whitespace.
    // Documented canonical form: sha256 of {"config":…,"title":…} with sorted keys and no whitespace.
    expect(s.settingsDigest).toBe('b0fb4aa1d3e18638f36a3df7b251801dadd53ac8646bb1730cb1e11aa189b894');
  });

  it('patches title, config, noindex and access; config replaces the overlay and null clears it', async () => {
    const s = await create({ config: { cleanUrls: false, listing: true } });
    const r1 = await t.api('PATCH', `/v1/spaces/${s.id}`, {
      body: { title: 'New', config: { index: false }, noindex: true, access: 'public' },
    });
    expect(r1.status).toBe(200);
    expect(r1.body.data.space).toMatchObject({ title: 'New', config: { index: false }, noindex: true });
    expect(r1.body.data.access).toBe('public');
    expect(r1.body.data.space.settingsDigest).toBe(settingsDigest('New', { index: false }));
    const r2 = await t.api('PATCH', `/v1/spaces/${s.slug}`, { body: { config: null } });
    expect(r2.body.data.space.config).toBeNull();
    expectProblem(
      await t.api('PATCH', `/v1/spaces/${s.id}`, { body: { title: '' } }),
      400,
      'validation_error',
    );
    expectProblem(
      await t.api('PATCH', `/v1/spaces/${s.id}`, { body: { bogus: 1 } }),
      400,
      'validation_error',
    );
    const dl = expectProblem(
      await t.api('PATCH', `/v1/spaces/${s.id}`, { body: { dataLocation: 'ams' } }),
      409,
      'data_location_immutable',
    );
    expect(dl.pointer).toBe('/dataLocation');
  });

  it('compare-and-swap: a stale digest is 412 with the current digest', async () => {
    const s = await create({ title: 'CAS' });
    const ok = await t.api('PATCH', `/v1/spaces/${s.id}`, {
      body: { title: 'CAS 2', baseSettingsDigest: s.settingsDigest },
    });
    expect(ok.status).toBe(200);
    const stale = await t.api('PATCH', `/v1/spaces/${s.id}`, {
      body: { title: 'CAS 3', baseSettingsDigest: s.settingsDigest },
    });
    const p = expectProblem(stale, 412, 'resource_revision_changed');
    expect(p.details.current).toBe(ok.body.data.space.settingsDigest);
  });

  it('two concurrent PATCHes from the same digest: exactly one wins', async () => {
    const s = await create({ title: 'Race' });
    const results = await Promise.all(
      ['Left', 'Right', 'Up', 'Down'].map((title) =>
        t.api('PATCH', `/v1/spaces/${s.id}`, { body: { title, baseSettingsDigest: s.settingsDigest } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412]);
    const winner = results.find((r) => r.status === 200)!;
    const now = await t.api('GET', `/v1/spaces/${s.id}`);
    expect(now.body.data.space.title).toBe(winner.body.data.space.title);
  });

  it('renames: new hostname, old one kept for the space, never re-issued', async () => {
    const s = await create({ slug: 'old-name' });
    const r = await t.api('POST', `/v1/spaces/${s.id}/rename`, { body: { slug: 'new-name' } });
    expect(r.status).toBe(200);
    expect(r.body.data.space).toMatchObject({
      id: s.id,
      slug: 'new-name',
      publicName: 'new-name',
      defaultHostname: 'new-name.localhost',
    });
    expect(r.body.data.operation).toMatchObject({
      kind: 'rename',
      status: 'succeeded',
      resources: [{ type: 'space', id: s.id }],
    });
    // The old name belongs to this space forever.
    const grab = await t.api('POST', '/v1/spaces', { body: { slug: 'old-name' } });
    expect(expectProblem(grab, 409, 'slug_unavailable').details.suggestion).toBe('old-name-2');
    // Renaming back is allowed: it is this space's own name.
    const back = await t.api('PATCH', `/v1/spaces/${s.id}`, { body: { slug: 'old-name' } });
    expect(back.body.data.space.slug).toBe('old-name');
    expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/rename`, { body: { slug: 'Bad Name' } }),
      400,
      'slug_invalid',
    );
    expectProblem(
      await t.api('PATCH', `/v1/spaces/${s.id}`, { body: { slug: 'x-y', title: 'both' } }),
      400,
      'validation_error',
    );
    const other = await create({ slug: 'someone-else' });
    expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/rename`, { body: { slug: other.slug } }),
      409,
      'slug_unavailable',
    );
  });

  it('needs spaces:rename to rename', async () => {
    const key = await t.api('POST', '/v1/account/api-keys', {
      body: { name: 'pub', preset: 'space_publisher' },
    });
    const s = await create({});
    const res = await t.api('POST', `/v1/spaces/${s.id}/rename`, {
      token: key.body.data.token,
      body: { slug: 'renamed-by-key' },
    });
    expect(expectProblem(res, 403, 'forbidden').details.requiredScope).toBe('spaces:rename');
    const viaPatch = await t.api('PATCH', `/v1/spaces/${s.id}`, {
      token: key.body.data.token,
      body: { slug: 'renamed-by-key' },
    });
    expectProblem(viaPatch, 403, 'forbidden');
  });

  it('deletes (status deleting), restores inside the window, refuses after it, and purges', async () => {
    const s = await create({ slug: 'doomed' });
    const del = await t.api('DELETE', `/v1/spaces/${s.id}`);
    expect(del.status).toBe(202);
    expect(del.body.data.space.status).toBe('deleting');
    expect(del.body.data.operation).toMatchObject({ kind: 'delete', status: 'queued' });
    expectProblem(await t.api('GET', `/v1/spaces/${s.id}`), 404, 'not_found');
    const list = await t.api('GET', '/v1/spaces?limit=100');
    expect(list.body.data.map((x: any) => x.id)).not.toContain(s.id);
    const restored = await t.api('POST', `/v1/spaces/${s.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.data.space.status).toBe('active');
    expectProblem(await t.api('POST', `/v1/spaces/${s.id}/restore`), 409, 'space_not_disabled');
    const ops = await t.api('GET', `/v1/spaces/${s.id}/operations`);
    expect(ops.body.data.map((o: any) => [o.kind, o.status])).toEqual([
      ['restore', 'succeeded'],
      ['delete', 'canceled'],
    ]);
    const one = await t.api('GET', `/v1/operations/${ops.body.data[1].id}`);
    expect(one.body.data.finishedAt).toBeDefined();

    await t.api('DELETE', `/v1/spaces/${s.id}`);
    clock.advance(7 * 24 * 3600 * 1000 + 1000);
    expectProblem(await t.api('POST', `/v1/spaces/${s.id}/restore`), 410, 'space_not_restorable');
    expect(await t.server.services.spaces.purgeDeleted(clock.now())).toBeGreaterThanOrEqual(1);
    const ops2 = await t.api('GET', `/v1/spaces/${s.id}/operations`);
    expect(ops2.body.data[0]).toMatchObject({ kind: 'delete', status: 'succeeded' });
    // The hostname is never re-issued.
    expectProblem(await t.api('POST', '/v1/spaces', { body: { slug: 'doomed' } }), 409, 'slug_unavailable');
  });

  it('isolates every endpoint: another team gets 404', async () => {
    const alice = await createUser(t, 'alice');
    const mallory = await createUser(t, 'mallory');
    const s = await create({ title: 'mine' }, alice.token);
    const op = (
      await t.api('POST', `/v1/spaces/${s.id}/rename`, { token: alice.token, body: { slug: 'alices-space' } })
    ).body.data.operation;
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/v1/spaces/${s.id}`],
      ['PATCH', `/v1/spaces/${s.id}`, { title: 'pwned' }],
      ['POST', `/v1/spaces/${s.id}/rename`, { slug: 'pwned-space' }],
      ['DELETE', `/v1/spaces/${s.id}`],
      ['POST', `/v1/spaces/${s.id}/restore`],
      ['GET', `/v1/spaces/${s.id}/operations`],
      ['GET', `/v1/operations/${op.id}`],
    ];
    for (const [m, path, body] of attempts)
      expectProblem(await t.api(m, path, { token: mallory.token, body }), 404, 'not_found');
    expect((await t.api('GET', `/v1/spaces/${s.id}`, { token: alice.token })).body.data.space.title).toBe(
      'mine',
    );
  });
});
