import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { request } from 'undici';
import type { TestServer } from '../helpers/server.ts';

export const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

export type Site = Record<string, string | Buffer>;

export function manifestOf(site: Site) {
  return Object.entries(site).map(([path, c]) => ({
    path,
    sha256: sha(c),
    size: Buffer.byteLength(c),
  }));
}

/** A tar stream of files named by path. */
export async function tarOf(site: Site, extra?: (pack: tar.Pack) => void): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, c] of Object.entries(site)) pack.entry({ name }, Buffer.from(c));
  extra?.(pack);
  pack.finalize();
  const parts: Buffer[] = [];
  for await (const chunk of pack) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

export async function tarGzOf(site: Site, extra?: (pack: tar.Pack) => void): Promise<Buffer> {
  return zlib.gzipSync(await tarOf(site, extra));
}

/** Reads a tar.gz body back into path → bytes. */
export async function untarGz(buf: Buffer): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (h, s, next) => {
      const parts: Buffer[] = [];
      s.on('data', (c: unknown) => parts.push(c as Buffer));
      s.on('end', () => {
        out.set(h.name, Buffer.concat(parts));
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  Readable.from([zlib.gunzipSync(buf)]).pipe(extract);
  await done;
  return out;
}

export async function createSpace(t: TestServer, token?: string, body: object = {}): Promise<any> {
  const res = await t.api('POST', '/v1/spaces', { token, body });
  if (res.status !== 201) throw new Error(`create space: ${res.status} ${res.text}`);
  return res.body.data.space;
}

/** PUTs raw bytes to a URL (an upload target). */
export async function putBytes(url: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const res = await request(url, { method: 'PUT', body, headers });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : null, text };
}

/** The versions flow end to end: create, upload each target, finalize. Returns the receipts. */
export async function publishViaVersions(
  t: TestServer,
  spaceId: string,
  site: Site,
  opts: { token?: string; target?: 'production' | 'preview'; batch?: boolean } = {},
) {
  const created = await t.api('POST', `/v1/spaces/${spaceId}/versions`, {
    token: opts.token,
    body: { files: manifestOf(site), ...(opts.target ? { target: opts.target } : {}) },
  });
  if (created.status !== 201 && created.status !== 200)
    throw new Error(`create: ${created.status} ${created.text}`);
  const receipt = created.body.data;
  if (receipt.noop) return { created: receipt, finalized: null, uploaded: [] as string[] };
  const targets: Array<{ path: string; url: string }> = receipt.upload.targets;
  if (opts.batch) {
    const subset: Site = {};
    for (const tg of targets) subset[tg.path] = site[tg.path]!;
    const res = await t.api('PUT', `/v1/spaces/${spaceId}/versions/${receipt.version.id}/uploads`, {
      token: opts.token,
      raw: await tarOf(subset),
      headers: { 'content-type': 'application/x-tar' },
    });
    if (res.status !== 200) throw new Error(`batch: ${res.status} ${res.text}`);
  } else {
    for (const tg of targets) {
      const res = await putBytes(tg.url, Buffer.from(site[tg.path]!), {
        'content-type': 'application/octet-stream',
      });
      if (res.status !== 200) throw new Error(`upload ${tg.path}: ${res.status} ${res.text}`);
    }
  }
  const fin = await t.api('POST', `/v1/spaces/${spaceId}/versions/${receipt.version.id}/finalize`, {
    token: opts.token,
  });
  if (fin.status !== 200) throw new Error(`finalize: ${fin.status} ${fin.text}`);
  return { created: receipt, finalized: fin.body.data, uploaded: targets.map((x) => x.path) };
}

export async function download(t: TestServer, spaceId: string, versionId: string, token?: string) {
  const res = await request(`${t.url}/v1/spaces/${spaceId}/versions/${versionId}/archive`, {
    headers: { authorization: `Bearer ${token ?? t.ownerKey}` },
  });
  const buf = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`archive: ${res.statusCode} ${buf.toString()}`);
  return untarGz(buf);
}
