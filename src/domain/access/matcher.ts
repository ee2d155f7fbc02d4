import ipaddr from 'ipaddr.js';
import { parseCidr } from '../../site/firewall.ts';
import {
  type AccessQuery,
  type Audience,
  type Grant,
  roleCan,
  type ServedTarget,
  type Visitor,
} from './model.ts';
import { type CompiledPaths, compilePaths, matchesEverything, pathsMatch } from './paths.ts';

/**
 * The one access engine (behaviour §3.4). Pure: grants in, the first grant that lets this visitor
 * do this on this path of this target now out. Used by the edge, by `grants/check` and by the
 * config's `access` key (compiled into public grants). Max uses are counted by the store
 * (`GrantRepository.consumeUse`, atomic): the matcher only refuses a grant already used up.
 */

/** Why a grant did not match (the first dimension that failed, in this order). */
export type Miss =
  | 'revoked'
  | 'not_yet_active'
  | 'expired'
  | 'used_up'
  | 'audience'
  | 'target'
  | 'path'
  | 'capability'
  | 'email'
  | 'ip'
  | 'country'
  | 'user_agent';

export interface CompiledGrant {
  grant: Grant;
  paths: CompiledPaths;
  /** `/**` with no exclusions. */
  allPaths: boolean;
  notBefore: number | null;
  expiresAt: number | null;
  ranges: ReturnType<typeof parseCidr>[] | null;
  countryAllow: Set<string> | null;
  countryDeny: Set<string> | null;
  uaDeny: string[] | null;
  emailDomains: Set<string> | null;
}

function instant(s: string | undefined): number | null {
  if (!s) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : t;
}

function upperSet(list: string[] | undefined): Set<string> | null {
  return list?.length ? new Set(list.map((c) => c.toUpperCase())) : null;
}

export function compileGrant(grant: Grant): CompiledGrant {
  const c = grant.constraints;
  const paths = compilePaths(grant.paths);
  return {
    grant,
    paths,
    allPaths: matchesEverything(paths),
    notBefore: instant(c.notBefore),
    expiresAt: instant(c.expiresAt),
    ranges: c.ip?.length ? c.ip.map((r) => parseCidr(r.includes('/') ? r : singleRange(r))) : null,
    countryAllow: upperSet(c.countryAllow),
    countryDeny: upperSet(c.countryDeny),
    uaDeny: c.uaDeny?.length ? c.uaDeny.map((s) => s.toLowerCase()) : null,
    emailDomains: c.emailDomains?.length ? new Set(c.emailDomains.map((d) => d.toLowerCase())) : null,
  };
}

/** `192.0.2.1` → `192.0.2.1/32`, `2001:db8::1` → `…/128`. */
function singleRange(addr: string): string {
  return `${addr}/${addr.includes(':') ? 128 : 32}`;
}

/** Whether an address or range is valid (for validation at write time). */
export function validRange(r: string): boolean {
  return parseCidr(r.includes('/') ? r : singleRange(r)) !== null;
}

function inRanges(ip: string, ranges: NonNullable<CompiledGrant['ranges']>): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  for (const r of ranges) {
    if (r && r[0].kind() === addr.kind() && addr.match(r)) return true;
  }
  return false;
}

export function audienceMatches(a: Audience, v: Visitor): boolean {
  switch (a.type) {
    case 'public':
      return true;
    case 'team':
      return v.teamMember === true;
    case 'person':
      if (a.userId && v.userId === a.userId) return true;
      return !!a.email && !!v.email && a.email.toLowerCase() === v.email.toLowerCase();
    case 'link':
    case 'password':
    case 'machine':
      return !!v.credentials?.some((c) => c.type === a.type && c.id === a.credentialId);
    case 'external':
      return (
        !!v.external && v.external.issuer === a.issuer && (!a.subject || a.subject === v.external.subject)
      );
  }
}

export function targetMatches(target: string, served: ServedTarget): boolean {
  if (target === 'all-versions') return true;
  if (target === 'live') return served.kind === 'live';
  if (target.startsWith('branch:')) return served.kind === 'branch' && served.name === target.slice(7);
  if (target.startsWith('version:')) {
    const id = served.kind === 'version' ? served.id : served.versionId;
    return !!id && id === target.slice(8);
  }
  return false;
}

/** The first dimension on which this grant fails the request; null when it matches every one. */
export function missOf(g: CompiledGrant, v: Visitor, q: AccessQuery): Miss | null {
  const grant = g.grant;
  if (grant.revokedAt) return 'revoked';
  const now = q.now.getTime();
  if (g.notBefore !== null && now < g.notBefore) return 'not_yet_active';
  if (g.expiresAt !== null && now >= g.expiresAt) return 'expired';
  const max = grant.constraints.maxUses;
  if (max !== undefined && grant.uses >= max) return 'used_up';
  if (!audienceMatches(grant.audience, v)) return 'audience';
  if (!targetMatches(grant.target, q.target)) return 'target';
  if (!g.allPaths && !pathsMatch(g.paths, q.path)) return 'path';
  if (!roleCan(grant.role, q.capability)) return 'capability';
  if (grant.constraints.verifiedEmail || g.emailDomains) {
    if (!v.email) return 'email';
    if (grant.constraints.verifiedEmail && !v.emailVerified) return 'email';
    if (g.emailDomains) {
      const domain = v.email.slice(v.email.lastIndexOf('@') + 1).toLowerCase();
      if (!g.emailDomains.has(domain)) return 'email';
    }
  }
  if (g.ranges && (!v.ip || !inRanges(v.ip, g.ranges))) return 'ip';
  if (g.countryAllow && (!v.country || !g.countryAllow.has(v.country.toUpperCase()))) return 'country';
  if (g.countryDeny && v.country && g.countryDeny.has(v.country.toUpperCase())) return 'country';
  if (g.uaDeny) {
    const ua = (v.userAgent ?? '').toLowerCase();
    if (g.uaDeny.some((s) => ua.includes(s))) return 'user_agent';
  }
  return null;
}

export interface AccessDecision {
  allowed: boolean;
  /** The grant that lets the request through (the first, preferring grants without a use limit). */
  grant: Grant | null;
  /** Every grant that matches, in preference order (a used-up one is skipped by the caller). */
  matches: Grant[];
  /** For each grant that did not match, why. */
  misses: { grantId: string; miss: Miss }[];
}

/**
 * Decides a request: grants without a use limit first (a counted use is spent only when nothing
 * free lets the visitor in), then in the order given.
 */
export function decide(grants: readonly CompiledGrant[], v: Visitor, q: AccessQuery): AccessDecision {
  const free: Grant[] = [];
  const counted: Grant[] = [];
  const misses: AccessDecision['misses'] = [];
  for (const g of grants) {
    const miss = missOf(g, v, q);
    if (miss) misses.push({ grantId: g.grant.id, miss });
    else (g.grant.constraints.maxUses === undefined ? free : counted).push(g.grant);
  }
  const matches = [...free, ...counted];
  return { allowed: matches.length > 0, grant: matches[0] ?? null, matches, misses };
}

/** The fast question: does any grant let this visitor in (no reasons collected)? */
export function firstMatch(grants: readonly CompiledGrant[], v: Visitor, q: AccessQuery): Grant | null {
  let counted: Grant | null = null;
  for (const g of grants) {
    if (missOf(g, v, q) !== null) continue;
    if (g.grant.constraints.maxUses === undefined) return g.grant;
    counted ??= g.grant;
  }
  return counted;
}
