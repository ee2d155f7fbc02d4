import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobCache } from '../../src/serve/blob-cache.ts';
import { makeInjection } from '../../src/serve/inject.ts';
import {
  CACHE_HTML,
  CACHE_IMMUTABLE,
  CACHE_REVALIDATE,
  defaultCacheControl,
  FileResponder,
  ifNoneMatchHits,
  looksHashed,
  negotiateEncoding,
  parseRange,
  type ServeFileOptions,
  withCharset,
} from '../../src/serve/respond.ts';
import type { ManifestEntry } from '../../src/site/types.ts';
import { get, type Served, serve, type TempStore, tempStore } from './helpers.ts';

describe('negotiateEncoding', () => {
  const both = { br: {}, gzip: {} };
  it.each([
    [undefined, both, 'identity'],
    ['', both, 'identity'],
    ['gzip, deflate, br', both, 'br'],
    ['gzip', both, 'gzip'],
    ['br;q=0.5, gzip;q=0.8', both, 'gzip'],
    ['br;q=0, gzip', both, 'gzip'],
    ['*', both, 'br'],
    ['*;q=0.5, identity', both, 'identity'],
    ['identity', both, 'identity'],
    ['br', { gzip: {} }, 'identity'],
    ['br, gzip', { gzip: {} }, 'gzip'],
    ['x-gzip', both, 'gzip'],
    ['gzip;q=abc', both, 'identity'],
    ['identity;q=0, *;q=0', both, 'identity'],
    ['BR', both, 'br'],
    ['gzip, br', undefined, 'identity'],
  ] as const)('%s → %s', (header, avail, want) => {
    expect(negotiateEncoding(header as string | undefined, avail as any)).toBe(want);
  });
});

describe('parseRange', () => {
  it.each([
    ['bytes=0-9', 100, { start: 0, end: 9 }],
    ['bytes=90-', 100, { start: 90, end: 99 }],
    ['bytes=-10', 100, { start: 90, end: 99 }],
    ['bytes=-1000', 100, { start: 0, end: 99 }],
    ['bytes=50-1000', 100, { start: 50, end: 99 }],
    ['bytes=100-', 100, 'unsatisfiable'],
    ['bytes=-0', 100, 'unsatisfiable'],
    ['bytes=0-0', 0, 'unsatisfiable'],
    ['bytes=9-1', 100, null],
    ['bytes=0-1,5-6', 100, null],
    ['items=0-1', 100, null],
    ['bytes=-', 100, null],
    ['bytes=a-b', 100, null],
  ] as const)('%s of %d', (h, size, want) => {
    expect(parseRange(h, size)).toEqual(want);
  });
});

