import type { HostTarget, SiteSpace } from '../domain/hosts/resolve.ts';
import { applyOverlay, compileSite, recompileWithConfig } from '../site/compile.ts';
import { locationValue } from '../site/field.ts';
import type { CompiledRules } from '../site/rule-set.ts';
import { type Decision, type RouteRequest, route } from '../site/rules.ts';
import type { ManifestEntry } from '../site/types.ts';
import { buildInjection, type Injection } from './inject.ts';
import { ByteLru, stringBytes } from './lru.ts';
import type { ServeFileOptions } from './respond.ts';
import type { ServableVersion } from './versions.ts';

/**
 * The edge's decision code, shared by the full path (edge.ts) and the fast lane (`SiteEdge.fast`):
 * which version a site target serves, the effective rules (the version's, with the space's overlay),
 * the routing decision, and the answers remembered for rules that decide from host and URL alone.
 */

export interface Effective {
  /** `<versionId>|<overlay key>`: what the rules and injection were built from. */
  key: string;
  rules: CompiledRules;
  injection: Injection;
  /** The effective settings (version file + overlay), for team-tag rendering. */
  config: Record<string, unknown> | null;
  /** The routing decision depends only on host, method class and URL: see {@link memoisable}. */
  memoisable: boolean;
  /** Team-tag render settings last used with these rules (kept: the lane asks on every HTML page). */
  tagSettings?: { teamId: string; config: never };
  /**
   * Routing answers remembered under these rules: robots flag → hostname → URL → answer. They live
   * and go with the rule set (its cache entry counts their bytes).
   */
  memo?: [Map<string, Map<string, Memo>>, Map<string, Map<string, Memo>>];
  /** Estimated bytes of the remembered answers. */
  memoBytes?: number;
  /** Set when the rule set left the cache: it remembers nothing more (a version may still hold it). */
  evicted?: boolean;
}

/** A routing answer remembered for a (rules, robots, host, URL): a file to serve or a redirect. */
export type Memo =
  | {
      type: 'file';
      entry: ManifestEntry;
      status: number;
      headers: Record<string, string | string[]>;
      /** The responder's options for this answer, built on first use (a memo lives under one version). */
      serve?: ServeFileOptions;
    }
  | { type: 'redirect'; status: number; headers: Record<string, string> };

/** Longest URL whose routing answer is remembered. */
export const MEMO_MAX_URL = 1024;
/** Estimated bytes of one remembered answer besides its host and URL (maps, memo, header object). */
const MEMO_BYTES = 320;

export type SiteTarget = HostTarget & { kind: 'site' };

/** Preview and version hostnames, and spaces that ask for it, are not to be indexed. */
export function noindexOf(target: SiteTarget, space: SiteSpace): boolean {
  return target.versionId !== null || target.channel !== 'live' || space.noindex;
}

/** The version a site hostname serves: the pinned one, or its channel's. */
export function versionIdOf(target: SiteTarget, space: SiteSpace): string | null {
  return target.versionId ?? space.channels[target.channel] ?? null;
}

/** Service paths (`/__/…`, `/__service/…`): answered by the edge itself, never by the rules. */
export function isServicePath(path: string): boolean {
  return path.charCodeAt(1) === 0x5f && path.charCodeAt(2) === 0x5f;
}

/**
 * Whether every routing decision under these rules is a pure function of (host, URL, GET/HEAD): no
 * firewall (client IP, headers, challenge cookie), no cache-bypass rules (traffic attributes) and no
 * `_redirects` conditions (country, language, cookie, agent). Query-dependent rules are fine: the
 * query is part of the memo key.
 */
export function memoisable(rules: CompiledRules): boolean {
  return (
    rules.firewall.length === 0 &&
    rules.cacheBypass.length === 0 &&
    rules.routes.every((r) => r.conditions === null || r.conditions === undefined)
  );
}

/**
 * Effective rules and remembered routing answers, for the whole edge. Versions are immutable and the
 * effective set changes with the overlay, so remembered answers never go stale. Rule sets are an LRU
 * bounded by bytes (see budget.ts), each counting the answers remembered under it; one rule set's
 * answers are dropped together when they alone pass an eighth of the bound (a site with endless
 * query strings does not push every other site out).
 */
export class Decider {
  private readonly effectiveCache: ByteLru<string, Effective>;
  /** The effective rule set last used per version object, for the overlay key it was made with. */
  private readonly lastEffective = new WeakMap<ServableVersion, { overlayKey: string; eff: Effective }>();

  constructor(maxBytes = 16 * 1024 * 1024) {
    this.effectiveCache = new ByteLru(maxBytes, (_key, eff) => {
      eff.evicted = true;
      eff.memo = undefined;
    });
  }

  stats(): { entries: number; bytes: number; maxBytes: number } {
    const c = this.effectiveCache;
    return { entries: c.size, bytes: c.bytes, maxBytes: c.maxBytes };
  }

