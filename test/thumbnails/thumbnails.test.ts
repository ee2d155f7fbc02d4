/**
 * Space thumbnails (issue 23): after a version becomes live a job renders the front page in headless
 * Chromium at 1280×800; `GET /v1/spaces/{id}/thumbnail` serves it (ETag, 304, tenant isolation). The
 * page is user content: Chromium must reach nothing but the site itself.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BLOB_GRACE_MS } from '../../src/jobs/maintenance.ts';
import { noBrowser, whySkipped } from '../helpers/browser.ts';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

async function getImage(
  t: TestServer,
  spaceId: string,
  headers: Record<string, string> = {},
  token?: string,
) {
  const res = await request(`${t.url}/v1/spaces/${spaceId}/thumbnail`, {
    headers: { authorization: `Bearer ${token ?? t.ownerKey}`, ...headers },
  });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

/** Width, height and the RGB of the first row's pixel at `x` of a PNG (8-bit RGB/RGBA). */
function pngProbe(png: Buffer, x: number) {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  let off = 8;
  let width = 0;
  let height = 0;
  let colorType = 0;
  const idat: Buffer[] = [];
  while (off < png.length) {
    const len = png.readUInt32BE(off);
    const type = png.toString('ascii', off + 4, off + 8);
    const data = png.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      colorType = data[9]!;
    }
    if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const bpp = colorType === 6 ? 4 : 3;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const filter = raw[0]!;
  const row = Buffer.from(raw.subarray(1, 1 + width * bpp));
  // The first row: Up is None, Average halves the left byte, Paeth is Sub.
  for (let i = 0; i < row.length; i++) {
    const left = i >= bpp ? row[i - bpp]! : 0;
    if (filter === 1 || filter === 4) row[i] = (row[i]! + left) & 0xff;
    else if (filter === 3) row[i] = (row[i]! + (left >> 1)) & 0xff;
  }
  return { width, height, rgb: [row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]] };
}

describeEachDb('space thumbnails', (db) => {
  let t: TestServer;
  let probe: http.Server;
  let probeHits: string[];

  beforeAll(async () => {
    probeHits = [];
    // Stands for an internal service the page tries to reach: nothing may arrive here.
    probe = http.createServer((req, res) => {
      probeHits.push(`${req.method} ${req.headers.host}${req.url}`);
      res.end('secret');
    });
    probe.on('upgrade', (req, socket) => {
      probeHits.push(`upgrade ${req.url}`);
      socket.destroy();
    });
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    t = await startServer({ db, env: { SPACES_THUMBNAILS: 'auto', SPACES_JOB_POLL_MS: '50' } });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await new Promise((r) => probe?.close(r));
  });

  it.skipIf(noBrowser)(
    `renders the live front page at 1280×800, serves it with an ETag, and the page reaches nothing else${whySkipped}`,
    async () => {
      const port = (probe.address() as AddressInfo).port;
      const space = await createSpace(t);
      expectProblem(
        { ...(await t.api('GET', `/v1/spaces/${space.id}/thumbnail`)) },
        404,
        'thumbnail_not_found',
      );
      const html = `<!doctype html><html><head><title>red</title>
<link rel="stylesheet" href="/style.css">
<link rel="stylesheet" href="http://127.0.0.1:${port}/internal.css">
</head><body>
<h1>Hello</h1>
<img src="http://127.0.0.1:${port}/internal.png" alt="">
<img src="http://localhost:${port}/loopback.png" alt="">
<img src="http://169.254.169.254/latest/meta-data/" alt="">
<iframe src="http://127.0.0.1:${port}/frame"></iframe>
<script>
fetch('http://127.0.0.1:${port}/fetch').catch(() => {});
try { new WebSocket('ws://127.0.0.1:${port}/ws'); } catch {}
navigator.sendBeacon && navigator.sendBeacon('http://127.0.0.1:${port}/beacon', 'x');
</script>
</body></html>`;
      await publishViaVersions(t, space.id, {
        'index.html': html,
        'style.css': 'html, body { margin: 0; background: #ff0000; }',
      });

      let image = await getImage(t, space.id);
      const deadline = Date.now() + 60_000;
      while (image.status !== 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        image = await getImage(t, space.id);
      }
      expect(image.status, image.body.toString()).toBe(200);
      expect(image.headers['content-type']).toBe('image/png');
      const { width, height, rgb } = pngProbe(image.body, 640);
      expect({ width, height }).toEqual({ width: 1280, height: 800 });
      // The site's own stylesheet was loaded: the page is red.
      expect(rgb).toEqual([255, 0, 0]);
      expect(probeHits).toEqual([]);

      // ETag and a conditional request.
      const etag = String(image.headers.etag);
      expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
      expect((await getImage(t, space.id, { 'if-none-match': etag })).status).toBe(304);

      // The Space says where its thumbnail is; the URL serves the same picture.
      const got = await t.api('GET', `/v1/spaces/${space.id}`);
      expect(got.body.data.space.thumbnail).toMatchObject({
        kind: 'screenshot',
        provider: 'provider-screenshots',
      });
      const listed = await t.api('GET', '/v1/spaces');
      const inList = listed.body.data.find((s: any) => s.id === space.id);
      expect(inList.thumbnail.url).toBe(got.body.data.space.thumbnail.url);
      const byUrl = await request(got.body.data.space.thumbnail.url, {
        headers: { authorization: `Bearer ${t.ownerKey}` },
      });
      expect(Buffer.from(await byUrl.body.arrayBuffer()).equals(image.body)).toBe(true);

      // Another team can't see it (nor learn that it exists).
      const other = await createUser(t, 'thumb-other');
      expectProblem(
        await t.api('GET', `/v1/spaces/${space.id}/thumbnail`, { token: other.token }),
        404,
        'not_found',
      );

      // The blob sweep keeps the picture although no version names it.
      const later = new Date(Date.now() + 3 * BLOB_GRACE_MS);
      await t.server.services.publishing.blobSweep.run(later, BLOB_GRACE_MS);
      expect((await getImage(t, space.id)).body.equals(image.body)).toBe(true);
      expect(probeHits).toEqual([]);
    },
    120_000,
  );
});

describeEachDb('space thumbnails when off', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db, env: { SPACES_THUMBNAILS: 'off', SPACES_JOB_POLL_MS: '50' } });
  });
  afterAll(() => t?.close());

  it('records why there is no picture and never fails the publish', async () => {
    const space = await createSpace(t);
    const { finalized } = await publishViaVersions(t, space.id, { 'index.html': '<h1>hi</h1>' });
    expect(finalized).toBeTruthy();
    let problem: any;
    const deadline = Date.now() + 20_000;
    do {
      await new Promise((r) => setTimeout(r, 100));
      problem = expectProblem(
        await t.api('GET', `/v1/spaces/${space.id}/thumbnail`),
        404,
        'thumbnail_not_found',
      );
    } while (!String(problem.details?.reason).includes('SPACES_THUMBNAILS=off') && Date.now() < deadline);
    expect(problem.details.reason).toContain('SPACES_THUMBNAILS=off');
    expect((await t.api('GET', `/v1/spaces/${space.id}`)).body.data.space.thumbnail).toBeNull();
  });
});
