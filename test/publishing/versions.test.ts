import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import {
  createSpace,
  download,
  manifestOf,
  publishViaVersions,
  putBytes,
  type Site,
  sha,
} from './helpers.ts';

const SITE: Site = {
  'index.html': '<!doctype html><h1>Hello</h1>',
  'css/app.css': 'body { color: red }',
  'img/logo.bin': Buffer.from([0, 1, 2, 3, 255]),
};

describeEachDb('publishing: versions flow', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('publishes a 3-file site, reads it back through the archive, and re-publishing is a no-op', async () => {
    const space = await createSpace(t);
    const r = await publishViaVersions(t, space.id, SITE);
    expect(r.created.version.status).toBe('uploading');
    expect(r.created.version.id).toMatch(/^ver_/);
    expect(r.created.next.action).toBe('upload');
    expect(r.uploaded.sort()).toEqual(Object.keys(SITE).sort());
    const fin = r.finalized!;
    expect(fin.version.status).toBe('ready');
    expect(fin.activation.outcome).toBe('activated');
    expect(fin.next.action).toBe('done');
    expect(fin.version.channels).toEqual(['live']);
    expect(fin.version.immutableUrl).toBe(`http://${fin.version.id}--${space.slug}.localhost:${t.port}`);
    expect(fin.space.liveUrl).toBe(space.liveUrl);

    const files = await download(t, space.id, fin.version.id);
    expect([...files.keys()].sort()).toEqual(Object.keys(SITE).sort());
    for (const [p, c] of Object.entries(SITE)) expect(files.get(p)!.equals(Buffer.from(c))).toBe(true);

    const again = await t.api('POST', `/v1/spaces/${space.id}/versions`, {
      body: { files: manifestOf(SITE) },
    });
    expect(again.status).toBe(200);
    expect(again.body.data.noop).toBe(true);
    expect(again.body.data.version.id).toBe(fin.version.id);
    expect(again.body.data.upload.targets).toEqual([]);
    const list = await t.api('GET', `/v1/spaces/${space.id}/versions`);
    expect(list.body.data).toHaveLength(1);

    const got = await t.api('GET', `/v1/spaces/${space.id}`);
    expect(got.body.data.space.channels.live.versionId).toBe(fin.version.id);
  });

  it('asks to upload only the one changed blob, dedupes across spaces, and diffs', async () => {
    const a = await createSpace(t);
    const first = await publishViaVersions(t, a.id, { ...SITE, 'x.txt': 'unique-x' });
    const changed = { ...SITE, 'x.txt': 'unique-x', 'index.html': '<h1>Changed</h1>' };
    const second = await publishViaVersions(t, a.id, changed);
    expect(second.uploaded).toEqual(['index.html']);
    expect(second.finalized!.version.number).toBe(2);

    // Another space with the same bytes uploads nothing.
    const b = await createSpace(t);
    const third = await publishViaVersions(t, b.id, changed);
    expect(third.uploaded).toEqual([]);
    expect(third.created.next.action).toBe('finalize');

    const diff = await t.api(
      'GET',
      `/v1/spaces/${a.id}/versions/${second.finalized!.version.id}/diff?against=${first.finalized!.version.id}`,
    );
    expect(diff.status).toBe(200);
    expect(diff.body.data).toMatchObject({ added: [], changed: ['index.html'], removed: [] });

    for (const ref of ['v2', '2', 'latest', second.finalized!.version.id]) {
      const v = await t.api('GET', `/v1/spaces/${a.id}/versions/${ref}`);
      expect(v.body.data.id).toBe(second.finalized!.version.id);
    }
    expectProblem(await t.api('GET', `/v1/spaces/${a.id}/versions/v9`), 404, 'version_not_found');

    const files = await t.api('GET', `/v1/spaces/${a.id}/versions/v1/files?limit=2`);
    expect(files.body.data.map((f: any) => f.path)).toEqual(['css/app.css', 'img/logo.bin']);
    expect(files.body.data[0].contentType).toBe('text/css; charset=utf-8');
    const rest = await t.api(
      'GET',
      `/v1/spaces/${a.id}/versions/v1/files?limit=2&cursor=${files.body.pagination.nextCursor}`,
    );
    expect(rest.body.data.map((f: any) => f.path)).toEqual(['index.html', 'x.txt']);
    expect(rest.body.pagination.hasMore).toBe(false);
  });

  it('takes a batch tar upload and checks each entry against the manifest', async () => {
    const s = await createSpace(t);
    const site = { 'index.html': 'batch-index', 'a/b.txt': 'batch-b' };
    const r = await publishViaVersions(t, s.id, site, { batch: true });
    expect(r.finalized!.version.status).toBe('ready');
    const files = await download(t, s.id, r.finalized!.version.id);
    expect(files.get('a/b.txt')!.toString()).toBe('batch-b');
  });

  it('refuses mismatched, undeclared and forged uploads', async () => {
    const s = await createSpace(t);
    const site = { 'index.html': `tamper-${Date.now()}` };
    const c = await t.api('POST', `/v1/spaces/${s.id}/versions`, { body: { files: manifestOf(site) } });
    const target = c.body.data.upload.targets[0];
    const wrong = await putBytes(target.url, 'x'.repeat(Buffer.byteLength(site['index.html'])));
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('upload_hash_mismatch');
    const short = await putBytes(target.url, 'short');
    expect(short.body.code).toBe('upload_size_mismatch');
    // Tampering with the token's payload or signature is refused.
    const token = target.url.split('/v1/uploads/')[1] as string;
    const [payload, sig] = token.split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), p: 'other.html' }),
    ).toString('base64url');
    // Another signature: its first character (six whole bits of the MAC) changed.
    const otherSig = `${sig![0] === 'A' ? 'B' : 'A'}${sig!.slice(1)}`;
    for (const bad of [`${forgedPayload}.${sig}`, `${payload}.${otherSig}`, 'garbage']) {
      const res = await putBytes(`${t.url}/v1/uploads/${bad}`, site['index.html']);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('blob_gate_token_invalid');
    }
    const ok = await putBytes(target.url, site['index.html']);
    expect(ok.status).toBe(200);
    expect(ok.body.data.stored).toBe(1);
    expect(sha(site['index.html'])).toBe(target.sha256);
  });

  it('a plain curl --upload-file to the target URL works (no other auth, no content type)', async () => {
    const s = await createSpace(t);
    const content = `curl-upload-${Date.now()}`;
    const c = await t.api('POST', `/v1/spaces/${s.id}/versions`, {
      body: { files: manifestOf({ 'index.html': content }) },
    });
    const file = path.join(os.tmpdir(), `curl-${Date.now()}.html`);
    fs.writeFileSync(file, content);
    // Async: the server runs in this process, so a blocking exec would deadlock.
    const { stdout: out } = await promisify(execFile)('curl', [
      '-s',
      '--upload-file',
      file,
      c.body.data.upload.targets[0].url,
    ]);
    fs.rmSync(file);
    expect(JSON.parse(out).data.stored).toBe(1);
    const fin = await t.api('POST', `/v1/spaces/${s.id}/versions/${c.body.data.version.id}/finalize`);
    expect(fin.body.data.version.status).toBe('ready');
  });

  it('precomputes br and gzip variants of compressible files once, and reuses them', async () => {
    const s = await createSpace(t);
    const html = `<!doctype html>${'<p>compress me</p>'.repeat(300)}`;
    await publishViaVersions(t, s.id, { 'index.html': html, 'raw.bin': Buffer.alloc(4000, 7) });
    const files = await t.api('GET', `/v1/spaces/${s.id}/versions/v1/files`);
    const index = files.body.data.find((f: any) => f.path === 'index.html');
    expect(index.contentType).toBe('text/html; charset=utf-8');
    expect(index.encodings.br.size).toBeLessThan(html.length);
    expect(index.encodings.gzip.size).toBeLessThan(html.length);
    expect(await t.server.services.blobs.has(index.encodings.br.sha256)).toBe(true);
    expect(files.body.data.find((f: any) => f.path === 'raw.bin').encodings).toBeUndefined();
    // A second version with the same HTML carries the same variants without recomputing them.
    await publishViaVersions(t, s.id, { 'index.html': html, 'other.txt': 'new' });
    const again = await t.api('GET', `/v1/spaces/${s.id}/versions/v2/files`);
    expect(again.body.data.find((f: any) => f.path === 'index.html').encodings).toEqual(index.encodings);
  });
});
