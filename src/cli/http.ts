import type { Static } from '@sinclair/typebox';
import type { Problem as ProblemSchema } from '../schemas/common.ts';

export type Problem = Static<typeof ProblemSchema>;

/** A problem document answered by the server, or one the CLI made up for a network failure. */
export class ApiProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
  }
  get status(): number {
    return this.problem.status;
  }
}

/** A mistake on the command line (exit code 2). */
export class UsageError extends Error {}

export interface RequestOptions {
  body?: unknown;
  /** A raw body (stream, Blob, Buffer); `contentType` says what it is. */
  raw?: BodyInit | (() => BodyInit);
  contentType?: string;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** Send no credential even when one is configured. */
  anonymous?: boolean;
  /** Override the credential for this call (e.g. a space key). */
  token?: string;
  idempotencyKey?: string;
  /** Retries on 429/5xx/network errors; the default covers idempotent methods only. */
  retries?: number;
  /** Don't parse the answer; give back the Response. */
  stream?: boolean;
}

/** A credential that can be renewed (an OAuth login): what to send now, and what to do after a 401. */
export interface Credential {
  /** The token to send (renewed first when it is known to have expired). */
  current(): Promise<string>;
  /** The server refused `token`: a renewed one to retry with, or null. */
  renew(token: string): Promise<string | null>;
}

export interface ClientOptions {
  apiUrl: string;
  token?: string;
  /** Sent instead of `token`, and renewed once per request when the server refuses it. */
  credential?: Credential;
  userAgent?: string;
  /** Called before each retry (for progress output). */
  onRetry?: (info: { attempt: number; delayMs: number; status: number | null; url: string }) => void;
  sleep?: (ms: number) => Promise<void>;
}

const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);
const MAX_DELAY_MS = 30_000;

/** `Retry-After` in seconds or as an HTTP date; falls back to exponential backoff with jitter. */
export function retryDelay(attempt: number, retryAfter: string | null, now = Date.now()): number {
  if (retryAfter) {
    const secs = Number(retryAfter);
    if (Number.isFinite(secs) && secs >= 0) return Math.min(secs * 1000, MAX_DELAY_MS);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.min(Math.max(0, at - now), MAX_DELAY_MS);
  }
  const base = Math.min(250 * 2 ** attempt, MAX_DELAY_MS);
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/** The CLI could not reach the server at all (nothing listening, wrong address): what to check. */
export function networkProblem(url: string, err: unknown): ApiProblem {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
  const origin = new URL(url).origin;
  return new ApiProblem({
    type: 'about:blank',
    title: 'Network error',
    status: 0,
    code: 'network_error',
    detail: `Could not reach ${origin}: ${why}.`,
    requestId: '',
    suggestions: [
      `Is the server running at ${origin}? For another address give --api-url <url> or set SPACES_API_URL.`,
    ],
  });
}

/** Turns a non-2xx answer into an ApiProblem (problem+json when the server sent one). */
export async function problemOf(res: Response): Promise<ApiProblem> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as Partial<Problem>;
    if (body && typeof body === 'object' && typeof body.code === 'string') {
      return new ApiProblem({
        type: body.type ?? 'about:blank',
        title: body.title ?? res.statusText,
        status: body.status ?? res.status,
        detail: body.detail ?? '',
        code: body.code,
        requestId: body.requestId ?? res.headers.get('x-request-id') ?? '',
        ...(body.pointer ? { pointer: body.pointer } : {}),
        ...(body.details ? { details: body.details } : {}),
        ...(body.suggestions ? { suggestions: body.suggestions } : {}),
        ...(body.next ? { next: body.next } : {}),
      });
    }
  } catch {
    // not JSON: fall through
  }
  return new ApiProblem({
    type: 'about:blank',
    title: res.statusText || `HTTP ${res.status}`,
    status: res.status,
    code: res.status === 404 ? 'not_found' : `http_${res.status}`,
    detail: text.slice(0, 500) || `The server answered ${res.status}.`,
    requestId: res.headers.get('x-request-id') ?? '',
  });
}

