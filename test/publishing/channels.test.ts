import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { createSpace, manifestOf, publishViaVersions } from './helpers.ts';

describeEachDb('publishing: channels, promote, rollback, delete, isolation', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('promote and rollback move live; history shows every move newest first', async () => {
    const s = await createSpace(t);
    const v1 = (await publishViaVersions(t, s.id, { 'index.html': 'one' })).finalized!.version;
    const v2 = (await publishViaVersions(t, s.id, { 'index.html': 'two' })).finalized!.version;
    let live = await t.api('GET', `/v1/spaces/${s.id}/channels`);
    expect(live.body.data).toEqual([{ name: 'live', versionId: v2.id, updatedAt: expect.any(String) }]);

    // Rollback: promote the older version.
    const rb = await t.api('POST', `/v1/spaces/${s.id}/versions/${v1.id}/promote`, { body: {} });
    expect(rb.status).toBe(200);
    expect(rb.body.data).toMatchObject({ channel: 'live', versionId: v1.id, previousVersionId: v2.id });
    live = await t.api('GET', `/v1/spaces/${s.id}/channels`);
    expect(live.body.data[0].versionId).toBe(v1.id);
    expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/versions/${v1.id}/promote`, { body: { channel: 'live' } }),
      409,
      'version_already_live',
    );
    // Compare-and-swap with a stale expectation is refused; the right one passes.
    const stale = expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/versions/v2/promote`, { body: { expectedVersionId: v2.id } }),
      409,
      'channel_pointer_moved',
    );
    expect(stale.details.currentVersionId).toBe(v1.id);
    const fwd = await t.api('POST', `/v1/spaces/${s.id}/versions/v2/promote`, {
      body: { expectedVersionId: v1.id },
    });
    expect(fwd.status).toBe(200);

    const hist = await t.api('GET', `/v1/spaces/${s.id}/channels/live/history?limit=2`);
    expect(hist.body.data.map((m: any) => [m.versionId, m.reason])).toEqual([
      [v2.id, 'promote'],
      [v1.id, 'promote'],
    ]);
    const older = await t.api(
      'GET',
      `/v1/spaces/${s.id}/channels/live/history?limit=2&cursor=${hist.body.pagination.nextCursor}`,
    );
    expect(older.body.data.map((m: any) => [m.versionId, m.reason])).toEqual([
      [v2.id, 'publish'],
      [v1.id, 'publish'],
    ]);

    // Preview channels and reserved names.
    const pv = await t.api('POST', `/v1/spaces/${s.id}/versions/v1/promote`, {
      body: { channel: 'staging' },
    });
    expect(pv.status).toBe(200);
    for (const name of ['v12', 'ver-abc']) {
      expectProblem(
        await t.api('POST', `/v1/spaces/${s.id}/versions/v1/promote`, { body: { channel: name } }),
        400,
        'channel_name_reserved',
      );
    }
    expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/versions/v1/promote`, { body: { channel: 'Bad_Name' } }),
      400,
      'channel_unsupported',
    );
    expect(
      (await t.api('POST', `/v1/spaces/${s.id}/versions/v1/promote`, { body: { channel: 'a'.repeat(32) } }))
        .status,
    ).toBe(200);
    expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/versions/v1/promote`, { body: { channel: 'a'.repeat(33) } }),
      400,
      'channel_unsupported',
    );

    // Delete: refused while a channel points at it, then kept as a `deleted` row.
    const inUse = expectProblem(
      await t.api('DELETE', `/v1/spaces/${s.id}/versions/v1`),
      409,
      'version_in_use',
    );
    expect(inUse.details.channels).toEqual(['a'.repeat(32), 'staging']);
    // A preview publish moves `preview` (not `live`); the next one takes it along.
    const v3 = (await publishViaVersions(t, s.id, { 'index.html': 'three' }, { target: 'preview' }))
      .finalized!.version;
    expect(v3.channels).toEqual(['preview']);
    const v4 = (await publishViaVersions(t, s.id, { 'index.html': 'four' }, { target: 'preview' })).finalized!
      .version;
    expect(v4.channels).toEqual(['preview']);
    expect((await t.api('GET', `/v1/spaces/${s.id}/versions/${v3.id}`)).body.data.channels).toEqual([]);
    const del = await t.api('DELETE', `/v1/spaces/${s.id}/versions/${v3.id}`);
    expect(del.status).toBe(200);
    expect(del.body.data.status).toBe('deleted');
    expect((await t.api('GET', `/v1/spaces/${s.id}/versions/${v3.id}`)).body.data.status).toBe('deleted');
    expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/versions/${v3.id}/promote`, { body: {} }),
      409,
      'version_not_ready',
    );
  });

  it('finalize refuses missing files, nothing servable and a second finalize', async () => {
    const s = await createSpace(t);
    const c = await t.api('POST', `/v1/spaces/${s.id}/versions`, {
      body: {
        files: manifestOf({ 'index.html': `missing-${Math.random()}`, 'b.txt': `b-${Math.random()}` }),
      },
    });
    const p = expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/versions/${c.body.data.version.id}/finalize`),
      409,
      'version_files_missing',
    );
    expect(p.details.paths.sort()).toEqual(['b.txt', 'index.html']);

    const only = await publishViaVersions(t, s.id, { 'spaces.json': '{}', '.hidden': 'x' }).catch((e) => e);
    expect(String(only)).toContain('version_no_publishable_files');

    const ok = await publishViaVersions(t, s.id, { 'index.html': 'fine' });
    expectProblem(
      await t.api('POST', `/v1/spaces/${s.id}/versions/${ok.finalized!.version.id}/finalize`),
      409,
      'version_not_finalizable',
    );
    // No live move happened for the failed attempts.
    const live = await t.api('GET', `/v1/spaces/${s.id}/channels`);
    expect(live.body.data[0].versionId).toBe(ok.finalized!.version.id);
  });

  it('a bad spaces.json fails the version with diagnostics and leaves live alone', async () => {
    const s = await createSpace(t);
    const good = await publishViaVersions(t, s.id, { 'index.html': 'good' });
    const bad = await publishViaVersions(t, s.id, { 'index.html': 'bad', 'spaces.jsonc': '{ "x": ' }).catch(
      (e) => e,
    );
    expect(String(bad)).toContain('version_failed');
    const latest = await t.api('GET', `/v1/spaces/${s.id}/versions/latest`);
    expect(latest.body.data.status).toBe('failed');
    expect(latest.body.data.diagnostics[0]).toMatchObject({ code: 'config_invalid', path: 'spaces.jsonc:1' });
    const notObject = await publishViaVersions(t, s.id, { 'index.html': 'bad2', 'spaces.json': '[1]' }).catch(
      (e) => e,
    );
    expect(String(notObject)).toContain('version_failed');
    const live = await t.api('GET', `/v1/spaces/${s.id}/channels`);
    expect(live.body.data[0].versionId).toBe(good.finalized!.version.id);
    // JSONC with comments and a trailing comma is fine.
    const jsonc = await publishViaVersions(t, s.id, {
      'index.html': 'jsonc',
      'spaces.jsonc': '{ // comment\n "cleanUrls": true, }',
    });
    expect(jsonc.finalized!.version.status).toBe('ready');
  });

  it('another team’s credential gets 404 on every versions, channels and variables endpoint', async () => {
    const s = await createSpace(t);
    const v = (await publishViaVersions(t, s.id, { 'index.html': 'mine' })).finalized!.version;
    const other = await createUser(t);
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/v1/spaces/${s.id}/versions`],
      ['POST', `/v1/spaces/${s.id}/versions`, { files: manifestOf({ 'index.html': 'x' }) }],
      ['GET', `/v1/spaces/${s.id}/versions/${v.id}`],
      ['GET', `/v1/spaces/${s.id}/versions/${v.id}/files`],
      ['GET', `/v1/spaces/${s.id}/versions/${v.id}/archive`],
      ['GET', `/v1/spaces/${s.id}/versions/${v.id}/diff?against=${v.id}`],
      ['POST', `/v1/spaces/${s.id}/versions/${v.id}/finalize`],
      ['POST', `/v1/spaces/${s.id}/versions/${v.id}/promote`, {}],
      ['DELETE', `/v1/spaces/${s.id}/versions/${v.id}`],
      ['GET', `/v1/spaces/${s.id}/channels`],
      ['GET', `/v1/spaces/${s.id}/channels/live/history`],
      ['GET', `/v1/spaces/${s.id}/variables`],
      ['PUT', `/v1/spaces/${s.id}/variables/FOO`, { value: 'x' }],
      ['DELETE', `/v1/spaces/${s.id}/variables/FOO`],
    ];
    for (const [method, url, body] of calls) {
      const res = await t.api(method, url, { token: other.token, body });
      expectProblem(res, 404, 'not_found');
    }
    const batch = await t.api('PUT', `/v1/spaces/${s.id}/versions/${v.id}/uploads`, {
      token: other.token,
      raw: Buffer.alloc(1024),
      headers: { 'content-type': 'application/x-tar' },
    });
    expectProblem(batch, 404, 'not_found');
    // Without a credential: 401.
    expectProblem(await t.api('GET', `/v1/spaces/${s.id}/versions`, { token: null }), 401, 'unauthorized');
  });
});
