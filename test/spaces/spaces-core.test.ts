import { FormData, request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

describeEachDb('spaces: create, list, get', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('creates with an empty body: generated slug, defaults, the create variant', async () => {
    const res = await t.api('POST', '/v1/spaces', {
      raw: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    const s = res.body.data.space;
    expect(s.slug).toMatch(/^[a-z]+-[a-z]+-\d{4}$/);
    expect(s.title).toBe(s.slug);
    expect(s.id).toMatch(/^spc_/);
    expect(s).toMatchObject({
      anonymous: false,
      status: 'active',
      disabled: null,
      claimState: null,
      publicName: s.slug,
      defaultHostname: `${s.slug}.localhost`,
      liveUrl: `http://${s.slug}.localhost:${t.port}`,
      channels: {},
      config: null,
      noindex: false,
      // A team-owned space has its service-managed git remote from the start (§7).
      git: {
        managedBy: 'service',
        remoteUrl: `http://localhost:${t.port}/git/${s.id}.git`,
        repository: null,
        defaultBranch: 'main',
      },
      thumbnail: null,
      archivedBytes: 0,
      hasRuntime: false,
      dataLocation: 'auto',
      region: 'auto',
      mode: 'live',
      operation: null,
      infrastructure: {
        region: null,
        runtimeInstanceId: null,
        managementHostname: null,
        provisioningState: 'converged',
      },
    });
    expect(s.settingsDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.data.access).toBe('team');
    expect(s.principal).toEqual({ tenantId: s.tenantId, principalType: 'team', principalId: s.teamId });
  });

  it('accepts form and multipart bodies with nested JSON fields', async () => {
    const form = await t.api('POST', '/v1/spaces', {
      raw: 'slug=form-space&title=Form+Space&access=public',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(201);
    expect(form.body.data.space.title).toBe('Form Space');
    expect(form.body.data.access).toBe('public');
    const fd = new FormData();
    fd.set('slug', 'multi-space');
    fd.set('config', JSON.stringify({ cleanUrls: true }));
    const res = await request(`${t.url}/v1/spaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.ownerKey}` },
      body: fd,
    });
    const body: any = await res.body.json();
    expect(res.statusCode).toBe(201);
    expect(body.data.space.config).toEqual({ cleanUrls: true });
    const bad = await t.api('POST', '/v1/spaces', {
      raw: 'config=%7Bnope',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(expectProblem(bad, 400, 'validation_error').pointer).toBe('/config');
  });

  const slugCases: Array<[string, number, string]> = [
    ['a', 400, 'validation_error'],
    ['x'.repeat(56), 400, 'validation_error'],
    ['Upper', 400, 'slug_invalid'],
    ['double--dash', 400, 'slug_invalid'],
    ['-lead', 400, 'slug_invalid'],
    ['trail-', 400, 'slug_invalid'],
    ['under_score', 400, 'slug_invalid'],
    ['www', 400, 'slug_reserved'],
    ['v12', 400, 'slug_reserved'],
  ];
  it.each(slugCases)('rejects slug %j', async (slug, status, code) => {
    const p = expectProblem(await t.api('POST', '/v1/spaces', { body: { slug } }), status, code);
    expect(p.pointer).toBe('/slug');
  });

  it('accepts the slug bounds and refuses a taken slug with a suggestion', async () => {
    expect((await t.api('POST', '/v1/spaces', { body: { slug: 'ab' } })).status).toBe(201);
    expect((await t.api('POST', '/v1/spaces', { body: { slug: 'y'.repeat(55) } })).status).toBe(201);
    const taken = await t.api('POST', '/v1/spaces', { body: { slug: 'ab' } });
    const p = expectProblem(taken, 409, 'slug_unavailable');
    expect(p.details.suggestion).toBe('ab-2');
    expect((await t.api('POST', '/v1/spaces', { body: { slug: p.details.suggestion } })).status).toBe(201);
  });

  const bodyCases: Array<[string, unknown, string, string]> = [
    ['unknown property', { nope: 1 }, 'validation_error', '/nope'],
    ['title empty', { title: '' }, 'validation_error', '/title'],
    ['title too long', { title: 't'.repeat(256) }, 'validation_error', '/title'],
    ['bad access', { access: 'everyone' }, 'validation_error', '/access'],
    ['bad data location', { dataLocation: 'mars' }, 'invalid_data_location', '/dataLocation'],
    [
      'principal id with slash',
      { principal: { type: 'team', id: 'a/b' } },
      'validation_error',
      '/principal/id',
    ],
    [
      'principal id too long',
      { principal: { type: 'team', id: 'a'.repeat(257) } },
      'validation_error',
      '/principal/id',
    ],
    ['principal bad type', { principal: { type: 'user', id: 'x' } }, 'validation_error', '/principal/type'],
  ];
  it.each(bodyCases)('rejects %s', async (_n, body, code, pointer) => {
    const p = expectProblem(await t.api('POST', '/v1/spaces', { body }), 400, code);
    expect(p.pointer).toBe(pointer);
  });

  it('validates the config overlay with exact pointers and stores it normalised', async () => {
    const bad = await t.api('POST', '/v1/spaces', {
      body: { config: { firewall: [{ action: 'block', match: { ip: ['10.0.0.1', '999.1.1.1'] } }] } },
    });
    expect(expectProblem(bad, 400, 'validation_error').pointer).toBe('/config/firewall/0/match/ip/1');
    const unknown = await t.api('POST', '/v1/spaces', { body: { config: { cleanUrls: true, nope: 1 } } });
    expect(expectProblem(unknown, 400, 'validation_error').pointer).toBe('/config/nope');
    const ok = await t.api('POST', '/v1/spaces', {
      body: {
        config: {
          firewall: [{ action: 'block', match: { path: '/admin/*' } }],
          dataSources: { main: { kind: 'cms', url: 'https://EXAMPLE.com:443/a/../b/' } },
        },
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.space.config.firewall[0].status).toBe(403);
    expect(ok.body.data.space.config.dataSources.main.url).toBe('https://example.com/b');
    const patched = await t.api('PATCH', `/v1/spaces/${ok.body.data.space.id}`, {
      body: { config: { theme: { accent: 'not a colour!' } } },
    });
    expect(expectProblem(patched, 400, 'validation_error').pointer).toBe('/config/theme/accent');
  });

  it('answers source with feature_unavailable', async () => {
    const res = await t.api('POST', '/v1/spaces', {
      body: {
        source: { provider: 'githost', installationId: '1', repositoryId: '2', repositoryFullName: 'o/r' },
      },
    });
    expect(expectProblem(res, 501, 'feature_unavailable').pointer).toBe('/source');
  });

  it('keeps data location and title from the body, and lists newest first with the team filter', async () => {
    const u = await createUser(t, 'spacer');
    const team2 = (await t.api('POST', '/v1/teams', { token: u.token, body: { name: 'Second' } })).body.data;
    const a = await t.api('POST', '/v1/spaces', {
      token: u.token,
      body: { title: 'A', dataLocation: 'ams' },
    });
    const b = await t.api('POST', '/v1/spaces', { token: u.token, body: { title: 'B', teamId: team2.id } });
    const c = await t.api('POST', '/v1/spaces', {
      token: u.token,
      body: { title: 'C', principal: { type: 'team', id: team2.slug } },
    });
    expect(a.body.data.space).toMatchObject({ dataLocation: 'ams', region: 'ams', teamId: u.teamId });
    expect(c.body.data.space.teamId).toBe(team2.id);
    const all = await t.api('GET', '/v1/spaces', { token: u.token });
    expect(all.body.data.map((s: any) => s.title)).toEqual(['C', 'B', 'A']);
    const filtered = await t.api('GET', `/v1/spaces?team=${team2.slug}&limit=1`, { token: u.token });
    expect(filtered.body.data.map((s: any) => s.title)).toEqual(['C']);
    expect(filtered.body.pagination.hasMore).toBe(true);
    const next = await t.api(
      'GET',
      `/v1/spaces?team=${team2.slug}&limit=1&cursor=${encodeURIComponent(filtered.body.pagination.nextCursor)}`,
      {
        token: u.token,
      },
    );
    expect(next.body.data.map((s: any) => s.title)).toEqual(['B']);
    expect(next.body.pagination).toEqual({ nextCursor: null, hasMore: false });
    const got = await t.api('GET', `/v1/spaces/${b.body.data.space.slug}`, { token: u.token });
    expect(got.body.data.space.id).toBe(b.body.data.space.id);
    expect(Object.keys(got.body.data.space)).not.toContain('mode');
  });

  it('isolates spaces across teams: 404 and absent from lists', async () => {
    const alice = await createUser(t, 'alice');
    const mallory = await createUser(t, 'mallory');
    const s = (await t.api('POST', '/v1/spaces', { token: alice.token, body: { title: 'secret' } })).body.data
      .space;
    expectProblem(await t.api('GET', `/v1/spaces/${s.id}`, { token: mallory.token }), 404, 'not_found');
    expectProblem(await t.api('GET', `/v1/spaces/${s.slug}`, { token: mallory.token }), 404, 'not_found');
    const list = await t.api('GET', '/v1/spaces', { token: mallory.token });
    expect(list.body.data.map((x: any) => x.id)).not.toContain(s.id);
    expectProblem(
      await t.api('GET', `/v1/spaces?team=${alice.teamId}`, { token: mallory.token }),
      404,
      'not_found',
    );
    expectProblem(
      await t.api('POST', '/v1/spaces', { token: mallory.token, body: { teamId: alice.teamId } }),
      404,
      'not_found',
    );
  });
});
