/**
 * Traffic matching for firewall and cache-bypass rules (TrafficRuleMatch). Pure: the request's
 * attributes (client IP, country, ASN, TLS fingerprints) are resolved by the edge before routing.
 */
import ipaddr from 'ipaddr.js';
import { wildcardMatch } from './match.ts';
import {
  TRAFFIC_MAP_ATTRIBUTES,
  TRAFFIC_SCALAR_ATTRIBUTES,
  type TrafficClause,
  type TrafficMatch,
  type TrafficScalarAttribute,
  type TrafficValue,
} from './rule-set.ts';

/** What the engine knows about a request. `path` is the normalised path (see `normalisePath`). */
export interface RouteRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** Host name as requested (a port is ignored). */
  host: string;
  /** Lower-case header names. */
  headers: Record<string, string | string[] | undefined>;
  cookies: Record<string, string>;
  ip: string;
  country?: string | null;
  asn?: string | number | null;
  ja3?: string | null;
  ja4?: string | null;
  /** The visitor carries a valid challenge cookie for this host. */
  challengePassed?: boolean;
}

/** Attributes compared without regard to case (after normalisation). */
const CASELESS = new Set<string>(['host', 'method', 'country', 'extension', 'asn']);

export function headerValue(req: RouteRequest, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(', ') : v;
}

function normaliseIp(ip: string): string | undefined {
  try {
    return ipaddr.process(ip).toString();
  } catch {
    return undefined;
  }
}

function normalise(attr: string, value: string): string {
  if (attr === 'asn') return value.replace(/^as/i, '').toLowerCase();
  if (attr === 'extension') return value.replace(/^\./, '').toLowerCase();
  if (attr === 'ip') return normaliseIp(value) ?? value;
  if (attr === 'host') return value.toLowerCase().replace(/\.$/, '');
  return CASELESS.has(attr) ? value.toLowerCase() : value;
}

function scalar(req: RouteRequest, attr: TrafficScalarAttribute): string | undefined {
  switch (attr) {
    case 'path':
      return req.path;
    case 'host':
      return req.host.replace(/:\d+$/, '');
    case 'method':
      return req.method;
    case 'ip':
      return req.ip || undefined;
    case 'country':
      return req.country ?? undefined;
    case 'asn':
      return req.asn === undefined || req.asn === null ? undefined : String(req.asn);
    case 'userAgent':
      return headerValue(req, 'user-agent');
    case 'referer':
      return headerValue(req, 'referer');
    case 'extension': {
      const last = req.path.slice(req.path.lastIndexOf('/') + 1);
      const dot = last.lastIndexOf('.');
      return dot > 0 ? last.slice(dot + 1) : undefined;
    }
    case 'ja3':
      return req.ja3 ?? undefined;
    case 'ja4':
      return req.ja4 ?? undefined;
  }
}

const cidrCache = new Map<string, [ipaddr.IPv4 | ipaddr.IPv6, number] | null>();

/** Parse `10.0.0.0/8` or `2001:db8::/32`; null when invalid. Shared with compile-time validation. */
export function parseCidr(range: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | null {
  let hit = cidrCache.get(range);
  if (hit === undefined) {
    try {
      const parsed = ipaddr.parseCIDR(range.trim());
      // An IPv4-mapped IPv6 range is an IPv4 range.
      if (
        parsed[0].kind() === 'ipv6' &&
        (parsed[0] as ipaddr.IPv6).isIPv4MappedAddress() &&
        parsed[1] >= 96
      ) {
        hit = [(parsed[0] as ipaddr.IPv6).toIPv4Address(), parsed[1] - 96];
      } else hit = parsed;
    } catch {
      hit = null;
    }
    if (cidrCache.size > 4096) cidrCache.clear();
    cidrCache.set(range, hit);
  }
  return hit;
}

function inCidr(ip: string, range: string): boolean {
  const cidr = parseCidr(range);
  if (!cidr) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  if (addr.kind() !== cidr[0].kind()) return false;
  return addr.match(cidr);
}

/** A plain string: `*` → wildcard, `ip` with `/` → CIDR, anything else → exact. */
function stringMatches(attr: string, pattern: string, actual: string | undefined): boolean {
  if (actual === undefined) return false;
  if (attr === 'ip' && pattern.includes('/')) return inCidr(actual, pattern);
  const p = normalise(attr, pattern);
  const a = normalise(attr, actual);
  return pattern.includes('*') ? wildcardMatch(p, a) : p === a;
}

function clauseMatches(attr: string, c: TrafficClause, actual: string | undefined): boolean {
  let res: boolean;
  if (c.op === 'exists') res = actual !== undefined;
  else if (actual === undefined) res = c.op === 'neq';
  else {
    const a = normalise(attr, actual);
    const v = c.value === undefined ? '' : normalise(attr, c.value);
    switch (c.op) {
      case 'eq':
        res = a === v;
        break;
      case 'neq':
        res = a !== v;
        break;
      case 'in':
        res = (c.values ?? []).some((x) => normalise(attr, x) === a);
        break;
      case 'inCidr':
        res = (c.values ?? (c.value !== undefined ? [c.value] : [])).some((r) => inCidr(actual, r));
        break;
      case 'contains':
        res = a.includes(v);
        break;
      case 'startsWith':
        res = a.startsWith(v);
        break;
      case 'endsWith':
        res = a.endsWith(v);
        break;
      case 'wildcard':
        res = wildcardMatch(v, a);
        break;
      default:
        res = false;
    }
  }
  return c.not ? !res : res;
}

export function valueMatches(attr: string, tv: TrafficValue, actual: string | undefined): boolean {
  if (typeof tv === 'string') return stringMatches(attr, tv, actual);
  if (Array.isArray(tv)) return tv.some((s) => stringMatches(attr, s, actual));
  return clauseMatches(attr, tv, actual);
}

/** Evaluate a TrafficRuleMatch; each attribute and each map entry is one field. */
export function trafficMatches(match: TrafficMatch, any: boolean, req: RouteRequest): boolean {
  let fields = 0;
  for (const attr of TRAFFIC_SCALAR_ATTRIBUTES) {
    const tv = match[attr];
    if (tv === undefined) continue;
    fields++;
    const hit = valueMatches(attr, tv, scalar(req, attr));
    if (any && hit) return true;
    if (!any && !hit) return false;
  }
  for (const attr of TRAFFIC_MAP_ATTRIBUTES) {
    const m = match[attr];
    if (!m) continue;
    for (const [name, tv] of Object.entries(m)) {
      fields++;
      let actual: string | undefined;
      if (attr === 'header') actual = headerValue(req, name);
      else if (attr === 'cookie') actual = Object.hasOwn(req.cookies, name) ? req.cookies[name] : undefined;
      else {
        const all = req.query.getAll(name);
        actual = all.length > 0 ? all.join(',') : undefined;
      }
      const hit = valueMatches(attr, tv, actual);
      if (any && hit) return true;
      if (!any && !hit) return false;
    }
  }
  // A match with no fields never fires (compile rejects it anyway).
  return !any && fields > 0;
}
