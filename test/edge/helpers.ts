import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FsBlobStore } from '../../src/blobs/fs.ts';
import { compressVariants } from '../../src/domain/publishing/compress-pool.ts';
import { type CompileInput, compileSite } from '../../src/site/compile.ts';
import { normalisePath } from '../../src/site/path.ts';
import { type Decision, manifestLookup, type RouteRequest, route } from '../../src/site/rules.ts';
import type { ManifestEntry } from '../../src/site/types.ts';

export const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

export interface TempStore {
  store: FsBlobStore;
  dir: string;
  cleanup(): void;
  /** Stores `body` (and its compressed variants when `compress`) and returns its manifest entry. */
  add(p: string, body: Buffer | string, contentType: string, compress?: boolean): Promise<ManifestEntry>;
}

export function tempStore(): TempStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-'));
  const store = new FsBlobStore(dir);
  return {
    store,
    dir,
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
    async add(p, body, contentType, compress = false) {
      const buf = Buffer.isBuffer(body) ? body : Buffer.from(body);
      const d = sha(buf);
      await store.put(d, buf.length, Readable.from([buf]));
      const entry: ManifestEntry = { path: p, sha256: d, size: buf.length, contentType };
      if (compress) {
        const v = compressVariants(buf);
        entry.encodings = {};
        for (const k of ['br', 'gzip'] as const) {
          const b = v[k];
          if (!b) continue;
          await store.put(sha(b), b.length, Readable.from([b]));
          entry.encodings[k] = { sha256: sha(b), size: b.length };
        }
      }
      return entry;
    },
  };
}

export interface Served {
  url: string;
  port: number;
  server: http.Server;
  close(): Promise<void>;
}

export async function serve(handler: http.RequestListener): Promise<Served> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A plain `node:http` request: no decompression, exact headers. */
export function get(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

export function entries(paths: string[]): ManifestEntry[] {
  return paths.map((path) => ({
    path,
    sha256: `sha-${path}`,
    size: 1,
    contentType: path.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream',
  }));
}

export interface Site {
  go(url: string, extra?: Partial<RouteRequest>): Decision;
  /** Short form: `file:<path> <status>`, `redirect:<status> <location>`, `404:<path|none>`, … */
  summary(url: string, extra?: Partial<RouteRequest>): string;
}

export function site(paths: string[], input: Omit<CompileInput, 'files'> = {}): Site {
  const files = entries(paths);
  const compiled = compileSite({ ...input, files });
  if (!compiled.ok) {
    throw new Error(`site does not compile: ${JSON.stringify(compiled.diagnostics)}`);
  }
  // The rules survive a JSON round trip: they are stored and cached as JSON.
  const rules = JSON.parse(JSON.stringify(compiled.rules));
  const lookup = manifestLookup(files);
  const go = (url: string, extra: Partial<RouteRequest> = {}): Decision => {
    const u = new URL(url, 'http://site.example');
    const rawPath = url.startsWith('/') ? url.replace(/[?#].*$/, '') : u.pathname;
    const n = normalisePath(rawPath);
    if (!n.ok) throw new Error(`bad path ${url}: ${n.reason}`);
    return route(
      {
        method: 'GET',
        path: n.path,
        query: u.searchParams,
        host: url.startsWith('/') ? 'site.example' : u.host,
        headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/html' },
        cookies: {},
        ip: '203.0.113.9',
        ...extra,
      },
      rules,
      lookup,
    );
  };
  return {
    go,
    summary(url, extra) {
      const d = go(url, extra);
      switch (d.type) {
        case 'file':
          return `file:${d.entry.path} ${d.status}`;
        case 'redirect':
          return `redirect:${d.status} ${d.location}`;
        case 'loop':
          return `loop:${d.location}`;
        case 'notFound':
          return `404:${d.entry?.path ?? 'none'}`;
        case 'proxy':
          return `proxy:${d.url}${d.cacheShared ? ' shared' : ''}`;
        case 'listing':
          return `listing:${d.dir} ${d.entries.map((e) => (e.kind === 'dir' ? `${e.name}/` : e.name)).join(',')}`;
        case 'block':
          return `block:${d.status}`;
        case 'challenge':
          return 'challenge';
        case 'worker':
          return 'worker';
      }
    },
  };
}
