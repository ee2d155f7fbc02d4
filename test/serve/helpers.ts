import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FsBlobStore } from '../../src/blobs/fs.ts';
import { compressVariants } from '../../src/serve/compress.ts';
import type { ManifestEntry } from '../../src/serve/types.ts';

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
