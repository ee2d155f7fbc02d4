import { randomBytes } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { InlineBlobStore } from '../../src/blobs/inline.ts';
import { ManualClock } from '../../src/clock.ts';
import { sweepUnreferencedBlobs } from '../../src/domain/publishing/service.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, download, manifestOf, publishViaVersions, type Site, sha, tarOf } from './helpers.ts';

/** Text that compresses, but not below 16 KiB when it starts above it. */
const text = (n: number) => randomBytes(n).toString('base64').slice(0, n);

describeEachDb('publishing: small blobs stored in the database', (db) => {
  let t: TestServer;
  const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
  beforeAll(async () => {
    t = await startServer({ db, clock });
  });
  afterAll(() => t.close());

  const store = () => t.server.services.blobs as InlineBlobStore;
  const inlineRow = (d: string) =>
    t.server.services.database.db
      .selectFrom('blob_data')
      .select('sha256')
      .where('sha256', '=', d)
      .executeTakeFirst();

  it('a tar upload stores small files and their variants as rows, large files in the blob store; both serve and download', async () => {
    const s = await createSpace(t, undefined, { access: 'public' });
    const site: Site = {
      'index.html': `<!doctype html>${'<p>inline me</p>'.repeat(200)}`,
      'logo.bin': randomBytes(3000),
      'big.txt': text(40_000),
    };
    const r = await publishViaVersions(t, s.id, site, { batch: true });
    expect(r.finalized!.version.status).toBe('ready');

    const files = (await t.api('GET', `/v1/spaces/${s.id}/versions/v1/files`)).body.data as any[];
    const index = files.find((f) => f.path === 'index.html');
    const big = files.find((f) => f.path === 'big.txt');
    for (const d of [
      sha(site['index.html']!),
      sha(site['logo.bin']!),
      index.encodings.br.sha256,
      index.encodings.gzip.sha256,
    ])
      expect(await inlineRow(d), d).toBeDefined();
    expect(await inlineRow(sha(site['big.txt']!))).toBeUndefined();
    expect(await store().backing.has(sha(site['big.txt']!))).toBe(true);
    expect(await store().backing.has(sha(site['index.html']!))).toBe(false);
    expect(big.encodings.br.size).toBeGreaterThan(16 * 1024);

    // Served by the edge: identity and the br variant.
    const host = `${s.slug}.localhost`;
    const page = await t.api('GET', '/', { token: null, host });
    expect(page.status).toBe(200);
    expect(page.text).toBe(site['index.html']);
    const br = await t.api('GET', '/', { token: null, host, headers: { 'accept-encoding': 'br' } });
    expect(br.headers['content-encoding']).toBe('br');
    const bigServed = await t.api('GET', '/big.txt', {
      token: null,
      host,
      headers: { 'accept-encoding': 'identity' },
    });
    expect(bigServed.text).toBe(site['big.txt']);
    const logo = await t.api('GET', '/logo.bin', { token: null, host });
    expect(logo.status).toBe(200);
    expect(Buffer.byteLength(logo.text, 'latin1')).toBeGreaterThan(0);

    // The archive carries every byte.
    const got = await download(t, s.id, r.finalized!.version.id);
    for (const [p, c] of Object.entries(site)) expect(got.get(p)!.equals(Buffer.from(c)), p).toBe(true);
  });

  it('takes one version in several tar batches: re-sent files stored once, undeclared paths refused', async () => {
    const s = await createSpace(t);
    const site: Site = {
      'index.html': '<h1>batches</h1>',
      'a.txt': text(3000),
      'b.txt': text(3000),
      'c.bin': randomBytes(2000),
    };
    const created = await t.api('POST', `/v1/spaces/${s.id}/versions`, { body: { files: manifestOf(site) } });
    expect(created.status).toBe(201);
    const vid = created.body.data.version.id;
    const put = async (part: Site) =>
      t.api('PUT', `/v1/spaces/${s.id}/versions/${vid}/uploads`, {
        raw: await tarOf(part),
        headers: { 'content-type': 'application/x-tar' },
      });
    const one = await put({ 'index.html': site['index.html']!, 'a.txt': site['a.txt']! });
    expect(one.status).toBe(200);
    expect(one.body.data.stored).toBe(2);
    // The second batch: the rest, plus a file the first already stored (a retried batch does that).
    const two = await put({ 'a.txt': site['a.txt']!, 'b.txt': site['b.txt']!, 'c.bin': site['c.bin']! });
    expect(two.status).toBe(200);
    expect(two.body.data.received).toBe(3);
    const bad = await put({ 'nope.txt': 'not declared' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('upload_path_not_declared');
    const fin = await t.api('POST', `/v1/spaces/${s.id}/versions/${vid}/finalize`);
    expect(fin.status).toBe(200);
    expect(fin.body.data.version.status).toBe('ready');
    for (const [p, c] of Object.entries(site)) expect(await inlineRow(sha(c)), p).toBeDefined();
    const got = await download(t, s.id, vid);
    for (const [p, c] of Object.entries(site)) expect(got.get(p)!.equals(Buffer.from(c)), p).toBe(true);
    // A finalized version takes no more batches.
    const late = await put({ 'b.txt': site['b.txt']! });
    expect(late.status).toBe(409);
  });

  it('serves the br variant stored inline byte for byte', async () => {
    const s = await createSpace(t, undefined, { access: 'public' });
    const html = `<!doctype html>${'<li>variant</li>'.repeat(300)}`;
    await publishViaVersions(t, s.id, { 'index.html': html }, { batch: true });
    const { request } = await import('undici');
    const res = await request(`${t.url}/`, {
      headers: { host: `${s.slug}.localhost`, 'accept-encoding': 'br' },
    });
    expect(res.headers['content-encoding']).toBe('br');
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(brotliDecompressSync(body).toString()).toBe(html);
  });

  it('refuses a tar entry whose bytes do not match (compressible or not) and records nothing of it', async () => {
    const s = await createSpace(t, undefined, { access: 'public' });
    const site: Site = { 'index.html': `<p>${'declared '.repeat(100)}</p>`, 'raw.bin': randomBytes(500) };
    for (const tampered of ['index.html', 'raw.bin']) {
      const c = await t.api('POST', `/v1/spaces/${s.id}/versions`, { body: { files: manifestOf(site) } });
      const v = c.body.data.version.id;
      const body = { ...site };
      const orig = Buffer.from(site[tampered]!);
      body[tampered] = Buffer.from(orig.map((b, i) => (i === 7 ? b ^ 1 : b)));
      const res = await t.api('PUT', `/v1/spaces/${s.id}/versions/${v}/uploads`, {
        raw: await tarOf(body),
        headers: { 'content-type': 'application/x-tar' },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('upload_hash_mismatch');
      expect(res.body.details.path).toBe(tampered);
      const row = await t.server.services.database.db
        .selectFrom('blobs')
        .select('sha256')
        .where('sha256', '=', sha(body[tampered]!))
        .executeTakeFirst();
      expect(row).toBeUndefined();
      expect(await store().has(sha(body[tampered]!))).toBe(false);
    }
    // The right bytes are then accepted.
    const ok = await publishViaVersions(t, s.id, site, { batch: true });
    expect(ok.finalized!.version.status).toBe('ready');
  });

  it('the sweep deletes the rows of blobs nothing references any more', async () => {
    const s = await createSpace(t, undefined, { access: 'public' });
    const gone = `<p>${'only in v1 '.repeat(60)}</p>`;
    const v1 = await publishViaVersions(t, s.id, { 'index.html': gone }, { batch: true });
    const files = (await t.api('GET', `/v1/spaces/${s.id}/versions/v1/files`)).body.data as any[];
    const digests = [sha(gone), files[0].encodings.br.sha256, files[0].encodings.gzip.sha256];
    for (const d of digests) expect(await inlineRow(d)).toBeDefined();
    await publishViaVersions(t, s.id, { 'index.html': 'v2' }, { batch: true });
    const del = await t.api('DELETE', `/v1/spaces/${s.id}/versions/${v1.finalized!.version.id}`);
    expect(del.status).toBe(200);
    clock.advance(3 * 24 * 3600_000);
    const swept = await sweepUnreferencedBlobs(t.server.services, clock.now(), 3600_000);
    expect(swept.deleted).toBeGreaterThanOrEqual(3);
    for (const d of digests) {
      expect(await inlineRow(d)).toBeUndefined();
      expect(await store().has(d)).toBe(false);
    }
    // The live version still serves.
    const live = await t.api('GET', '/', { token: null, host: `${s.slug}.localhost` });
    expect(live.text).toBe('v2');
  });
});
