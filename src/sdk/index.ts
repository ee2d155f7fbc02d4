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
import type { components, operations, paths } from './schema.ts';

export type { components, operations, paths };
export type Schemas = components['schemas'];
/** An RFC 9457 problem document with our `code`, `pointer`, `suggestions` and `next`. */
export type Problem = Schemas['Problem'];
/** What a publish answers: the space, the version, its URLs, and `claim` for an anonymous space. */
export type PublishReceipt = Schemas['PublishReceipt']['data'];
export type SpacesClient = Client<paths, `${string}/${string}`>;

/** A problem answered by the API, thrown by `unwrap`, `paginate` and `publishFiles`. */
export class SpacesProblem extends Error {
  constructor(
    readonly problem: Problem,
    readonly response: Response | null = null,
  ) {
    super(`${problem.title}: ${problem.detail}`);
    this.name = 'SpacesProblem';
  }
  /** The stable error code (`validation_error`, `not_found`, …): match on this. */
  get code(): string {
    return this.problem.code;
  }
  get status(): number {
    return this.problem.status;
  }
  /** JSON Pointer to the input at fault (validation errors). */
  get pointer(): string | undefined {
    return this.problem.pointer;
  }
}

function isProblem(v: unknown): v is Problem {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Problem).code === 'string' &&
    typeof (v as Problem).title === 'string'
  );
}

/** A failed answer as a `SpacesProblem` (a problem document when the server sent one). */
export function problemFrom(body: unknown, response: Response | null): SpacesProblem {
  if (isProblem(body)) return new SpacesProblem(body, response);
  const status = response?.status ?? 0;
  return new SpacesProblem(
    {
      type: 'about:blank',
      title: response?.statusText || `HTTP ${status}`,
      status,
      detail: typeof body === 'string' ? body.slice(0, 500) : `The server answered ${status}.`,
      code: `http_${status}`,
      requestId: response?.headers.get('x-request-id') ?? '',
    },
    response,
  );
}

export interface SpacesClientOptions {
  /** The API origin, e.g. `https://spaces.example.com`. */
  baseUrl: string;
  /** A bearer credential (API key, OAuth access token, space key), or a function that gives one. */
  token?: string | (() => string | Promise<string>);
  /** Another `fetch` (tests, proxies). */
  fetch?: typeof fetch;
  userAgent?: string;
}

/** The typed client: `client.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId } } })`. */
export function createSpacesClient(o: SpacesClientOptions): SpacesClient {
  const client = createClient<paths>({
    baseUrl: o.baseUrl.replace(/\/+$/, ''),
    ...(o.fetch ? { fetch: o.fetch } : {}),
  });
  client.use({
    async onRequest({ request }) {
      const token = typeof o.token === 'function' ? await o.token() : o.token;
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      if (o.userAgent) request.headers.set('user-agent', o.userAgent);
      return request;
    },
  });
  return client;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a call, or a thrown `SpacesProblem`. */
export async function unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
  const r = await call;
  if (!r.response.ok || r.data === undefined) throw problemFrom(r.error, r.response);
  return r.data;
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
    const res = await put(target.url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: file.bytes as Uint8Array<ArrayBuffer>,
    });
    if (!res.ok) {
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      throw problemFrom(body, res);
    }
  }
  const finalized = await unwrap(
    client.POST('/v1/spaces/{spaceId}/versions/{versionId}/finalize', {
      params: { path: { spaceId: receipt.space.id, versionId: receipt.version.id } },
    }),
  );
  return finalized.data;
}
