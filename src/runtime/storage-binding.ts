import type http from 'node:http';
import { statusOf } from '../errors/catalog.ts';
import { ApiError } from '../errors/problem.ts';
import { PrivateSocketServer } from './private-socket.ts';

/** The header workerd adds to the storage binding's requests (the token that names the process). */
export const STORAGE_TOKEN_HEADER = 'x-spaces-storage-token';

/** The internal module behind `env.STORAGE` (workerd `wrapped` binding over the `svc` service). */
export const STORAGE_MODULE_NAME = 'spaces:storage';

/**
 * `env.STORAGE` as the worker sees it: made by workerd from this module with the storage service as
 * its only inner binding (which the version's code can't see). `upload(body, {contentType})` →
 * `{id, contentType, size, url}`; `get(id)` → the object's `Response` (404 when there is none);
 * `delete(id)` → true when it was there. Refusals throw an Error whose message starts with the code.
 */
export const STORAGE_MODULE = `const fail = async (r) => {
  let e = null;
  try { e = (await r.json()).error; } catch {}
  const err = new Error(e ? e.code + ': ' + e.message : 'storage: HTTP ' + r.status);
  if (e) err.code = e.code;
  throw err;
};
const idOf = (id) => encodeURIComponent(String(id));
export default function (env) {
  const svc = env.svc;
  return {
    async upload(body, options = {}) {
      let type = options.contentType;
      if (body instanceof Response) { type = type ?? body.headers.get('content-type'); body = body.body; }
      else if (typeof Blob !== 'undefined' && body instanceof Blob) type = type ?? (body.type || undefined);
      const headers = type ? { 'content-type': String(type) } : {};
      const r = await svc.fetch('http://storage/objects', { method: 'POST', headers, body });
      if (!r.ok) await fail(r);
      return r.json();
    },
    async get(id) {
      return svc.fetch('http://storage/objects/' + idOf(id));
    },
    async delete(id) {
      const r = await svc.fetch('http://storage/objects/' + idOf(id), { method: 'DELETE' });
      if (r.status === 404) return false;
      if (!r.ok) await fail(r);
      return true;
    },
  };
}
`;

/** What the binding does for a space (StorageService, seen from the runtime). */
export interface StorageBackend {
  upload(
    spaceId: string,
    versionId: string | null,
    body: AsyncIterable<Uint8Array>,
    contentType: string | null,
  ): Promise<{ id: string; contentType: string; size: number; url: string }>;
  open(
    spaceId: string,
    id: string,
  ): Promise<{
    row: { content_type: string; size: number };
    body: () => Promise<NodeJS.ReadableStream>;
  } | null>;
  delete(spaceId: string, id: string): Promise<boolean>;
}

/**
 * The server's side of `env.STORAGE`: an HTTP server on a Unix socket this server owns. Each workerd
 * process reaches it only through its storage binding, which carries the process's token — and the
 * token, not anything the code sends, says whose store it is: one space's code can't touch another
 * space's objects, whatever id it names.
 */
export class StorageBinding {
  private readonly listener = new PrivateSocketServer('storage', (req, res) => {
    this.handle(req, res).catch((err) => this.answerError(res, err));
  });
  private readonly sources = new Map<string, { spaceId: string; versionId: string }>();

  constructor(private readonly backend: StorageBackend) {}

  async register(
    token: string,
    source: { spaceId: string; versionId: string },
  ): Promise<{ socket: string; header: string; token: string }> {
    this.sources.set(token, source);
    return { socket: await this.listener.socket(), header: STORAGE_TOKEN_HEADER, token };
  }

  unregister(token: string): void {
    this.sources.delete(token);
  }

  private json(res: http.ServerResponse, status: number, body: unknown): void {
    if (res.headersSent) return void res.destroy();
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private answerError(res: http.ServerResponse, err: unknown): void {
    if (err instanceof ApiError)
      this.json(res, statusOf(err.code), { error: { code: err.code, message: err.detail } });
    else this.json(res, 500, { error: { code: 'internal_error', message: 'The store failed; try again.' } });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const token = req.headers[STORAGE_TOKEN_HEADER];
    const source = typeof token === 'string' ? this.sources.get(token) : undefined;
    req.on('error', () => {});
    if (!source) {
      req.resume();
      return this.json(res, 403, { error: { code: 'forbidden', message: 'Unknown process.' } });
    }
    const url = new URL(req.url ?? '/', 'http://storage');
    if (url.pathname === '/objects' && req.method === 'POST') {
      const type = req.headers['content-type'] ?? null;
      const stored = await this.backend.upload(source.spaceId, source.versionId, req, type);
      return this.json(res, 201, stored);
    }
    const m = /^\/objects\/([^/]+)$/.exec(url.pathname);
    if (!m) {
      req.resume();
      return this.json(res, 404, { error: { code: 'not_found', message: 'No such storage call.' } });
    }
    const id = decodeURIComponent(m[1]!);
    req.resume();
    if (req.method === 'GET' || req.method === 'HEAD') {
      const o = await this.backend.open(source.spaceId, id);
      if (!o)
        return this.json(res, 404, {
          error: { code: 'storage_object_not_found', message: `No object ${id}.` },
        });
      const body = await o.body();
      res.writeHead(200, { 'content-type': o.row.content_type, 'content-length': String(o.row.size) });
      if (req.method === 'HEAD') return void res.end();
      body.on('error', () => res.destroy());
      body.pipe(res);
      return;
    }
    if (req.method === 'DELETE') {
      const gone = await this.backend.delete(source.spaceId, id);
      return gone
        ? this.json(res, 200, { deleted: true })
        : this.json(res, 404, { error: { code: 'storage_object_not_found', message: `No object ${id}.` } });
    }
    return this.json(res, 405, {
      error: { code: 'method_not_allowed', message: 'GET, DELETE or POST /objects.' },
    });
  }

  async close(): Promise<void> {
    await this.listener.close();
  }
}
