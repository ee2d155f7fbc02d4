import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Agent } from 'undici';
import {
  type AllowList,
  checkAddress,
  EMPTY_ALLOW_LIST,
  OutboundRefusedError,
  parseAllowList,
} from '../net/outbound.ts';
import { undici } from '../net/undici.ts';
import { isFieldList } from '../site/field.ts';
import { isServiceCookieName, withoutServiceCookies } from './cookies.ts';
import { sendSystemPage } from './pages.ts';
import { VISITOR_TOKEN_HEADER } from './visitor-token-header.ts';

/**
 * Proxy rewrites (`/api/* https://api.example.com/:splat 200`): the request streams to the upstream
 * and the answer streams back. Hygiene both ways: hop-by-hop headers (and any named in `Connection`)
 * are removed, `Host` is the upstream's, `X-Forwarded-For/Proto/Host` are set, the service's own
 * cookies never leave, and a proxied `Set-Cookie` loses its `Domain` (host-only, so an upstream can't
 * set cookies for sibling spaces).
 *
 * SSRF: only public unicast addresses are reachable. The check runs on the *resolved* address at
 * connect time, inside the dispatcher's connector (every address a name resolves to must pass, so a
 * name that also resolves to a private address is refused), and again on the URL text for a fast,
 * clear refusal. Redirects are never followed: a 3xx goes back to the visitor, whose browser makes
 * its own request. An operator allow-list (`SPACES_PROXY_ALLOW`) can open CIDRs or exact host:port
 * pairs.
 */

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'http2-settings',
]);

export const DEFAULT_PROXY_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 100 * 1024 * 1024;
export const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;

export {
  type AllowList as ProxyAllowList,
  checkAddress,
  createSafeDispatcher,
  EMPTY_ALLOW_LIST,
  forbiddenAddressReason,
  OutboundRefusedError as ProxyRefusedError,
  type Resolver,
  type SafeDispatcherOptions,
} from '../net/outbound.ts';

/** Parses `SPACES_PROXY_ALLOW` (see `parseAllowList`). */
export function parseProxyAllowList(spec: string | undefined | null): AllowList {
  return parseAllowList(spec, 'SPACES_PROXY_ALLOW');
}

export interface ProxyOptions {
  /** Absolute http(s) URL, already expanded by routing (splat, query). */
  target: string;
  dispatcher: Agent;
  allow?: AllowList;
  /** The visitor's address (after trusted-proxy handling). */
  clientIp: string;
  /** Scheme the visitor used. */
  proto: 'http' | 'https';
  /** The site hostname the visitor asked for. */
  host: string;
  timeoutMs?: number;
  maxResponseBytes?: number;
  maxRequestBytes?: number;
  /** `shared`: upstream Cache-Control passes through; `private` (default): made private. */
  cache?: 'shared' | 'private';
  /** The edge's visitor token (`Bearer …`), sent as `X-Service-Authorization` (see visitor-token-header.ts). */
  serviceAuthorization?: string;
}

export interface ProxyOutcome {
  status: number;
  /** Set when the proxy answered itself instead of relaying (refused, timeout, upstream error, cap). */
  error?: 'refused' | 'timeout' | 'upstream' | 'too_large' | 'bad_target' | 'invalid_header';
  detail?: string;
}

function connectionTokens(value: string | string[] | undefined): Set<string> {
  const out = new Set<string>();
  if (!value) return out;
  for (const v of Array.isArray(value) ? value : [value]) {
    for (const t of v.split(',')) if (t.trim()) out.add(t.trim().toLowerCase());
  }
  return out;
}

