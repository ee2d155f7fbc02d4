import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, request, errors as undiciErrors } from 'undici';
import { isFieldList } from '../site/field.ts';
import { SERVICE_COOKIE_PREFIX, withoutServiceCookies } from './cookies.ts';
import { sendSystemPage } from './pages.ts';

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

export class ProxyRefusedError extends Error {
  readonly code = 'PROXY_TARGET_REFUSED';
  constructor(
    readonly target: string,
    readonly reason: string,
  ) {
    super(`proxy target ${target} refused: ${reason}`);
  }
}

export interface ProxyAllowList {
  cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  /** `host:port` pairs, host lowercased, IPv6 without brackets. */
  hostPorts: Set<string>;
}

export const EMPTY_ALLOW_LIST: ProxyAllowList = { cidrs: [], hostPorts: new Set() };

/**
 * Parses `SPACES_PROXY_ALLOW`: entries separated by commas or whitespace, each a CIDR
 * (`10.0.0.0/8`, `fd00::/8`), a single IP (`10.1.2.3` = /32), or `host:port` (`127.0.0.1:4000`,
 * `[::1]:4000`, `intranet.example:443`). Throws on an entry it can't read.
 */
export function parseProxyAllowList(spec: string | undefined | null): ProxyAllowList {
  const list: ProxyAllowList = { cidrs: [], hostPorts: new Set() };
  if (!spec) return list;
  for (const raw of spec.split(/[\s,]+/)) {
    const entry = raw.trim();
    if (!entry) continue;
    if (entry.includes('/')) {
      try {
        const [addr, bits] = ipaddr.parseCIDR(entry);
        list.cidrs.push([addr, bits]);
        continue;
      } catch {
        throw new Error(`SPACES_PROXY_ALLOW: "${entry}" is not a CIDR range`);
      }
    }
    if (ipaddr.isValid(entry)) {
      const addr = ipaddr.parse(entry);
      list.cidrs.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
      continue;
    }
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry);
    if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535) {
      throw new Error(`SPACES_PROXY_ALLOW: "${entry}" is not a CIDR, an IP address or host:port`);
    }
    let host = (m[1] ?? m[2]).toLowerCase();
    if (ipaddr.isValid(host)) host = ipaddr.process(host).toString();
    list.hostPorts.add(`${host}:${Number(m[3])}`);
  }
  return list;
}

function hostPortAllowed(allow: ProxyAllowList, host: string, port: number): boolean {
  if (allow.hostPorts.size === 0) return false;
  let h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(h)) h = ipaddr.process(h).toString();
  return allow.hostPorts.has(`${h}:${port}`);
}

function addressAllowed(allow: ProxyAllowList, addr: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  for (const [range, bits] of allow.cidrs) {
    if (range.kind() === addr.kind() && addr.match(range, bits)) return true;
  }
  return false;
}

/**
 * Why an address may not be proxied to, or `null` when it is public unicast. IPv6 forms that embed
 * an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`) are judged by the embedded address.
 */
export function forbiddenAddressReason(ip: string): string | null {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    const parts = v6.parts;
    const range = v6.range();
    if (range === 'ipv4Mapped' || range === 'rfc6145') {
      return forbiddenAddressReason(v6.toIPv4Address().toString());
    }
    if (parts.slice(0, 6).every((p) => p === 0) && (parts[6] !== 0 || parts[7] > 1)) {
      // IPv4-compatible (deprecated) ::a.b.c.d
      const v4 = `${parts[6] >> 8}.${parts[6] & 255}.${parts[7] >> 8}.${parts[7] & 255}`;
      return forbiddenAddressReason(v4) ?? 'IPv4-compatible IPv6 address';
    }
    if (range === 'rfc6052') {
      const v4 = `${parts[6] >> 8}.${parts[6] & 255}.${parts[7] >> 8}.${parts[7] & 255}`;
      return forbiddenAddressReason(v4);
    }
    if (range === '6to4') {
      const v4 = `${parts[1] >> 8}.${parts[1] & 255}.${parts[2] >> 8}.${parts[2] & 255}`;
      return forbiddenAddressReason(v4);
    }
    if (range !== 'unicast') return range;
    return null;
  }
  const range = addr.range();
  return range === 'unicast' ? null : range;
}