/** The CLI's only way to the API: JSON in and out, problem documents as errors, retries with backoff. */
export class ApiClient {
  constructor(readonly opts: ClientOptions) {}

  get apiUrl(): string {
    return this.opts.apiUrl.replace(/\/+$/, '');
  }

  get hasToken(): boolean {
    return Boolean(this.opts.token);
  }

  url(path: string, query?: RequestOptions['query']): string {
    const u = new URL(
      /^https?:\/\//.test(path) ? path : `${this.apiUrl}${path.startsWith('/') ? '' : '/'}${path}`,
    );
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  async request<T = unknown>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, o);
    if (o.stream) return res as T;
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Sends with retries; answers the Response of a 2xx, throws ApiProblem otherwise. */
  async send(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const url = this.url(path, o.query);
    const idempotent =
      ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'].includes(method) || Boolean(o.idempotencyKey);
    const retries = o.retries ?? (idempotent ? 4 : 0);
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    const credential = o.token === undefined && !o.anonymous ? this.opts.credential : undefined;
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = {
        accept: 'application/json, application/problem+json',
        'user-agent': this.opts.userAgent ?? 'spaces-cli',
        ...o.headers,
      };
      const token = o.token ?? (credential ? await credential.current() : this.opts.token);
      if (token && !o.anonymous) headers.authorization = `Bearer ${token}`;
      if (o.idempotencyKey) headers['idempotency-key'] = o.idempotencyKey;
      let body: BodyInit | undefined;
      if (o.raw !== undefined) {
        body = typeof o.raw === 'function' ? o.raw() : o.raw;
        if (o.contentType) headers['content-type'] = o.contentType;
      } else if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      let res: Response;
      try {
        res = await fetch(url, {
          method,
          headers,
          body,
          ...(body instanceof ReadableStream || isNodeStream(body) ? { duplex: 'half' } : {}),
        } as RequestInit);
      } catch (err) {
        if (attempt < retries) {
          const delayMs = retryDelay(attempt, null);
          this.opts.onRetry?.({ attempt: attempt + 1, delayMs, status: null, url });
          await sleep(delayMs);
          continue;
        }
        throw networkProblem(url, err);
      }
      if (res.ok) return res;
      // An expired (or otherwise refused) login: renewed once, then the same request again. A body
      // that was a stream can't be sent twice, so that request fails as it is.
      if (
        res.status === 401 &&
        credential &&
        token &&
        !renewed &&
        !isNodeStream(body) &&
        !(body instanceof ReadableStream)
      ) {
        renewed = true;
        if (await credential.renew(token)) {
          await res.body?.cancel().catch(() => {});
          attempt--;
          continue;
        }
      }
      if (RETRYABLE.has(res.status) && attempt < retries) {
        await res.body?.cancel().catch(() => {});
        const delayMs = retryDelay(attempt, res.headers.get('retry-after'));
        this.opts.onRetry?.({ attempt: attempt + 1, delayMs, status: res.status, url });
        await sleep(delayMs);
        continue;
      }
      throw await problemOf(res);
    }
  }

  /** Every item of a paged list, following `pagination.nextCursor`. */
  async *paginate<T>(
    path: string,
    query: Record<string, string | number | undefined> = {},
  ): AsyncGenerator<T> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.request<{ data: T[]; pagination?: { nextCursor: string | null } }>(
        'GET',
        path,
        {
          query: { limit: 100, ...query, cursor },
        },
      );
      for (const item of page.data) yield item;
      const next = page.pagination?.nextCursor;
      if (!next) return;
      cursor = next;
    }
  }
}

function isNodeStream(b: unknown): boolean {
  return typeof b === 'object' && b !== null && typeof (b as { pipe?: unknown }).pipe === 'function';
}
