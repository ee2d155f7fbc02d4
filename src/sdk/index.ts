/**
 * The typed Spaces SDK. The client is openapi-fetch over types openapi-typescript generated from the
 * server's own OpenAPI document (`schema.ts`, `npm run build:sdk`): every path, parameter, body and
 * answer is typed from the TypeBox schemas the server validates with, and nothing is generated at run
 * time (openapi-fetch is a ~6 KB wrapper around `fetch`). Written by hand, only what a generator can't
 * express: problem documents as a typed error (`SpacesProblem`), the paginated iterator (`paginate`)
 * and the versions flow (`publishFiles`: hash, upload only what the server lacks, finalize).
 * See docs/guides/sdk.md.
 */
import createClient, { type Client } from 'openapi-fetch';
import { problemFrom } from './problem.ts';
import type { components, operations, paths } from './schema.ts';
import { createSpacesFetch, type TransportOptions } from './transport.ts';

export { type Problem, problemFrom, SpacesProblem } from './problem.ts';
export {
  type Credential,
  createSpacesFetch,
  networkProblem,
  RETRIES_HEADER,
  type RetryInfo,
  retryDelay,
  SDK_USER_AGENT,
  type TransportOptions,
} from './transport.ts';

export type { components, operations, paths };
export type Schemas = components['schemas'];
/** What a publish answers: the space, the version, its URLs, and `claim` for an anonymous space. */
export type PublishReceipt = Schemas['PublishReceipt']['data'];
export type SpacesClient = Client<paths, `${string}/${string}`>;
/** The JSON body an operation takes: `RequestBody<'/v1/spaces', 'post'>`. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export interface SpacesClientOptions extends TransportOptions {
  /** The API origin, e.g. `https://spaces.example.com`. */
  baseUrl: string;
}

/**
 * The typed client: `client.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId } } })`. Every
 * call goes through `createSpacesFetch` (credential, user agent, retries, login renewal).
 */
export function createSpacesClient(o: SpacesClientOptions): SpacesClient {
  return createClient<paths>({ baseUrl: o.baseUrl.replace(/\/+$/, ''), fetch: createSpacesFetch(o) });
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a call (undefined only for an answer without a body, 204), or a thrown `SpacesProblem`. */
export async function unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
  const r = await call;
  if (!r.response.ok) throw problemFrom(r.error, r.response);
  return r.data as T;
}

/**
 * A request outside the typed paths (a signed upload URL, a URL an answer gave) through `fetch` (e.g.
 * `createSpacesFetch`): its `Response` when 2xx, else a thrown `SpacesProblem`.
 */
export async function sendRaw(fetcher: typeof fetch, url: string, init: RequestInit): Promise<Response> {
  const res = await fetcher(url, init);
  if (res.ok) return res;
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the text is the detail
  }
  throw problemFrom(body, res);
}

/** The body serializer for a raw body (bytes, a Blob, a tar): sent as it is. */
export const rawBody = (body: unknown): BodyInit => body as BodyInit;

/**
 * A streaming answer (NDJSON, server-sent events) as its `Response`, or a thrown `SpacesProblem`:
 * `await streamOf(client.GET('/v1/builds/{buildId}/logs', { params, parseAs: 'stream', headers: { accept: 'application/x-ndjson' } }))`.
 * Read it with `response.body` (a web ReadableStream of bytes).
 */
export async function streamOf(call: Promise<Answer<unknown>>): Promise<Response> {
  const r = await call;
  if (!r.response.ok) throw problemFrom(r.error, r.response);
  return r.response;
}

/**
 * Every item of a paged list, following `pagination.nextCursor`:
 * `for await (const v of paginate((cursor) => client.GET('/v1/spaces/{spaceId}/versions', { params: { path: { spaceId }, query: cursor ? { cursor } : {} } })))`.
 */
export async function* paginate<Item>(
  page: (
    cursor: string | undefined,
  ) => Promise<Answer<{ data: Item[]; pagination?: { nextCursor?: string | null } }>>,
): AsyncGenerator<Item> {
  let cursor: string | undefined;
  for (;;) {
    const body = await unwrap(page(cursor));
    for (const item of body.data) yield item;
    const next = body.pagination?.nextCursor;
    if (!next) return;
    cursor = next;
  }
}

export interface FileToPublish {
  /** The path in the site, `index.html`, `assets/app.js`. */
  path: string;
  /** The bytes, or text (UTF-8). */
  content: Uint8Array | string;
}

export interface PublishFilesOptions {
  /** Space id or slug. */
  spaceId: string;
  files: FileToPublish[];
  /** `production` (default) moves the live channel; `preview` does not. */
  target?: 'production' | 'preview';
  message?: string;
  /** Makes a retried publish safe. */
  idempotencyKey?: string;
  fetch?: typeof fetch;
}

const hex = (buf: ArrayBuffer) =>
  Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');

/**
 * The versions flow: hash every file (SHA-256), create the version with the manifest, upload only the
 * files the server asks for (to their signed URLs, without the bearer), then finalize. An unchanged
 * manifest answers at once (`noop`). Returns the receipt (`space.liveUrl`, `version.immutableUrl`).
 */
export async function publishFiles(client: SpacesClient, o: PublishFilesOptions): Promise<PublishReceipt> {
  const encoder = new TextEncoder();
  const files = await Promise.all(
    o.files.map(async (f) => {
      const bytes = typeof f.content === 'string' ? encoder.encode(f.content) : f.content;
      const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>);
      return { path: f.path, bytes, sha256: hex(digest), size: bytes.byteLength };
    }),
  );
  const path = { spaceId: o.spaceId };
  const created = await unwrap(
    client.POST('/v1/spaces/{spaceId}/versions', {
      params: { path },
      body: {
        files: files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
        ...(o.target ? { target: o.target } : {}),
        ...(o.message !== undefined ? { message: o.message } : {}),
      },
      ...(o.idempotencyKey ? { headers: { 'idempotency-key': o.idempotencyKey } } : {}),
    }),
  );
  const receipt = created.data;
  if (receipt.noop || receipt.next.action === 'done') return receipt;
  const byPath = new Map(files.map((f) => [f.path, f]));
  const put = o.fetch ?? fetch;
  for (const target of receipt.upload.targets) {
    const file = byPath.get(target.path);
    if (!file) throw new Error(`The server asked for "${target.path}", which is not in the manifest.`);
    await sendRaw(put, target.url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: file.bytes as Uint8Array<ArrayBuffer>,
    });
  }
  const finalized = await unwrap(
    client.POST('/v1/spaces/{spaceId}/versions/{versionId}/finalize', {
      params: { path: { spaceId: receipt.space.id, versionId: receipt.version.id } },
    }),
  );
  return finalized.data;
}
