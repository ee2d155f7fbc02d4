/**
 * The SDK's transport: the `fetch` every typed call goes through. It sends the bearer credential and
 * the user agent, retries what is safe to retry (429/5xx/network errors, with `Retry-After` or
 * backoff), renews a refused login once (a `Credential`), and turns an unreachable server into a
 * `network_error` problem. Written by hand: a generator has no notion of any of it.
 */
import { SpacesProblem } from './problem.ts';

/** A credential that can be renewed (an OAuth login): what to send now, and what to do after a 401. */
export interface Credential {
  /** The token to send (renewed first when it is known to have expired). */
  current(): Promise<string>;
  /** The server refused `token`: a renewed one to retry with, or null. */
  renew(token: string): Promise<string | null>;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  /** The status that is retried, or null for a network error. */
  status: number | null;
  url: string;
}

export interface TransportOptions {
  /** A bearer credential (API key, OAuth access token, space key), or a function that gives one. */
  token?: string | (() => string | Promise<string>);
  /** A renewable login, sent instead of `token` and renewed once per request when refused. */
  credential?: Credential;
  /** The client's product token, sent before the SDK's own (`spaces-cli spaces-sdk`). */
  userAgent?: string;
  /** Retries of one request; by default 4 for idempotent methods (or with an Idempotency-Key), else 0. */
  retries?: number;
  /** Called before each retry (progress output). */
  onRetry?: (info: RetryInfo) => void;
  sleep?: (ms: number) => Promise<void>;
  /** The `fetch` underneath (tests, proxies). */
  fetch?: typeof fetch;
  /** What to suggest when the server can't be reached at all (`origin` is the API's). */
  networkSuggestions?: (origin: string) => string[];
}

/** The SDK's product token: every request it sends names it in `User-Agent`, after the caller's. */
export const SDK_USER_AGENT = 'spaces-sdk';
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const MAX_DELAY_MS = 30_000;
/** The header that overrides the retry count of one call (`headers: { [RETRIES_HEADER]: '2' }`); never sent. */
export const RETRIES_HEADER = 'x-spaces-sdk-retries';

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

/** The server could not be reached at all (nothing listening, wrong address): a `network_error` problem. */
export function networkProblem(url: string, err: unknown, suggestions: string[] = []): SpacesProblem {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
  const origin = new URL(url).origin;
  return new SpacesProblem({
    type: 'about:blank',
    title: 'Network error',
    status: 0,
    code: 'network_error',
    detail: `Could not reach ${origin}: ${why}.`,
    requestId: '',
    ...(suggestions.length ? { suggestions } : {}),
  });
}

/** The `fetch` of `createSpacesClient`, usable on its own for raw bodies (uploads to signed URLs). */
export function createSpacesFetch(o: TransportOptions = {}): typeof fetch {
  const base = o.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const original = new Request(input, init);
    const override = original.headers.get(RETRIES_HEADER);
    original.headers.delete(RETRIES_HEADER);
    const idempotent = IDEMPOTENT.has(original.method) || original.headers.has('idempotency-key');
    const retries = override !== null ? Number(override) : (o.retries ?? (idempotent ? 4 : 0));
    // A call that brings its own credential keeps it; otherwise the renewable login, else the token.
    const own = original.headers.has('authorization');
    const credential = own ? undefined : o.credential;
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      const request = original.clone();
      request.headers.set('user-agent', o.userAgent ? `${o.userAgent} ${SDK_USER_AGENT}` : SDK_USER_AGENT);
      if (!request.headers.has('accept'))
        request.headers.set('accept', 'application/json, application/problem+json');
      let token: string | undefined;
      if (!own) {
        token = credential
          ? await credential.current()
          : typeof o.token === 'function'
            ? await o.token()
            : o.token;
        if (token) request.headers.set('authorization', `Bearer ${token}`);
      }
      let res: Response;
      try {
        res = await base(request);
      } catch (err) {
        if (attempt < retries) {
          const delayMs = retryDelay(attempt, null);
          o.onRetry?.({ attempt: attempt + 1, delayMs, status: null, url: original.url });
          await sleep(delayMs);
          continue;
        }
        throw networkProblem(original.url, err, o.networkSuggestions?.(new URL(original.url).origin));
      }
      if (res.ok) return res;
      // An expired (or otherwise refused) login: renewed once, then the same request again.
      if (res.status === 401 && credential && token && !renewed) {
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
        o.onRetry?.({ attempt: attempt + 1, delayMs, status: res.status, url: original.url });
        await sleep(delayMs);
        continue;
      }
      return res;
    }
  };
}