  effective(v: ServableVersion, space: SiteSpace): Effective {
    const overlayKey = space.overlay ? space.overlayKey : '-';
    // The hot path: the same version object with the same overlay as last time (no key string).
    const last = this.lastEffective.get(v);
    if (last !== undefined && last.overlayKey === overlayKey && !last.eff.evicted) {
      this.effectiveCache.get(last.eff.key);
      return last.eff;
    }
    const key = `${v.id}|${overlayKey}`;
    let e = this.effectiveCache.get(key);
    if (e) {
      this.lastEffective.set(v, { overlayKey, eff: e });
      return e;
    }
    const config = applyOverlay(v.config, space.overlay) as Record<string, unknown> | null;
    let rules = v.rules as CompiledRules | null;
    let bytes = 512 + stringBytes(key);
    if (!rules) {
      rules = compileSite({ files: v.entries, config }).rules;
      bytes += 3 * stringBytes(JSON.stringify(rules));
    } else if (space.overlay) {
      const worker = rules.worker;
      rules = recompileWithConfig(rules, { files: v.entries, config }).rules;
      if (worker) rules = { ...rules, worker };
      bytes += 3 * stringBytes(JSON.stringify(rules));
    }
    // Without an overlay the rules are the version's own object (counted with the version).
    if (config && config !== v.config) bytes += 3 * stringBytes(JSON.stringify(config));
    e = { key, rules, injection: buildInjection(config as never), config, memoisable: memoisable(rules) };
    bytes += 2 * (e.injection.head.length + e.injection.bodyStart.length + e.injection.bodyEnd.length);
    if (!this.effectiveCache.set(key, e, bytes)) e.evicted = true;
    this.lastEffective.set(v, { overlayKey, eff: e });
    return e;
  }

  /** Whether answers for this request may be remembered: memoisable rules, GET/HEAD, a short URL. */
  memoises(eff: Effective, method: string, url: string): boolean {
    return eff.memoisable && (method === 'GET' || method === 'HEAD') && url.length <= MEMO_MAX_URL;
  }

  /** The answer remembered for this (rules, robots, host, URL), if any. */
  remembered(eff: Effective, noindex: boolean, hostname: string, url: string): Memo | undefined {
    return eff.memo?.[noindex ? 1 : 0].get(hostname)?.get(url);
  }

  /**
   * Routes a request and, when `memoise`, remembers a rememberable answer (a redirect or a file) for
   * its (rules, robots, host, URL). Returns the decision and that answer (null when there is none).
   */
  decide(
    rr: RouteRequest,
    eff: Effective,
    version: ServableVersion,
    noindex: boolean,
    url: string,
    memoise: boolean,
  ): { decision: Decision; answer: Memo | null } {
    const decision = route(rr, eff.rules, version.files);
    const answer = memoOf(decision, noindex);
    if (answer && memoise) this.remember(eff, noindex, rr.host, url, answer);
    return { decision, answer };
  }

  private remember(eff: Effective, noindex: boolean, hostname: string, url: string, memo: Memo): void {
    if (eff.evicted) return;
    const cap = this.effectiveCache.maxBytes >> 3;
    if (eff.memo === undefined || (eff.memoBytes ?? 0) > cap) {
      if (eff.memoBytes) this.effectiveCache.grow(eff.key, -eff.memoBytes);
      eff.memo = [new Map(), new Map()];
      eff.memoBytes = 0;
    }
    const hosts = eff.memo[noindex ? 1 : 0];
    let urls = hosts.get(hostname);
    let bytes = 0;
    if (!urls) {
      urls = new Map();
      hosts.set(hostname, urls);
      bytes += 64 + stringBytes(hostname);
    }
    if (!urls.has(url)) bytes += MEMO_BYTES + stringBytes(url);
    urls.set(url, memo);
    if (bytes > 0) {
      eff.memoBytes = (eff.memoBytes ?? 0) + bytes;
      this.effectiveCache.grow(eff.key, bytes);
    }
  }
}

/**
 * The rememberable answer of a routing decision: a redirect, or a file (a custom 404 page included)
 * with its response headers. `null` for everything else (blocks, challenges, proxies, listings,
 * system 404 pages), which is answered per request.
 */
function memoOf(d: Decision, noindex: boolean): Memo | null {
  if (d.type === 'redirect') {
    return {
      type: 'redirect',
      status: d.status,
      headers: {
        // Rules build ASCII locations; this holds for rules stored before that and for any capture.
        location: locationValue(d.location),
        'cache-control': d.noStore ? 'no-store' : 'no-cache',
        ...robotsHeaders(noindex),
      },
    };
  }
  if ((d.type === 'file' || d.type === 'notFound') && d.entry) {
    const headers: Record<string, string | string[]> = { ...d.headers, ...robotsHeaders(noindex) };
    for (const name of d.removeHeaders) delete headers[name];
    if (d.noStore) headers['Cache-Control'] = 'no-store';
    return { type: 'file', entry: d.entry, status: d.status, headers };
  }
  return null;
}

/** `X-Robots-Tag: noindex` for preview/version hostnames and noindex spaces (a fresh object each time). */
export function robotsHeaders(noindex: boolean): Record<string, string> {
  return noindex ? { 'X-Robots-Tag': 'noindex' } : {};
}