/**
 * Checks one address against the policy: allowed when public, or when the allow-list has it (as a
 * CIDR, or as the exact host:port the request named).
 */
export function checkAddress(
  ip: string,
  port: number,
  allow: ProxyAllowList,
  requestedHost?: string,
): string | null {
  const reason = forbiddenAddressReason(ip);
  if (reason === null) return null;
  const addr = ipaddr.process(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (addressAllowed(allow, addr)) return null;
  if (hostPortAllowed(allow, ip, port)) return null;
  if (requestedHost && hostPortAllowed(allow, requestedHost, port)) return null;
  return reason;
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const defaultResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface SafeDispatcherOptions {
  allow?: ProxyAllowList;
  /** Connect timeout (ms). */
  connectTimeoutMs?: number;
  /** Name resolution (tests inject one). */
  resolve?: Resolver;
}

/**
 * An undici Agent whose connector resolves the name itself, refuses when any resolved address is
 * forbidden, and then connects to the checked address (TLS SNI and certificate checks still use the
 * name). Because the connection goes to the very address that was checked, DNS rebinding between
 * check and connect is impossible.
 */
export function createSafeDispatcher(opts: SafeDispatcherOptions = {}): Agent {
  const allow = opts.allow ?? EMPTY_ALLOW_LIST;
  const resolve = opts.resolve ?? defaultResolver;
  const base = buildConnector({ timeout: opts.connectTimeoutMs ?? 10_000 });
  const connect: buildConnector.connector = (options, callback) => {
    const hostname = options.hostname.replace(/^\[|\]$/g, '');
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    const target = `${hostname}:${port}`;
    const pick = async (): Promise<string> => {
      if (isIP(hostname)) {
        const reason = checkAddress(hostname, port, allow);
        if (reason) throw new ProxyRefusedError(target, reason);
        return hostname;
      }
      const addresses = await resolve(hostname);
      if (addresses.length === 0) throw new ProxyRefusedError(target, 'name does not resolve');
      for (const a of addresses) {
        const reason = checkAddress(a.address, port, allow, hostname);
        if (reason) throw new ProxyRefusedError(target, `${hostname} resolves to ${a.address} (${reason})`);
      }
      return addresses[0].address;
    };
    pick().then(
      (ip) =>
        base(
          {
            ...options,
            hostname: ip,
            servername: options.servername || (isIP(hostname) ? undefined : hostname),
          },
          callback,
        ),
      (err: Error) => callback(err, null),
    );
  };
  return new Agent({ connect });
}

export interface ProxyOptions {
  /** Absolute http(s) URL, already expanded by routing (splat, query). */
  target: string;
  dispatcher: Agent;
  allow?: ProxyAllowList;
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
    if (name === 'cookie') continue;
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
  return out;
}

/** Removes `Domain` from a Set-Cookie so it stays host-only; drops cookies named like the service's. */
export function sanitizeSetCookie(value: string): string | null {
  const [pair, ...attrs] = value.split(';');
  const name = pair.split('=')[0].trim();
  if (!name || name.startsWith(SERVICE_COOKIE_PREFIX)) return null;
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

function refusedByUrl(url: URL, allow: ProxyAllowList): string | null {
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
    const upstream = await request(url, {
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
    const refused = chain.find((e) => e instanceof ProxyRefusedError) as ProxyRefusedError | undefined;
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
          e instanceof undiciErrors.HeadersTimeoutError ||
          e instanceof undiciErrors.BodyTimeoutError ||
          e instanceof undiciErrors.ConnectTimeoutError,
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
