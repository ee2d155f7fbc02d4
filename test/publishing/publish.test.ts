import { randomBytes } from 'node:crypto';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { download, type Site, tarGzOf } from './helpers.ts';

const SITE: Site = {
  'index.html': '<!doctype html><h1>One call</h1>',
  'css/app.css': 'h1 { color: blue }',
  'js/app.js': 'console.log(1)',
};

/** A zip built with yazl; `rename` patches entry names afterwards (yazl refuses hostile names). */
async function zipOf(
  entries: Array<{ name: string; data: Buffer | string; mode?: number; compress?: boolean }>,
  rename: Record<string, string> = {},
): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const e of entries) {
    z.addBuffer(Buffer.from(e.data), e.name, { mode: e.mode, compress: e.compress ?? true });
  }
  z.end();
  const parts: Buffer[] = [];
  for await (const c of z.outputStream) parts.push(c as Buffer);
  let buf = Buffer.concat(parts);
  for (const [from, to] of Object.entries(rename)) {
    if (from.length !== to.length) throw new Error('rename keeps the length');
    let s = buf.toString('latin1');
    s = s.split(from).join(to);
    buf = Buffer.from(s, 'latin1');
  }
  return buf;
}

async function postForm(
  t: TestServer,
  fd: FormData,
  headers: Record<string, string> = {},
  token?: string | null,
) {
  const h: Record<string, string> = { ...headers };
  const tok = token === undefined ? t.ownerKey : token;
  if (tok) h.authorization = `Bearer ${tok}`;
  const res = await request(`${t.url}/v1/publish`, { method: 'POST', body: fd, headers: h });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers as any, body: text ? JSON.parse(text) : null, text };
}

function siteForm(site: Site, payload?: object): FormData {
  const fd = new FormData();
  for (const [p, c] of Object.entries(site))
    fd.append('files', new Blob([new Uint8Array(Buffer.from(c))]), p);
  if (payload) fd.append('payload', JSON.stringify(payload));
  return fd;
}

function archiveForm(buf: Buffer, name = 'site.zip', payload?: object): FormData {
  const fd = new FormData();
  fd.append('archive', new Blob([new Uint8Array(buf)]), name);
  if (payload) fd.append('payload', JSON.stringify(payload));
  return fd;
}

