import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { createSpace, manifestOf, publishViaVersions, putBytes } from './helpers.ts';

describeEachDb('GET /v1/spaces/{spaceId}/diagnostics', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('lists the live version’s records with stable ids and file:line paths, plus newer failed versions', async () => {
    const s = await createSpace(t);
    const empty = await t.api('GET', `/v1/spaces/${s.id}/diagnostics`);
    expect(empty.status).toBe(200);
    expect(empty.body.data).toEqual([]);
    const site = {
      'index.html': 'hi',
      _redirects: '/a /b 301\n',
      'spaces.json': JSON.stringify({ fallback: '/missing.html' }),
    };
    const v1 = (await publishViaVersions(t, s.id, site)).finalized;
    const res = await t.api('GET', `/v1/spaces/${s.id}/diagnostics`);
    expect(res.status).toBe(200);
    expect(res.body.$schema).toMatch(/DiagnosticsResponse\.json$/);
    const codes = res.body.data.map((d: any) => d.code);
    expect(codes).toContain('fallback_file_missing');
    const role = res.body.data.find((d: any) => d.code === 'fallback_file_missing');
    expect(role).toMatchObject({ versionId: v1.version.id, path: 'spaces.json', severity: 'warning' });
    expect(role.id).toMatch(/^dgn_[0-9a-f]{24}$/);
    expect(role.severity).toMatch(/^(warning|error|info)$/);
    expect(Object.keys(role).sort()).toEqual(
      [
        'id',
        'versionId',
        'createdAt',
        'code',
        'severity',
        'message',
        'path',
        'provider',
        'details',
        'fix',
        'retryable',
      ].sort(),
    );
    const again = await t.api('GET', `/v1/spaces/${s.id}/diagnostics`);
    expect(again.body.data.map((d: any) => d.id)).toEqual(res.body.data.map((d: any) => d.id));

    // A newer version that fails to finalize adds its records; live stays.
    const bad = { 'index.html': 'x', _redirects: '/a /b 301\n/x /y 302 Role=admin\n' };
    const created = await t.api('POST', `/v1/spaces/${s.id}/versions`, { body: { files: manifestOf(bad) } });
    for (const tg of created.body.data.upload.targets) await putBytes(tg.url, (bad as any)[tg.path]);
    const fin = await t.api('POST', `/v1/spaces/${s.id}/versions/${created.body.data.version.id}/finalize`);
    expect(fin.status).toBeGreaterThanOrEqual(400);
    const after = await t.api('GET', `/v1/spaces/${s.id}/diagnostics`);
    const versions = new Set(after.body.data.map((d: any) => d.versionId));
    expect(versions.has(v1.version.id)).toBe(true);
    expect(versions.has(created.body.data.version.id)).toBe(true);
    const failed = after.body.data.find((d: any) => d.code === 'redirect_role_unsupported');
    expect(failed).toMatchObject({
      path: '_redirects:2',
      severity: 'error',
      versionId: created.body.data.version.id,
    });
  });

  it('takes a space key or a general bearer; other teams get 404', async () => {
    const { space, key } = await t.server.services.anonymous.createSpace('198.51.100.77');
    expect((await t.api('GET', `/v1/spaces/${space.id}/diagnostics`, { token: key })).status).toBe(200);
    const s = await createSpace(t);
    expectProblem(await t.api('GET', `/v1/spaces/${s.id}/diagnostics`, { token: key }), 404, 'not_found');
    const other = await createUser(t);
    expectProblem(
      await t.api('GET', `/v1/spaces/${s.id}/diagnostics`, { token: other.token }),
      404,
      'not_found',
    );
    expectProblem(await t.api('GET', `/v1/spaces/${s.id}/diagnostics`, { token: null }), 401, 'unauthorized');
  });
});
