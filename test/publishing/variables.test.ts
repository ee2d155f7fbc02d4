import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { expireStaleVersions, sweepUnreferencedBlobs } from '../../src/domain/publishing/service.ts';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, download, manifestOf, publishViaVersions, sha } from './helpers.ts';

describeEachDb('publishing: variables, templates, expiry, blob GC', (db) => {
  let t: TestServer;
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  beforeAll(async () => {
    t = await startServer({ db, clock });
  });
  afterAll(() => t.close());

  it('stores plain and secret variables; secrets are write-only and encrypted at rest', async () => {
    const s = await createSpace(t);
    const put = await t.api('PUT', `/v1/spaces/${s.id}/variables/API_URL`, {
      body: { value: 'https://api.test' },
    });
    expect(put.status).toBe(201);
    expect(put.body.data).toMatchObject({ name: 'API_URL', value: 'https://api.test', secret: false });
    const sec = await t.api('PUT', `/v1/spaces/${s.id}/variables/TOKEN`, {
      body: { value: 'hunter2', secret: true },
    });
    expect(sec.body.data).toMatchObject({ name: 'TOKEN', value: null, secret: true });
    // An update without `secret` keeps the classification.
    const upd = await t.api('PUT', `/v1/spaces/${s.id}/variables/TOKEN`, { body: { value: 'hunter3' } });
    expect(upd.status).toBe(200);
    expect(upd.body.data.value).toBeNull();
    const list = await t.api('GET', `/v1/spaces/${s.id}/variables`);
    expect(list.body.data.map((v: any) => [v.name, v.value, v.secret])).toEqual([
      ['API_URL', 'https://api.test', false],
      ['TOKEN', null, true],
    ]);
    expect(list.text).not.toContain('hunter');
    const row = await t.server.services.database.db
      .selectFrom('variables')
      .selectAll()
      .where('space_id', '=', s.id)
      .where('name', '=', 'TOKEN')
      .executeTakeFirstOrThrow();
    expect(row.value).not.toContain('hunter');
    expect(row.value.startsWith('v1:')).toBe(true);
    expect(await t.server.services.variables.reveal(s.id, 'TOKEN')).toBe('hunter3');
    const keyFile = path.join(t.dataDir, 'secret.key');
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);

    // Name and value bounds.
    expect(
      (await t.api('PUT', `/v1/spaces/${s.id}/variables/${'A'.repeat(128)}`, { body: { value: '' } })).status,
    ).toBe(201);
    for (const bad of ['A'.repeat(129), 'lower', '1ABC', 'A-B']) {
      expectProblem(
        await t.api('PUT', `/v1/spaces/${s.id}/variables/${bad}`, { body: { value: 'x' } }),
        400,
        'validation_error',
      );
    }
    expect(
      (await t.api('PUT', `/v1/spaces/${s.id}/variables/BIG`, { body: { value: 'x'.repeat(65536) } })).status,
    ).toBe(201);
    expectProblem(
      await t.api('PUT', `/v1/spaces/${s.id}/variables/BIG`, { body: { value: 'é'.repeat(32769) } }),
      400,
      'validation_error',
    );
    expect((await t.api('DELETE', `/v1/spaces/${s.id}/variables/BIG`)).status).toBe(204);
    expectProblem(await t.api('DELETE', `/v1/spaces/${s.id}/variables/BIG`), 404, 'variable_not_found');
  });

  it('renders templates from config and overlay; refuses secrets, unknown names, missing and big files', async () => {
    const s = await createSpace(t, undefined, { config: { templates: ['/overlay.txt'] } });
    await t.api('PUT', `/v1/spaces/${s.id}/variables/API_URL`, { body: { value: 'https://api.test' } });
    await t.api('PUT', `/v1/spaces/${s.id}/variables/SECRET`, { body: { value: 's3cr3t', secret: true } });
    const cfg = JSON.stringify({ templates: ['config.js'] });
    const site = {
      'index.html': 'tpl',
      'spaces.json': cfg,
      'config.js': 'const a = 1;\nwindow.API = "{{ vars.API_URL }}";\n',
      'overlay.txt': 'url={{vars.API_URL}}',
    };
    const ok = await publishViaVersions(t, s.id, site);
    const files = await download(t, s.id, ok.finalized!.version.id);
    expect(files.get('config.js')!.toString()).toBe('const a = 1;\nwindow.API = "https://api.test";\n');
    expect(files.get('overlay.txt')!.toString()).toBe('url=https://api.test');

    const fails = async (extra: Record<string, string>) => {
      const r = await publishViaVersions(t, s.id, { ...site, ...extra }).catch((e) => e as Error);
      expect(String(r)).toContain('version_failed');
      const v = await t.api('GET', `/v1/spaces/${s.id}/versions/latest`);
      expect(v.body.data.status).toBe('failed');
      return v.body.data.diagnostics;
    };
    expect(await fails({ 'config.js': 'x\ny\n{{ vars.NOPE }}' })).toEqual([
      expect.objectContaining({ code: 'template_variable_unresolved', path: 'config.js:3' }),
    ]);
    expect(await fails({ 'config.js': '{{ vars.SECRET }}' })).toEqual([
      expect.objectContaining({ code: 'secret_variable_in_template', path: 'config.js:1' }),
    ]);
    expect(await fails({ 'spaces.json': JSON.stringify({ templates: ['gone.js'] }) })).toEqual([
      expect.objectContaining({ code: 'template_not_in_version', path: 'gone.js' }),
    ]);
    expect(await fails({ 'config.js': 'x'.repeat(16 * 1024 + 1) })).toEqual([
      expect.objectContaining({ code: 'template_file_too_large' }),
    ]);
    const atBound = await publishViaVersions(t, s.id, { ...site, 'config.js': 'y'.repeat(16 * 1024) });
    expect(atBound.finalized!.version.status).toBe('ready');
    // The failures never moved live.
    const live = await t.api('GET', `/v1/spaces/${s.id}/channels`);
    expect(live.body.data[0].versionId).toBe(atBound.finalized!.version.id);
  });

  it('expires versions unfinalized for 24 h and sweeps unreferenced blobs after the grace period', async () => {
    const s = await createSpace(t);
    const kept = await publishViaVersions(t, s.id, { 'index.html': 'kept-content' });
    const orphanBytes = 'orphan-content-only-in-abandoned-version';
    const c = await t.api('POST', `/v1/spaces/${s.id}/versions`, {
      body: { files: manifestOf({ 'index.html': orphanBytes }) },
    });
    const target = c.body.data.upload.targets[0];
    const up = await fetch(target.url, { method: 'PUT', body: orphanBytes });
    expect(up.status).toBe(200);
    const services = t.server.services;
    const orphanSha = sha(orphanBytes);
    expect(await services.blobs.has(orphanSha)).toBe(true);

    // Declared by an open upload: never swept, even far past the grace period.
    clock.advance(23 * 3600_000);
    expect(await expireStaleVersions(services, clock.now())).toBe(0);
    await sweepUnreferencedBlobs(services, clock.now(), 3600_000);
    expect(await services.blobs.has(orphanSha)).toBe(true);

    clock.advance(2 * 3600_000);
    expect(await expireStaleVersions(services, clock.now())).toBeGreaterThanOrEqual(1);
    const v = await t.api('GET', `/v1/spaces/${s.id}/versions/${c.body.data.version.id}`);
    expect(v.body.data.status).toBe('expired');
    expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/versions/${c.body.data.version.id}/finalize`),
      410,
      'version_expired',
    );
    const swept = await sweepUnreferencedBlobs(services, clock.now(), 3600_000);
    expect(swept.deleted).toBeGreaterThanOrEqual(1);
    expect(await services.blobs.has(orphanSha)).toBe(false);
    // The live version's bytes survive and still download.
    expect(await services.blobs.has(sha('kept-content'))).toBe(true);
    const files = await download(t, s.id, kept.finalized!.version.id);
    expect(files.get('index.html')!.toString()).toBe('kept-content');
  });
});
