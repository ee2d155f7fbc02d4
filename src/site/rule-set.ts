/**
 * The compiled routing rules of a version: plain JSON-serialisable data, written once at finalize
 * (stored with the version and cached by the edge) and read on every request by `route()`.
 */
import type { PathPattern, Template } from './match.ts';
import type { WorkerClaims } from './worker-routes.ts';

export interface QueryMatcher {
  name: string;
  /** Capture name (`q=:term`); when absent, `value` must match exactly. */
  cap?: string;
  value?: string;
}

/** `_redirects` conditions: AND across keys, OR within a key's values. */
export interface RouteConditions {
  country?: string[];
  language?: string[];
  cookie?: string[];
  agent?: boolean;
}

export type RouteKind = 'redirect' | 'rewrite' | 'proxy' | 'notFound';

export interface RouteRule {
  /** Where the rule came from: `_redirects:12`, `redirects[0]`, `rewrites[3]`. */
  ref: string;
  kind: RouteKind;
  status: number;
  force: boolean;
  source: PathPattern;
  /** Exact path (no trailing slash) of a static rule, used for the exact-path index. */
  staticKey: string | null;
  /** Query matchers; null when the rule does not look at the query. */
  query: QueryMatcher[] | null;
  /**
   * Split at its captures, each marked with the part of the URL it lands in (see
   * `positionCaptures`): the position decides how the captured value is encoded.
   */
  destination: Template;
  /** The destination carries its own query string (the request's is then not forwarded). */
  destinationHasQuery: boolean;
  conditions: RouteConditions | null;
  /** Proxy responses may be stored by shared caches (`cache=shared`). */
  cacheShared: boolean;
}

export interface HeaderOp {
  /** Canonical header name (`X-Frame-Options`). */
  name: string;
  /** Value template (captures of the matcher expand); absent for a removal. */
  value?: Template;
  remove?: boolean;
}

export interface HeaderRule {
  ref: string;
  source: PathPattern;
  ops: HeaderOp[];
}

export type TrafficClauseOp =
  | 'eq'
  | 'neq'
  | 'in'
  | 'inCidr'
  | 'contains'
  | 'startsWith'
  | 'endsWith'
  | 'wildcard'
  | 'exists';

export interface TrafficClause {
  op: TrafficClauseOp;
  value?: string;
  values?: string[];
  not?: boolean;
}

export type TrafficValue = string | string[] | TrafficClause;

export const TRAFFIC_SCALAR_ATTRIBUTES = [
  'path',
  'host',
  'method',
  'ip',
  'country',
  'asn',
  'userAgent',
  'referer',
  'extension',
  'ja3',
  'ja4',
] as const;
export const TRAFFIC_MAP_ATTRIBUTES = ['header', 'cookie', 'query'] as const;

export type TrafficScalarAttribute = (typeof TRAFFIC_SCALAR_ATTRIBUTES)[number];
export type TrafficMapAttribute = (typeof TRAFFIC_MAP_ATTRIBUTES)[number];

export type TrafficMatch = Partial<Record<TrafficScalarAttribute, TrafficValue>> &
  Partial<Record<TrafficMapAttribute, Record<string, TrafficValue>>>;

export interface FirewallRule {
  ref: string;
  name: string | null;
  action: 'block' | 'challenge';
  status: number;
  match: TrafficMatch;
  any: boolean;
}

export interface CacheBypassRule {
  ref: string;
  name: string | null;
  match: TrafficMatch;
  any: boolean;
}

export interface FallbackSetting {
  /** Normalised absolute path of the fallback file (`/index.html`). */
  path: string;
  status: number;
}

export interface ServeSettings {
  /** Directory index file name, or false when index resolution is off. */
  index: string | false;
  cleanUrls: boolean;
  listing: boolean;
  /** null: the nearest `404.html` up the tree. */
  fallback: FallbackSetting | null;
}

/**
 * 2: destinations carry capture positions and `destinationHasQuery` ignores a `?` in the fragment.
 * Rules stored by format 1 are brought up to date when loaded (`currentRoutes`).
 */
export const RULES_FORMAT = 2;

export interface CompiledRules {
  format: number;
  /** `_redirects` rules first, then config `redirects`, then config `rewrites`. */
  routes: RouteRule[];
  /** `_headers` blocks; they win over config headers for the same name. */
  fileHeaders: HeaderRule[];
  configHeaders: HeaderRule[];
  firewall: FirewallRule[];
  cacheBypass: CacheBypassRule[];
  settings: ServeSettings;
  /** The version's functions worker: the paths it claims and its private sources (issue 26). */
  worker?: WorkerClaims;
}

/** Base routing-rule caps per publish (`_redirects` plus config redirects and rewrites). */
export const DEFAULT_RULE_LIMITS = { staticRules: 2000, dynamicRules: 100 } as const;
export type RuleLimits = { staticRules: number; dynamicRules: number };