/** Request headers for the upstream. */
export function upstreamRequestHeaders(
  req: IncomingMessage,
  url: URL,
  opts: ProxyOptions,
): Record<string, string> {
  const drop = connectionTokens(req.headers.connection);
  const out: Record<string, string> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(name) || drop.has(name) || name.startsWith('proxy-')) continue;
    if (name === 'host' || name.startsWith('x-forwarded-') || name === 'forwarded' || name === 'x-real-ip')
      continue;
    if (name === 'cookie' || name === VISITOR_TOKEN_HEADER) continue;
    out[name] = out[name] === undefined ? raw[i + 1] : `${out[name]}, ${raw[i + 1]}`;
  }
  const cookie = withoutServiceCookies(
    Array.isArray(req.headers.cookie) ? req.headers.cookie.join('; ') : req.headers.cookie,
  );
  if (cookie) out.cookie = cookie;
  out.host = url.host;
  const prior = req.headers['x-forwarded-for'];
  out['x-forwarded-for'] = prior
    ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${opts.clientIp}`
    : opts.clientIp;
  out['x-forwarded-proto'] = opts.proto;
  out['x-forwarded-host'] = opts.host;
  if (opts.serviceAuthorization) out[VISITOR_TOKEN_HEADER] = opts.serviceAuthorization;
  return out;
}

/** Removes `Domain` from a Set-Cookie so it stays host-only; drops cookies named like the service's. */
export function sanitizeSetCookie(value: string): string | null {
  const [pair, ...attrs] = value.split(';');
  const name = pair.split('=')[0].trim();
  if (!name || isServiceCookieName(name)) return null;
  const kept = attrs.filter((a) => !/^\s*domain\s*=/i.test(a));
  return [pair, ...kept].join(';');
}

function privateCacheControl(upstream: string | undefined): string {
  const kept = (upstream ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter((d) => d && !/^(public|private|s-maxage\s*=.*|proxy-revalidate)$/i.test(d));
  return ['private', ...kept].join(', ');
}

/**
 * Response headers for the visitor, as a flat list for `writeHead`; null when one is not valid HTTP
 * (the proxy then answers 502, as for any upstream that breaks the protocol). undici's parser refuses
 * such bytes before they get here; checking again means nothing is relayed unchecked.
 */
export function visitorResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  cache: 'shared' | 'private',
): string[] | null {
  const drop = connectionTokens(upstream.connection);
  const out: string[] = [];
  let cacheControl: string | undefined;
  for (const [rawName, value] of Object.entries(upstream)) {
    const name = rawName.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(name) || drop.has(name) || name.startsWith('proxy-')) continue;
    const values = Array.isArray(value) ? value : [value];
    if (name === 'cache-control') {
      cacheControl = values.join(', ');
      continue;
    }
    if (name === 'set-cookie') {
      for (const v of values) {
        const s = sanitizeSetCookie(v);
        if (s) out.push('Set-Cookie', s);
      }
      continue;
    }
    for (const v of values) out.push(rawName, v);
  }
  if (cache === 'shared') {
    if (cacheControl !== undefined) out.push('Cache-Control', cacheControl);
  } else out.push('Cache-Control', privateCacheControl(cacheControl));
  return isFieldList(out) ? out : null;
}

class ByteCap extends Transform {
  seen = 0;
  constructor(
    private readonly cap: number,
    private readonly what: string,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.cap) cb(new CapExceededError(this.what));
    else cb(null, chunk);
  }
}

class CapExceededError extends Error {
  constructor(readonly what: string) {
    super(`${what} exceeds the proxy size cap`);
  }
}

function refusedByUrl(url: URL, allow: AllowList): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!isIP(host)) return null;
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  return checkAddress(host, port, allow);
}

function causeChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  let e: unknown = err;
  for (let i = 0; e && i < 5; i++) {
    out.push(e);
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

/**
 * Relays `req` to `opts.target` and the answer back to `res`. Answers the visitor itself with a
 * system page when the target is refused (502), times out (504), fails (502) or is over the size
 * cap before headers (502).
 */
export async function proxyRequest(
  req: IncomingMessage,
  res: ServerResponse,
  opts: ProxyOptions,
): Promise<ProxyOutcome> {
  const allow = opts.allow ?? EMPTY_ALLOW_LIST;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PROXY_TIMEOUT_MS;
  const maxResponse = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxRequest = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const fail = (outcome: ProxyOutcome): ProxyOutcome => {
    if (!res.headersSent) {
      sendSystemPage(
        req,
        res,
        outcome.status === 504
          ? { kind: 'gateway-timeout' }
          : { kind: 'bad-gateway', detail: outcome.detail },
      );
    } else res.destroy();
    return outcome;
  };

  let url: URL;
  try {
    url = new URL(opts.target);
  } catch {
    return fail({ status: 502, error: 'bad_target', detail: 'The proxy target is not a valid URL.' });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    return fail({
      status: 502,
      error: 'bad_target',
      detail: 'The proxy target must be a plain http(s) URL.',
    });
  }
  const literalReason = refusedByUrl(url, allow);
  if (literalReason) {
    return fail({ status: 502, error: 'refused', detail: 'The proxy target is not a public address.' });
  }

  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  if (hasBody) {
    const len = Number(req.headers['content-length']);
    if (Number.isFinite(len) && len > maxRequest) {
      req.resume();
      return fail({ status: 502, error: 'too_large', detail: 'The request body is too large to forward.' });
    }
  }
  const headers = upstreamRequestHeaders(req, url, opts);
  if (!hasBody) {
    delete headers['content-length'];
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('proxy timeout')), timeoutMs);
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new Error('client went away'));
  };
  res.on('close', onClose);
  try {
    const upstream = await undici().request(url, {
      method: method as 'GET',
      headers,
      body: hasBody ? req.pipe(new ByteCap(maxRequest, 'request body')) : undefined,
      dispatcher: opts.dispatcher,
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    // The overall deadline covers connect and headers; from here on `bodyTimeout` bounds idle gaps,
    // so a long download that keeps moving is not cut off.
    clearTimeout(timer);
    // Errors after we stop reading (destroy, client abort) are expected; don't let them go unhandled.
    upstream.body.on('error', () => {});
    const declared = Number(upstream.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxResponse) {
      upstream.body.destroy();
      return fail({ status: 502, error: 'too_large', detail: 'The upstream answer is too large.' });
    }
    const relayed = visitorResponseHeaders(upstream.headers, opts.cache ?? 'private');
    if (relayed === null) {
      upstream.body.destroy();
      return fail({
        status: 502,
        error: 'invalid_header',
        detail: 'The site this address forwards to answered with a header that is not valid HTTP.',
      });
    }
    res.writeHead(upstream.statusCode, relayed);
    if (method === 'HEAD' || upstream.statusCode === 204 || upstream.statusCode === 304) {
      upstream.body.resume();
      res.end();
    } else {
      await pipeline(upstream.body, new ByteCap(maxResponse, 'response body'), res);
    }
    return { status: upstream.statusCode };
  } catch (err) {
    const chain = causeChain(err);
    const refused = chain.find((e) => e instanceof OutboundRefusedError) as OutboundRefusedError | undefined;
    if (refused) {
      return fail({ status: 502, error: 'refused', detail: 'The proxy target is not a public address.' });
    }
    if (chain.some((e) => e instanceof CapExceededError)) {
      return fail({
        status: 502,
        error: 'too_large',
        detail: 'The answer was larger than the proxy allows.',
      });
    }
    const timedOut =
      controller.signal.aborted && String((controller.signal.reason as Error)?.message) === 'proxy timeout';
    if (
      timedOut ||
      chain.some(
        (e) =>
          e instanceof undici().errors.HeadersTimeoutError ||
          e instanceof undici().errors.BodyTimeoutError ||
          e instanceof undici().errors.ConnectTimeoutError,
      )
    ) {
      return fail({ status: 504, error: 'timeout' });
    }
    return fail({
      status: 502,
      error: 'upstream',
      detail: 'The site this address forwards to could not be reached.',
    });
  } finally {
    clearTimeout(timer);
    res.off('close', onClose);
  }
}