describe('validators and policy', () => {
  it('compares If-None-Match weakly', () => {
    expect(ifNoneMatchHits('"abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('W/"abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('"x", W/"abc" ', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('*', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('"abcd"', '"abc"')).toBe(false);
    expect(ifNoneMatchHits('abc', '"abc"')).toBe(false);
  });
  it('recognises hashed asset names', () => {
    for (const p of [
      'app.3f9a2b1c.js',
      'assets/index-BWq3k9Xy.js',
      'x/main.0123456789abcdef.css',
      'chunk-a1b2c3d4.mjs',
    ]) {
      expect(looksHashed(p), p).toBe(true);
    }
    for (const p of [
      'app.js',
      'my-component.js',
      'jquery-3.6.0.min.js',
      'readme.md',
      'photos/holiday.jpg',
      'deadbeef.js',
    ]) {
      expect(looksHashed(p), p).toBe(false);
    }
    expect(defaultCacheControl('index.html', 'text/html')).toBe(CACHE_HTML);
    expect(defaultCacheControl('page.3f9a2b1c.html', 'text/html')).toBe(CACHE_HTML);
    expect(defaultCacheControl('app.3f9a2b1c.js', 'text/javascript')).toBe(CACHE_IMMUTABLE);
    expect(defaultCacheControl('app.js', 'text/javascript')).toBe(CACHE_REVALIDATE);
  });
  it('adds a charset to text types only', () => {
    expect(withCharset('text/html')).toBe('text/html; charset=utf-8');
    expect(withCharset('application/json')).toBe('application/json; charset=utf-8');
    expect(withCharset('image/svg+xml')).toBe('image/svg+xml; charset=utf-8');
    expect(withCharset('text/plain; charset=latin1')).toBe('text/plain; charset=latin1');
    expect(withCharset('image/png')).toBe('image/png');
  });
});

describe('FileResponder over HTTP', () => {
  let ts: TempStore;
  let srv: Served;
  let cache: BlobCache;
  const files = new Map<string, ServeFileOptions>();
  const lastModified = new Date('2026-03-04T05:06:07.890Z');
  const html = Buffer.from(
    `<!doctype html><html><head><title>t</title></head><body><p>${'hello '.repeat(200)}</p></body></html>`,
  );
  const big = randomBytes(3 * 1024 * 1024 + 17);
  let htmlEntry: ManifestEntry;
  let bigEntry: ManifestEntry;
  let cssEntry: ManifestEntry;
  const errors: unknown[] = [];

  beforeAll(async () => {
    ts = tempStore();
    cache = new BlobCache({ maxBytes: 8 * 1024 * 1024, maxEntryBytes: 1024 * 1024 });
    htmlEntry = await ts.add('index.html', html, 'text/html', true);
    bigEntry = await ts.add('video.bin', big, 'application/octet-stream');
    cssEntry = await ts.add('assets/app.3f9a2b1c.css', 'body{color:red}'.repeat(100), 'text/css', true);
    const missing: ManifestEntry = {
      path: 'gone.txt',
      sha256: 'f'.repeat(64),
      size: 10,
      contentType: 'text/plain',
    };
    files.set('/', { entry: htmlEntry, lastModified });
    files.set('/big', { entry: bigEntry, lastModified });
    files.set('/app.css', { entry: cssEntry, lastModified });
    files.set('/custom404', { entry: htmlEntry, lastModified, status: 404 });
    files.set('/headers', {
      entry: cssEntry,
      lastModified,
      headers: {
        'Cache-Control': 'no-store',
        'X-Frame-Options': 'DENY',
        'Content-Length': '1',
        Vary: 'Cookie',
      },
    });
    files.set('/inject', {
      entry: htmlEntry,
      lastModified,
      injection: makeInjection({ head: '<script>h()</script>', bodyEnd: '<script>e()</script>' }),
    });
    files.set('/missing', { entry: missing, lastModified });
    const responder = new FileResponder({ blobs: ts.store, cache, onError: (e) => errors.push(e) });
    srv = await serve((req, res) => {
      const f = files.get(req.url!.split('?')[0]);
      if (!f) {
        res.writeHead(404).end();
        return;
      }
      responder.serve(req, res, f);
    });
  });
  afterAll(async () => {
    await srv.close();
    ts.cleanup();
  });

  it('serves identity with validators, type, policy and nosniff', async () => {
    const r = await get(`${srv.url}/`);
    expect(r.status).toBe(200);
    expect(r.body.equals(html)).toBe(true);
    expect(r.headers.etag).toBe(`"${htmlEntry.sha256}"`);
    expect(r.headers['last-modified']).toBe('Wed, 04 Mar 2026 05:06:07 GMT');
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['cache-control']).toBe(CACHE_HTML);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers.vary).toBe('Accept-Encoding');
    expect(r.headers['content-length']).toBe(String(html.length));
    expect(r.headers['accept-ranges']).toBe('bytes');
  });

  it('negotiates br and gzip with variant ETags', async () => {
    const br = await get(`${srv.url}/`, { headers: { 'accept-encoding': 'gzip, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.etag).toBe(`"${htmlEntry.sha256}.br"`);
    expect(brotliDecompressSync(br.body).equals(html)).toBe(true);
    const gz = await get(`${srv.url}/`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.etag).toBe(`"${htmlEntry.sha256}.gz"`);
    expect(gunzipSync(gz.body).equals(html)).toBe(true);
    expect(Number(gz.headers['content-length'])).toBe(gz.body.length);
  });

  it('answers 304 on If-None-Match (weak comparison) for the selected variant only', async () => {
    const r = await get(`${srv.url}/`, { headers: { 'if-none-match': `W/"${htmlEntry.sha256}"` } });
    expect(r.status).toBe(304);
    expect(r.body.length).toBe(0);
    expect(r.headers.etag).toBe(`"${htmlEntry.sha256}"`);
    expect(r.headers['cache-control']).toBe(CACHE_HTML);
    const other = await get(`${srv.url}/`, {
      headers: { 'if-none-match': `"${htmlEntry.sha256}"`, 'accept-encoding': 'br' },
    });
    expect(other.status).toBe(200);
    const br = await get(`${srv.url}/`, {
      headers: { 'if-none-match': `"nope", "${htmlEntry.sha256}.br"`, 'accept-encoding': 'br' },
    });
    expect(br.status).toBe(304);
  });

  it('uses If-Modified-Since only without If-None-Match', async () => {
    const same = await get(`${srv.url}/`, {
      headers: { 'if-modified-since': 'Wed, 04 Mar 2026 05:06:07 GMT' },
    });
    expect(same.status).toBe(304);
    const before = await get(`${srv.url}/`, {
      headers: { 'if-modified-since': 'Wed, 04 Mar 2026 05:06:06 GMT' },
    });
    expect(before.status).toBe(200);
    const both = await get(`${srv.url}/`, {
      headers: { 'if-modified-since': 'Wed, 04 Mar 2099 05:06:07 GMT', 'if-none-match': '"other"' },
    });
    expect(both.status).toBe(200);
    const junk = await get(`${srv.url}/`, { headers: { 'if-modified-since': 'yesterday' } });
    expect(junk.status).toBe(200);
  });

  it('answers 412 when If-Match or If-Unmodified-Since fail', async () => {
    expect((await get(`${srv.url}/`, { headers: { 'if-match': '"other"' } })).status).toBe(412);
    expect((await get(`${srv.url}/`, { headers: { 'if-match': `W/"${htmlEntry.sha256}"` } })).status).toBe(
      412,
    );
    expect((await get(`${srv.url}/`, { headers: { 'if-match': `"x", "${htmlEntry.sha256}"` } })).status).toBe(
      200,
    );
    expect((await get(`${srv.url}/`, { headers: { 'if-match': '*' } })).status).toBe(200);
    const old = 'Wed, 04 Mar 2026 05:06:06 GMT';
    expect((await get(`${srv.url}/`, { headers: { 'if-unmodified-since': old } })).status).toBe(412);
    const same = 'Wed, 04 Mar 2026 05:06:07 GMT';
    expect((await get(`${srv.url}/`, { headers: { 'if-unmodified-since': same } })).status).toBe(200);
  });

  it('serves HEAD with the headers and no body', async () => {
    const r = await get(`${srv.url}/big`, { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe(String(big.length));
    expect(r.body.length).toBe(0);
  });

  it('answers a single range from identity even when br is accepted', async () => {
    const r = await get(`${srv.url}/`, { headers: { range: 'bytes=10-19', 'accept-encoding': 'br' } });
    expect(r.status).toBe(206);
    expect(r.headers['content-range']).toBe(`bytes 10-19/${html.length}`);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.headers.vary).toBe('Accept-Encoding');
    expect(r.body.equals(html.subarray(10, 20))).toBe(true);
    const suffix = await get(`${srv.url}/big`, { headers: { range: 'bytes=-100' } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers['content-range']).toBe(`bytes ${big.length - 100}-${big.length - 1}/${big.length}`);
    expect(suffix.body.equals(big.subarray(big.length - 100))).toBe(true);
  });

  it('answers 416 with Content-Range: bytes */size when unsatisfiable, 200 for multi-range', async () => {
    const r = await get(`${srv.url}/`, { headers: { range: `bytes=${html.length}-` } });
    expect(r.status).toBe(416);
    expect(r.headers['content-range']).toBe(`bytes */${html.length}`);
    const multi = await get(`${srv.url}/`, { headers: { range: 'bytes=0-1,4-5' } });
    expect(multi.status).toBe(200);
    expect(multi.body.equals(html)).toBe(true);
  });

  it('honours If-Range with a strong ETag or the exact date', async () => {
    const ok = await get(`${srv.url}/`, {
      headers: { range: 'bytes=0-3', 'if-range': `"${htmlEntry.sha256}"` },
    });
    expect(ok.status).toBe(206);
    const stale = await get(`${srv.url}/`, { headers: { range: 'bytes=0-3', 'if-range': '"old"' } });
    expect(stale.status).toBe(200);
    expect(stale.body.length).toBe(html.length);
    const weak = await get(`${srv.url}/`, {
      headers: { range: 'bytes=0-3', 'if-range': `W/"${htmlEntry.sha256}"` },
    });
    expect(weak.status).toBe(200);
    const date = await get(`${srv.url}/`, {
      headers: { range: 'bytes=0-3', 'if-range': 'Wed, 04 Mar 2026 05:06:07 GMT' },
    });
    expect(date.status).toBe(206);
  });

  it('streams large files without caching them, ranges included', async () => {
    const before = cache.size;
    const r = await get(`${srv.url}/big`);
    expect(r.status).toBe(200);
    expect(r.body.equals(big)).toBe(true);
    expect(cache.has(bigEntry.sha256)).toBe(false);
    expect(cache.size).toBe(before);
    const mid = await get(`${srv.url}/big`, { headers: { range: 'bytes=1000000-1000099' } });
    expect(mid.status).toBe(206);
    expect(mid.body.equals(big.subarray(1000000, 1000100))).toBe(true);
  });

  it('caches small blobs after the first request', async () => {
    cache.clear();
    await get(`${srv.url}/app.css`);
    expect(cache.has(cssEntry.sha256)).toBe(true);
    const hits = cache.hits;
    const r = await get(`${srv.url}/app.css`);
    expect(cache.hits).toBe(hits + 1);
    expect(r.headers['cache-control']).toBe(CACHE_IMMUTABLE);
    expect(r.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('serves non-200 statuses whole, without 304 or 206', async () => {
    const r = await get(`${srv.url}/custom404`, {
      headers: { 'if-none-match': `"${htmlEntry.sha256}"`, range: 'bytes=0-1' },
    });
    expect(r.status).toBe(404);
    expect(r.body.equals(html)).toBe(true);
  });

  it('merges routing headers but never framing headers', async () => {
    const r = await get(`${srv.url}/headers`, { headers: { 'accept-encoding': 'gzip' } });
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers.vary).toBe('Accept-Encoding, Cookie');
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(r.body.length).toBeGreaterThan(1);
  });

  it('injects into HTML with its own ETag and identity encoding', async () => {
    const r = await get(`${srv.url}/inject`, { headers: { 'accept-encoding': 'br' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    const text = r.body.toString();
    expect(text).toContain('<script>h()</script></head>');
    expect(text).toContain('<script>e()</script></body>');
    expect(r.headers.etag).toMatch(new RegExp(`^"${htmlEntry.sha256}\\.i[0-9a-f]{16}"$`));
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    const again = await get(`${srv.url}/inject`, { headers: { 'if-none-match': r.headers.etag! } });
    expect(again.status).toBe(304);
  });

  it('answers 405 with Allow for other methods, OPTIONS included', async () => {
    for (const method of ['POST', 'OPTIONS', 'DELETE', 'PUT']) {
      const r = await get(`${srv.url}/`, { method, headers: { accept: 'text/html' } });
      expect(r.status, method).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
      expect(r.headers['content-security-policy']).toContain("default-src 'none'");
    }
  });

  it('keeps per-object routing headers apart', async () => {
    files.set('/h1', { entry: cssEntry, lastModified, headers: { 'X-A': '1' } });
    files.set('/h2', { entry: cssEntry, lastModified, headers: [['X-B', '2']] });
    for (let i = 0; i < 2; i++) {
      const a = await get(`${srv.url}/h1`);
      const b = await get(`${srv.url}/h2`);
      expect(a.headers['x-a']).toBe('1');
      expect(a.headers['x-b']).toBeUndefined();
      expect(b.headers['x-b']).toBe('2');
      expect(b.headers['x-a']).toBeUndefined();
      expect(b.headers['cache-control']).toBe(CACHE_IMMUTABLE);
    }
  });

  it('answers 500 when the blob is missing', async () => {
    const r = await get(`${srv.url}/missing`);
    expect(r.status).toBe(500);
    expect(errors.length).toBeGreaterThan(0);
  });
});

describe('FileResponder streaming paths', () => {
  it('streams injection through large HTML without a Content-Length', async () => {
    const ts = tempStore();
    const cache = new BlobCache({ maxBytes: 1024, maxEntryBytes: 1024 });
    const filler = 'lorem ipsum '.repeat(20_000);
    const doc = `<html><head><title>x</title></head><body>${filler}</body></html>`;
    const entry = await ts.add('big.html', doc, 'text/html');
    const responder = new FileResponder({ blobs: ts.store, cache });
    const injection = makeInjection({ head: '<meta name="h">', bodyStart: '<i>s</i>', bodyEnd: '<i>e</i>' });
    const srv = await serve((req, res) => {
      responder.serve(req, res, { entry, lastModified: new Date(0), injection });
    });
    try {
      const r = await get(srv.url);
      expect(r.status).toBe(200);
      expect(r.headers['content-length']).toBeUndefined();
      expect(r.headers['transfer-encoding']).toBe('chunked');
      expect(r.body.toString()).toBe(
        `<html><head><title>x</title><meta name="h"></head><body><i>s</i>${filler}<i>e</i></body></html>`,
      );
      const h = await get(srv.url, { method: 'HEAD' });
      expect(h.status).toBe(200);
      expect(h.body.length).toBe(0);
      expect(cache.size).toBe(0);
    } finally {
      await srv.close();
      ts.cleanup();
    }
  });
});
