import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent, buildConnector } from 'undici';
import { undici } from './undici.ts';

/**
 * The one guard for requests the server makes to addresses a user chose: proxy rewrites
 * (`SPACES_PROXY_ALLOW`) and webhook deliveries (`SPACES_WEBHOOK_ALLOW`). Only public unicast
 * addresses are reachable: loopback, private, link-local (and so the 169.254.169.254 metadata
 * address), CGNAT, multicast, unspecified, reserved and unique-local (fd00:ec2::254) ranges are
 * refused, and IPv6 forms that embed an IPv4 address are judged by that address. Names are resolved
 * by the dispatcher's connector itself, every address must pass, and the connection goes to the
 * address checked (pinned): a name can't rebind between the check and the connect. Decimal, octal
 * and hex IPv4 spellings never get here as such: the WHATWG URL parser turns them into dotted quads.
 */

export class OutboundRefusedError extends Error {
  readonly code = 'OUTBOUND_TARGET_REFUSED';
  constructor(
    readonly target: string,
    readonly reason: string,
  ) {
    super(`target ${target} refused: ${reason}`);
  }
}

export interface AllowList {
  cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  /** `host:port` pairs, host lowercased, IPv6 without brackets. */
  hostPorts: Set<string>;
}

export const EMPTY_ALLOW_LIST: AllowList = { cidrs: [], hostPorts: new Set() };

/**
 * Parses an allow-list (`SPACES_PROXY_ALLOW`, `SPACES_WEBHOOK_ALLOW`): entries separated by commas or whitespace, each a CIDR
 * (`10.0.0.0/8`, `fd00::/8`), a single IP (`10.1.2.3` = /32), or `host:port` (`127.0.0.1:4000`,
 * `[::1]:4000`, `intranet.example:443`). Throws on an entry it can't read.
 */
export function parseAllowList(spec: string | undefined | null, name = 'SPACES_PROXY_ALLOW'): AllowList {
  const list: AllowList = { cidrs: [], hostPorts: new Set() };
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
        throw new Error(`${name}: "${entry}" is not a CIDR range`);
      }
    }
    if (ipaddr.isValid(entry)) {
      const addr = ipaddr.parse(entry);
      list.cidrs.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
      continue;
    }
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry);
    if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535) {
      throw new Error(`${name}: "${entry}" is not a CIDR, an IP address or host:port`);
    }
    let host = (m[1] ?? m[2]).toLowerCase();
    if (ipaddr.isValid(host)) host = ipaddr.process(host).toString();
    list.hostPorts.add(`${host}:${Number(m[3])}`);
  }
  return list;
}

function hostPortAllowed(allow: AllowList, host: string, port: number): boolean {
  if (allow.hostPorts.size === 0) return false;
  let h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(h)) h = ipaddr.process(h).toString();
  return allow.hostPorts.has(`${h}:${port}`);
}

function addressAllowed(allow: AllowList, addr: ipaddr.IPv4 | ipaddr.IPv6): boolean {
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
  allow: AllowList,
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
  allow?: AllowList;
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
  const base = undici().buildConnector({ timeout: opts.connectTimeoutMs ?? 10_000 });
  const connect: buildConnector.connector = (options, callback) => {
    const hostname = options.hostname.replace(/^\[|\]$/g, '');
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    const target = `${hostname}:${port}`;
    const pick = async (): Promise<string> => {
      if (isIP(hostname)) {
        const reason = checkAddress(hostname, port, allow);
        if (reason) throw new OutboundRefusedError(target, reason);
        return hostname;
      }
      const addresses = await resolve(hostname);
      if (addresses.length === 0) throw new OutboundRefusedError(target, 'name does not resolve');
      for (const a of addresses) {
        const reason = checkAddress(a.address, port, allow, hostname);
        if (reason)
          throw new OutboundRefusedError(target, `${hostname} resolves to ${a.address} (${reason})`);
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
  return new (undici().Agent)({ connect });
}

/** An allow-list plus whether plain `http:` targets are allowed (`SPACES_WEBHOOK_ALLOW`'s `http`). */
export interface OutboundPolicy {
  allow: AllowList;
  allowHttp: boolean;
}

/**
 * Parses an allow-list that may also hold the word `http` (plain-HTTP targets allowed), e.g.
 * `SPACES_WEBHOOK_ALLOW=http,127.0.0.1`. Throws naming `name` on an entry it can't read.
 */
export function parseOutboundPolicy(spec: string | undefined | null, name: string): OutboundPolicy {
  const entries = (spec ?? '').split(/[\s,]+/).filter(Boolean);
  const allowHttp = entries.some((e) => e.toLowerCase() === 'http');
  const rest = entries.filter((e) => e.toLowerCase() !== 'http').join(',');
  return { allow: parseAllowList(rest, name), allowHttp };
}

/**
 * Why a URL may not be requested under the policy (null: it may): scheme, credentials, and every
 * address its host resolves to now. The dispatcher checks again at connect time (DNS may change).
 */
export async function refusedUrlReason(
  raw: string,
  policy: OutboundPolicy,
  resolve: Resolver = defaultResolver,
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    return policy.allowHttp ? 'only http(s) URLs can be used' : 'only https URLs can be used';
  }
  if (url.username || url.password) return 'the URL must not carry credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  if (isIP(host)) {
    const reason = checkAddress(host, port, policy.allow);
    return reason ? `${host} is not a public address (${reason})` : null;
  }
  const addresses = await resolve(host).catch(() => []);
  if (addresses.length === 0) return `${host} does not resolve`;
  for (const a of addresses) {
    const reason = checkAddress(a.address, port, policy.allow, host);
    if (reason) return `${host} resolves to ${a.address}, not a public address (${reason})`;
  }
  return null;
}
