import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * The grants API over HTTP: create, list, replace, revoke (events in the same transaction), the
 * validation the schema cannot do (pointer to the field), another team's space is not found, and
 * `grants/check` naming the grant (or the space's own access) that lets a described visitor in.
 */
describeEachDb('grants API', (db) => {
  let t: TestServer;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let outsider: Awaited<ReturnType<typeof createUser>>;
  let spaceId: string;
  let slug: string;

  beforeAll(async () => {
    t = await startServer({ db });
    owner = await createUser(t, 'gowner');
    outsider = await createUser(t, 'goutsider');
    const s = await createSpace(t, owner.token, { access: 'private' });
    spaceId = s.id;
    slug = s.slug;
    await publishViaVersions(t, spaceId, { 'index.html': 'hi', 'docs/a.html': 'a' }, { token: owner.token });
  });
  afterAll(() => t?.close());

  const api = (method: string, path: string, body?: unknown, token = owner.token) =>
    t.api(method, `/v1/spaces/${spaceId}${path}`, { token, body });

  it('creates, lists, replaces and revokes a grant, recording one event each', async () => {
    const created = await api('POST', '/grants', {
      audience: { type: 'public' },
      paths: ['/docs/**', '!/docs/internal/**'],
      constraints: { expiresAt: '2099-01-01T00:00:00Z', ip: ['10.0.0.0/8', '2001:db8::/32'] },
    });
    expect(created.status, created.text).toBe(201);
    const g = created.body.data;
    expect(g).toMatchObject({
      role: 'viewer',
      capabilities: ['page.view'],
      target: 'live',
      source: 'grant',
      uses: 0,
      paths: ['/docs/**', '!/docs/internal/**'],
    });
    const list = await api('GET', '/grants');
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(g.id);

    const put = await api('PUT', `/grants/${g.id}`, { audience: { type: 'team' }, role: 'commenter' });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data).toMatchObject({ id: g.id, role: 'commenter', paths: ['/**'], constraints: {} });

    expect((await api('DELETE', `/grants/${g.id}`)).status).toBe(204);
    expectProblem(await api('DELETE', `/grants/${g.id}`), 404, 'grant_not_found');
    expectProblem(
      await api('PUT', `/grants/${g.id}`, { audience: { type: 'public' } }),
      404,
      'grant_not_found',
    );
    expect((await api('GET', '/grants')).body.data.map((x: { id: string }) => x.id)).not.toContain(g.id);

    const events = await t.api('GET', `/v1/spaces/${spaceId}/activity?limit=50`, { token: owner.token });
    const codes = (events.body.data as { code: string; details: { grantId?: string } }[])
      .filter((e) => e.details.grantId === g.id)
      .map((e) => e.code)
      .sort();
    expect(codes).toEqual(['space.grant_created', 'space.grant_revoked', 'space.grant_updated']);
  });

  it('refuses what the schema cannot check, pointing at the field', async () => {
    const cases: [unknown, string][] = [
      [{ audience: { type: 'public' }, paths: ['!/a'] }, '/paths/0'],
      [{ audience: { type: 'public' }, paths: ['/a', 'b'] }, '/paths/1'],
      [{ audience: { type: 'public' }, paths: ['/a**'] }, '/paths/0'],
      [{ audience: { type: 'public' }, constraints: { ip: ['10.0.0.0/33'] } }, '/constraints/ip/0'],
      [{ audience: { type: 'public' }, constraints: { ip: ['1.2.3.4', 'nope'] } }, '/constraints/ip/1'],
      [
        {
          audience: { type: 'public' },
          constraints: { notBefore: '2030-01-01T00:00:00Z', expiresAt: '2029-01-01T00:00:00Z' },
        },
        '/constraints/expiresAt',
      ],
      [{ audience: { type: 'person' } }, '/audience'],
      [{ audience: { type: 'link', credentialId: 'x' } }, '/audience/type'],
    ];
    for (const [body, pointer] of cases) {
      const r = await api('POST', '/grants', body);
      expect(expectProblem(r, 422, 'invalid_grant').pointer, JSON.stringify(body)).toBe(pointer);
    }
    const bad = await api('POST', '/grants', { audience: { type: 'public' }, target: 'nightly' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_error');
  });

  it('hides another team’s space and its grants', async () => {
    const g = (await api('POST', '/grants', { audience: { type: 'public' }, paths: ['/x'] })).body.data;
    expectProblem(await api('GET', '/grants', undefined, outsider.token), 404, 'not_found');
    expectProblem(await api('DELETE', `/grants/${g.id}`, undefined, outsider.token), 404, 'not_found');
    const other = await createSpace(t, outsider.token, {});
    expectProblem(
      await t.api('DELETE', `/v1/spaces/${other.id}/grants/${g.id}`, { token: outsider.token }),
      404,
      'grant_not_found',
    );
  });

  it('answers which grant would let a visitor see a URL', async () => {
    const pub = (
      await api('POST', '/grants', {
        audience: { type: 'public' },
        paths: ['/docs/**'],
        target: 'all-versions',
      })
    ).body.data;
    const person = (
      await api('POST', '/grants', {
        audience: { type: 'person', email: 'Rev@Example.test' },
        role: 'commenter',
      })
    ).body.data;
    const check = async (q: Record<string, string>) => {
      const r = await api('GET', `/grants/check?${new URLSearchParams(q)}`);
      expect(r.status, r.text).toBe(200);
      return r.body.data;
    };
    expect(await check({ url: `http://${slug}.localhost/docs/a.html` })).toMatchObject({
      allowed: true,
      via: 'grant',
      grantId: pub.id,
      path: '/docs/a.html',
      target: 'live',
    });
    const refused = await check({ url: '/index.html' });
    expect(refused).toMatchObject({ allowed: false, via: null, grantId: null });
    expect(refused.misses).toContainEqual({ grantId: pub.id, miss: 'path' });
    expect(refused.misses).toContainEqual({ grantId: person.id, miss: 'audience' });
    expect(
      await check({ url: '/index.html', email: 'rev@example.test', capability: 'comments.write' }),
    ).toMatchObject({
      allowed: true,
      grantId: person.id,
    });
    expect(
      await check({ url: '/index.html', email: 'rev@example.test', capability: 'content.publish' }),
    ).toMatchObject({
      allowed: false,
    });
    expect(await check({ url: '/index.html', teamMember: 'true' })).toMatchObject({
      allowed: true,
      via: 'space_access',
    });
    const elsewhere = await api(
      'GET',
      `/grants/check?${new URLSearchParams({ url: 'http://other.localhost/' })}`,
    );
    expectProblem(elsewhere, 400, 'invalid_access_check');
  });
});