describeEachDb('one-call publish', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('multipart files: creates a space, publishes, reads back; the same files again are a no-op', async () => {
    const res = await postForm(t, siteForm(SITE, { title: 'One Call' }));
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(d.space.id).toMatch(/^spc_/);
    expect(d.version.status).toBe('ready');
    expect(d.next).toEqual({ action: 'done' });
    expect(d.activation.outcome).toBe('activated');
    expect(d.noop).toBe(false);
    expect(d.upload.targets).toEqual([]);
    expect(d.version.immutableUrl).toContain(`${d.version.id}--`);
    expect(d.links.version).toContain(`/v1/spaces/${d.space.id}/versions/${d.version.id}`);
    const files = await download(t, d.space.id, d.version.id);
    for (const [p, c] of Object.entries(SITE)) expect(files.get(p)?.toString()).toBe(c);
    const space = await t.api('GET', `/v1/spaces/${d.space.id}`);
    expect(space.body.data.space.title).toBe('One Call');

    const again = await postForm(t, siteForm(SITE, { spaceId: d.space.id }));
    expect(again.status).toBe(200);
    expect(again.body.data.noop).toBe(true);
    expect(again.body.data.version.id).toBe(d.version.id);
    expect(again.body.data.activation.outcome).toBe('unchanged');
  });

  it('zip and tar.gz archives publish the same site', async () => {
    const zip = await zipOf(Object.entries(SITE).map(([name, data]) => ({ name, data })));
    const z = await postForm(t, archiveForm(zip));
    expect(z.status).toBe(201);
    const zf = await download(t, z.body.data.space.id, z.body.data.version.id);
    for (const [p, c] of Object.entries(SITE)) expect(zf.get(p)?.toString()).toBe(c);

    const tgz = await tarGzOf(SITE);
    const g = await postForm(t, archiveForm(tgz, 'site.tar.gz', { spaceId: z.body.data.space.id }));
    // Same content as live: a no-op.
    expect(g.status).toBe(200);
    expect(g.body.data.noop).toBe(true);
    const other = await postForm(t, archiveForm(await tarGzOf({ ...SITE, 'extra.txt': 'x' }), 'site.tgz'));
    expect(other.status).toBe(201);
    const gf = await download(t, other.body.data.space.id, other.body.data.version.id);
    expect(gf.get('extra.txt')?.toString()).toBe('x');
  });

  it('JSON with inline files, within the inline limits', async () => {
    const res = await t.api('POST', '/v1/publish', {
      body: {
        files: [
          { path: 'index.html', content: '<h1>inline</h1>' },
          { path: 'b.bin', content: Buffer.from([1, 2, 3]).toString('base64'), encoding: 'base64' },
        ],
        title: 'Inline',
      },
    });
    expect(res.status).toBe(201);
    const f = await download(t, res.body.data.space.id, res.body.data.version.id);
    expect([...f.get('b.bin')!]).toEqual([1, 2, 3]);

    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ path: `f${i}.txt`, content: `${i}` }));
    expect((await t.api('POST', '/v1/publish', { body: { files: many(100) } })).status).toBe(201);
    expectProblem(
      await t.api('POST', '/v1/publish', { body: { files: many(101) } }),
      413,
      'publish_inline_limit_exceeded',
    );
    const mib = 1024 * 1024;
    const atCap = await t.api('POST', '/v1/publish', {
      body: { files: [{ path: 'index.html', content: 'a'.repeat(mib) }] },
    });
    expect(atCap.status).toBe(201);
    expectProblem(
      await t.api('POST', '/v1/publish', {
        body: { files: [{ path: 'index.html', content: 'a'.repeat(mib + 1) }] },
      }),
      413,
      'publish_inline_limit_exceeded',
    );
  });

  it('makes no credential an anonymous publish; refuses other media types, bad payloads', async () => {
    const anon = await postForm(t, siteForm(SITE), {}, null);
    expect(anon.status).toBe(201);
    expect(anon.body.data.claim.key).toMatch(/^sfc_/);
    expectProblem(
      await t.api('POST', '/v1/publish', { raw: 'hello', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_publish_media_type',
    );
    const bad = await postForm(t, siteForm(SITE, { nope: 1 }));
    expectProblem(bad, 400, 'invalid_publish_payload');
    const missing = await postForm(t, siteForm(SITE, { spaceId: 'spc_doesnotexist' }));
    expectProblem(missing, 404, 'not_found');
  });

  it('Idempotency-Key: replays the first receipt, refuses another body and a running first request', async () => {
    const key = `key-${randomBytes(4).toString('hex')}`;
    const site = { 'index.html': `idem-${key}` };
    const first = await postForm(t, siteForm(site), { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const replay = await postForm(t, siteForm(site), { 'idempotency-key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data.version.id).toBe(first.body.data.version.id);
    expect(replay.body.data.space.id).toBe(first.body.data.space.id);
    expectProblem(
      await postForm(t, siteForm({ 'index.html': 'other body' }), { 'idempotency-key': key }),
      409,
      'idempotency_key_reused',
    );
    // Make the stored record look like a first request still running.
    const dbh = t.server.services.database.db;
    await dbh.updateTable('idempotency_keys').set({ state: 'running', response: null }).execute();
    expectProblem(
      await postForm(t, siteForm(site), { 'idempotency-key': key }),
      409,
      'idempotency_conflict_in_progress',
    );
    await dbh.deleteFrom('idempotency_keys').execute();
    expectProblem(
      await postForm(t, siteForm(site), { 'idempotency-key': 'x'.repeat(256) }),
      400,
      'invalid_idempotency_key',
    );
    expect((await postForm(t, siteForm(site), { 'idempotency-key': 'x'.repeat(255) })).status).toBe(201);
  });
});

describe('one-call publish: hostile archives and limits', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ env: { SPACES_MAX_FILES: '3', SPACES_MAX_VERSION_BYTES: '3000000' } });
  });
  afterAll(() => t.close());

  const ok = { name: 'index.html', data: '<h1>ok</h1>' };

  it('zip: slip, absolute, symlink, duplicate, case collision, bomb, too many files', async () => {
    const cases: Array<[string, Buffer, number, string]> = [
      [
        'zip-slip',
        await zipOf([ok, { name: 'AA/x', data: 'x' }], { 'AA/x': '../x' }),
        400,
        'invalid_publish_path',
      ],
      [
        'absolute',
        await zipOf([ok, { name: 'xetc/x', data: 'x' }], { 'xetc/x': '/etc/x' }),
        400,
        'invalid_publish_path',
      ],
      [
        'symlink',
        await zipOf([ok, { name: 'link', data: '/etc/passwd', mode: 0o120777 }]),
        400,
        'invalid_publish_archive',
      ],
      [
        'duplicate',
        await zipOf([ok, { name: 'a.html', data: '1' }, { name: 'b.html', data: '2' }], {
          'b.html': 'a.html',
        }),
        400,
        'publish_path_collision',
      ],
      [
        'case',
        await zipOf([ok, { name: 'A.html', data: '1' }, { name: 'a.html', data: '2' }]),
        400,
        'path_case_collision',
      ],
      [
        'bomb',
        await zipOf([ok, { name: 'zeros.txt', data: Buffer.alloc(2 * 1024 * 1024) }]),
        413,
        'publish_archive_compression_ratio_exceeded',
      ],
      [
        'too many',
        await zipOf([ok, { name: 'b', data: 'b' }, { name: 'c', data: 'c' }, { name: 'd', data: 'd' }]),
        413,
        'publish_archive_file_count_exceeded',
      ],
      ['not a zip', Buffer.from('PK\u0003\u0004garbage'), 400, 'invalid_publish_archive'],
    ];
    for (const [name, buf, status, code] of cases) {
      const res = await postForm(t, archiveForm(buf));
      try {
        expectProblem(res, status, code);
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}`);
      }
    }
    // At the bound: 3 files and a 2 MiB file that compresses like real content are fine.
    const real = Buffer.from(randomBytes(1024 * 1024).toString('hex'));
    const fine = await postForm(
      t,
      archiveForm(await zipOf([ok, { name: 'b', data: 'b' }, { name: 'big.txt', data: real }])),
    );
    expect(fine.status).toBe(201);
    // Nothing was created for the refused archives: only the good publish made a space.
    const spaces = await t.api('GET', '/v1/spaces');
    expect(spaces.body.data).toHaveLength(1);
  });

  it('tar.gz: slip, absolute, symlink, hardlink, device, bomb, expanded size, archive size', async () => {
    const okSite = { 'index.html': '<h1>ok</h1>' };
    const cases: Array<[string, Buffer, number, string]> = [
      ['slip', await tarGzOf({ ...okSite, '../x': 'x' }), 400, 'invalid_publish_path'],
      ['absolute', await tarGzOf({ ...okSite, '/etc/x': 'x' }), 400, 'invalid_publish_path'],
      [
        'symlink',
        await tarGzOf(okSite, (p) => p.entry({ name: 'l', type: 'symlink', linkname: '/etc/passwd' })),
        400,
        'invalid_publish_archive',
      ],
      [
        'hardlink',
        await tarGzOf(okSite, (p) => p.entry({ name: 'h', type: 'link', linkname: 'index.html' })),
        400,
        'invalid_publish_archive',
      ],
      [
        'device',
        await tarGzOf(okSite, (p) => p.entry({ name: 'dev', type: 'character-device', size: 0 })),
        400,
        'invalid_publish_archive',
      ],
      ['case', await tarGzOf({ ...okSite, 'A.html': '1', 'a.html': '2' }), 400, 'path_case_collision'],
      [
        'bomb',
        await tarGzOf({ ...okSite, 'zeros.txt': Buffer.alloc(2 * 1024 * 1024) }),
        413,
        'publish_archive_compression_ratio_exceeded',
      ],
      ['not gzip', Buffer.from([0x1f, 0x8b, 1, 2, 3]), 400, 'invalid_publish_archive'],
    ];
    for (const [name, buf, status, code] of cases) {
      const res = await postForm(t, archiveForm(buf, 'site.tar.gz'));
      try {
        expectProblem(res, status, code);
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}`);
      }
    }
    // Expanded size: 3,000,000 bytes ok, one more refused (incompressible content).
    const body = (n: number) =>
      Buffer.from(
        randomBytes(Math.ceil(n / 2))
          .toString('hex')
          .slice(0, n),
      );
    const at = await postForm(t, archiveForm(await tarGzOf({ 'index.html': body(3_000_000) }), 'a.tgz'));
    expect(at.text).toContain('"status":"ready"');
    expect(at.status).toBe(201);
    expectProblem(
      await postForm(t, archiveForm(await tarGzOf({ 'index.html': body(3_000_001) }), 'a.tgz')),
      413,
      'publish_archive_expanded_size_exceeded',
    );
  });

  it('archive size cap: refused before anything is read', async () => {
    // The archive cap is the version byte limit plus 64 KiB of container overhead.
    const huge = Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(3_000_000 + 64 * 1024)]);
    expectProblem(await postForm(t, archiveForm(huge, 'big.tgz')), 413, 'publish_archive_too_large');
  });

  it('multipart: files per version 3 ok, 4 refused; hostile filenames refused', async () => {
    const three = await postForm(t, siteForm({ 'index.html': 'a', 'b.txt': 'b', 'c.txt': 'c' }));
    expect(three.status).toBe(201);
    expectProblem(
      await postForm(t, siteForm({ 'index.html': 'a', 'b.txt': 'b', 'c.txt': 'c', 'd.txt': 'd' })),
      413,
      'version_file_count_exceeded',
    );
    expectProblem(
      await postForm(t, siteForm({ 'index.html': 'a', '../evil': 'b' })),
      400,
      'invalid_publish_path',
    );
    expectProblem(
      await postForm(t, siteForm({ 'index.html': 'a', 'INDEX.html': 'b' })),
      400,
      'path_case_collision',
    );
  });
});
