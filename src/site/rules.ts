/**
 * The routing engine: `(request, compiled rules, files) → decision`. Pure and synchronous; the edge
 * does the I/O around it (normalising the path first, reading blobs, proxying, writing responses).
 *
 * Order: firewall → `_redirects`, config `redirects`, config `rewrites` (first match wins) → file
 * resolution (exact → directory index → clean URL → trailing-slash redirects → listing → fallback →
 * nearest 404.html).
 */

import { fillHeaderValue } from './field.ts';
import { headerValue, type RouteRequest, trafficMatches } from './firewall.ts';
import {
  type Captures,
  destinationPath,
  fillDestination,
  matchPattern,
  pathSegments,
  positionCaptures,
} from './match.ts';
import { encodePath, manifestKey, normalisePath, sameSiteLocation } from './path.ts';
import {
  type CompiledRules,
  type HeaderRule,
  type QueryMatcher,
  type RouteConditions,
  type RouteRule,
  RULES_FORMAT,
} from './rule-set.ts';
import type { ManifestEntry } from './types.ts';
import { isWorkerSource, workerClaims } from './worker-routes.ts';

export type { RouteRequest } from './firewall.ts';

export interface ListingEntry {
  name: string;
  kind: 'file' | 'dir';
  entry?: ManifestEntry;
}

/** The version's files. `get` takes a manifest key (no leading slash). */
export interface FileLookup {
  get(key: string): ManifestEntry | undefined;
  /** Does any file live under `dir/`? (`''` is the root.) Needed for listings. */
  hasDir?(dir: string): boolean;
  /** Immediate children of `dir`. Needed for listings. */
  list?(dir: string): ListingEntry[];
}

export type Files = FileLookup | ((key: string) => ManifestEntry | undefined);

/** Response headers from `_headers` and config `headers`. `Set-Cookie` is the only list value. */
export type ResponseHeaders = Record<string, string | string[]>;

interface Common {
  /** A cache-bypass rule matched: answer with `Cache-Control: no-store`. */
  noStore: boolean;
  /** The rule that decided, for logs and debugging (`_redirects:4`, `firewall[0]`, `clean-url`). */
  rule?: string;
}

interface WithHeaders {
  headers: ResponseHeaders;
  /** Header names a `! Name` line removed and nothing re-set: drop platform defaults of that name. */
  removeHeaders: string[];
}

export type Decision =
  | (Common & { type: 'block'; status: number })
  | (Common & { type: 'challenge' })
  | (Common & { type: 'redirect'; status: number; location: string })
  /** A rule would redirect or proxy this request to this very URL: answered with an error. */
  | (Common & { type: 'loop'; location: string })
  | (Common & { type: 'proxy'; url: string; cacheShared: boolean })
  | (Common & WithHeaders & { type: 'file'; entry: ManifestEntry; status: number })
  | (Common & WithHeaders & { type: 'listing'; dir: string; entries: ListingEntry[]; status: number })
  | (Common & WithHeaders & { type: 'notFound'; entry: ManifestEntry | null; status: 404 })
  /** No file answers and the version's functions worker claims the path: the worker answers. */
  | (Common & { type: 'worker' });

/** Files that configure a version and are never served. */
export const COMPILE_INPUTS = new Set(['_redirects', '_headers', 'spaces.jsonc', 'spaces.json']);

/** Compile inputs at the root and dot-files anywhere (except under `/.well-known/`) stay private. */
export function isHiddenKey(key: string): boolean {
  if (COMPILE_INPUTS.has(key)) return true;
  if (key.charCodeAt(0) !== 0x2e && !key.includes('/.')) return false;
  const segs = key.split('/');
  for (let i = 0; i < segs.length; i++) {
    if (segs[i].startsWith('.') && !(i === 0 && segs[i] === '.well-known')) return true;
  }
  return false;
}

/** An in-memory lookup over a manifest, with directory knowledge for listings. */
export function manifestLookup(entries: readonly ManifestEntry[]): Required<FileLookup> {
  const byPath = new Map<string, ManifestEntry>();
  const children = new Map<string, Map<string, ListingEntry>>();
  const kidsOf = (dir: string) => {
    let kids = children.get(dir);
    if (!kids) {
      kids = new Map();
      children.set(dir, kids);
    }
    return kids;
  };
  for (const e of entries) {
    byPath.set(e.path, e);
    const cut = e.path.lastIndexOf('/');
    const name = e.path.slice(cut + 1);
    let dir = cut < 0 ? '' : e.path.slice(0, cut);
    kidsOf(dir).set(name, { name, kind: 'file', entry: e });
    // The directory chain up to the root; a directory already listed in its parent has its chain.
    while (dir !== '') {
      const up = dir.lastIndexOf('/');
      const parent = up < 0 ? '' : dir.slice(0, up);
      const kids = kidsOf(parent);
      const dirName = dir.slice(up + 1);
      if (kids.has(dirName)) break;
      kids.set(dirName, { name: dirName, kind: 'dir' });
      dir = parent;
    }
  }
  return {
    get: (key) => byPath.get(key),
    hasDir: (dir) => children.has(dir),
    list: (dir) =>
      [...(children.get(dir)?.values() ?? [])].sort((a, b) =>
        a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind === 'dir' ? -1 : 1,
      ),
  };
}

/** Extensions of build assets: a missing one is a 404, never the SPA shell (which would be cached). */
const ASSET_EXTENSIONS = new Set(
  'js mjs cjs css map json wasm png jpg jpeg gif svg webp avif ico bmp woff woff2 ttf otf eot mp4 webm mp3 ogg wav pdf zip txt xml'.split(
    ' ',
  ),
);

export function looksLikeAsset(path: string): boolean {
  const last = path.slice(path.lastIndexOf('/') + 1);
  const dot = last.lastIndexOf('.');
  return dot > 0 && ASSET_EXTENSIONS.has(last.slice(dot + 1).toLowerCase());
}

const KNOWN_AGENTS =
  /GPTBot|ChatGPT-User|OAI-SearchBot|ClaudeBot|Claude-User|Claude-Web|anthropic-ai|PerplexityBot|Perplexity-User|Google-Extended|CCBot|Bytespider|Applebot-Extended|cohere-ai|Meta-ExternalAgent|YouBot|DuckAssistBot|MistralAI-User/i;
const SHELL_FETCHERS =
  /^(curl|Wget|HTTPie|xh|python-requests|python-urllib|Python\/|aiohttp|Go-http-client|node-fetch|undici|node|axios|got|libwww-perl|lwp-request|PowerShell|WindowsPowerShell|okhttp|Java\/|Ruby|Deno|Bun)\b/i;

/** `Agent=true`: the client prefers plain text/markdown over HTML, is a known agent, or a shell fetcher. */
export function isAgentRequest(req: RouteRequest): boolean {
  const accept = headerValue(req, 'accept') ?? '';
  if (/text\/(markdown|plain)/i.test(accept) && !/text\/html/i.test(accept)) return true;
  const ua = headerValue(req, 'user-agent');
  if (!ua) return true;
  return KNOWN_AGENTS.test(ua) || SHELL_FETCHERS.test(ua.trim());
}

function acceptedLanguages(req: RouteRequest): string[] {
  const raw = headerValue(req, 'accept-language');
  if (!raw) return [];
  const out: string[] = [];
  for (const part of raw.split(',').slice(0, 32)) {
    const [tag, ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([0-9.]+)/.exec(p)).find(Boolean);
    if (q && Number(q[1]) === 0) continue;
    if (tag && tag !== '*') out.push(tag.trim().toLowerCase());
  }
  return out;
}

function conditionsHold(c: RouteConditions, req: RouteRequest): boolean {
  if (c.country && !(req.country && c.country.includes(req.country.toUpperCase()))) return false;
  if (c.language) {
    const langs = acceptedLanguages(req);
    const hit = c.language.some((l) => langs.some((t) => t === l || t.startsWith(`${l}-`)));
    if (!hit) return false;
  }
  if (c.cookie && !c.cookie.some((name) => Object.hasOwn(req.cookies, name))) return false;
  if (c.agent && !isAgentRequest(req)) return false;
  return true;
}

/** Query matching: the request's parameter names must be exactly the rule's, in any order. */
function matchQuery(matchers: QueryMatcher[], query: URLSearchParams, caps: Captures): boolean {
  const names = new Set(query.keys());
  if (names.size !== matchers.length) return false;
  for (const m of matchers) {
    if (!names.has(m.name)) return false;
    const value = query.getAll(m.name).join(',');
    if (m.cap) caps[m.cap] = value;
    else if (m.value !== value) return false;
  }
  return true;
}

/**
 * The routes of a rule set as this release compiles them. Rules stored by an earlier release carry
 * captures without positions and may take a `?` in a fragment for a query: their destinations are
 * positioned again here (once per rule set), so they are encoded like freshly compiled ones.
 */
export function currentRoutes(rules: CompiledRules): RouteRule[] {
  if (rules.format >= RULES_FORMAT) return rules.routes;
  return rules.routes.map((r) => {
    const { template, hasQuery } = positionCaptures(r.destination, r.source.splat !== null);
    return { ...r, destination: template, destinationHasQuery: hasQuery };
  });
}

interface Prepared {
  routes: RouteRule[];
  exact: Map<string, number[]>;
  dynamic: number[];
}
const prepared = new WeakMap<CompiledRules, Prepared>();

/** Exact-path index over static rules; dynamic rules are always candidates. Built once per rule set. */
function prepare(rules: CompiledRules): Prepared {
  let p = prepared.get(rules);
  if (!p) {
    p = { routes: currentRoutes(rules), exact: new Map(), dynamic: [] };
    p.routes.forEach((r, i) => {
      if (r.staticKey === null) p!.dynamic.push(i);
      else {
        const list = p!.exact.get(r.staticKey);
        if (list) list.push(i);
        else p!.exact.set(r.staticKey, [i]);
      }
    });
    prepared.set(rules, p);
  }
  return p;
}

function candidates(p: Prepared, path: string): number[] {
  const exact = p.exact.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
  if (!exact) return p.dynamic;
  if (p.dynamic.length === 0) return exact;
  // Merge two ascending lists: file order decides.
  const out: number[] = [];
  let a = 0;
  let b = 0;
  while (a < exact.length || b < p.dynamic.length) {
    if (b >= p.dynamic.length || (a < exact.length && exact[a] < p.dynamic[b])) out.push(exact[a++]);
    else out.push(p.dynamic[b++]);
  }
  return out;
}

interface HeaderState {
  values: Map<string, { name: string; values: string[] }>;
  removed: Map<string, string>;
}

function applyHeaderRules(rules: HeaderRule[], path: string, host: string, segs: string[]): HeaderState {
  const st: HeaderState = { values: new Map(), removed: new Map() };
  for (const rule of rules) {
    const caps = matchPattern(rule.source, path, host, segs);
    if (!caps) continue;
    for (const op of rule.ops) {
      const lower = op.name.toLowerCase();
      if (op.remove) {
        st.values.delete(lower);
        st.removed.set(lower, op.name);
      } else {
        // Captures come from the visitor's URL: encoded so they add neither bytes nor parameters.
        const v = fillHeaderValue(op.value ?? [], caps);
        const cur = st.values.get(lower);
        if (cur) cur.values.push(v);
        else st.values.set(lower, { name: op.name, values: [v] });
        st.removed.delete(lower);
      }
    }
  }
  return st;
}

/** Headers for a response on `path` (the original request path): `_headers` wins per name. */
export function computeHeaders(rules: CompiledRules, path: string, host: string): WithHeaders {
  if (rules.fileHeaders.length === 0 && rules.configHeaders.length === 0)
    return { headers: {}, removeHeaders: [] };
  const segs = pathSegments(path);
  const file = applyHeaderRules(rules.fileHeaders, path, host, segs);
  const config = applyHeaderRules(rules.configHeaders, path, host, segs);
  for (const lower of [...file.values.keys(), ...file.removed.keys()]) {
    config.values.delete(lower);
    config.removed.delete(lower);
  }
  const headers: ResponseHeaders = {};
  const removeHeaders: string[] = [];
  for (const st of [config, file]) {
    for (const { name, values } of st.values.values()) {
      headers[name] = name === 'Set-Cookie' ? values : values.join(', ');
    }
    for (const name of st.removed.values()) removeHeaders.push(name);
  }
  return { headers, removeHeaders };
}

function toLookup(files: Files): FileLookup {
  return typeof files === 'function' ? { get: files } : files;
}

/** The engine's view of the files: hidden paths do not exist. */
class View {
  constructor(
    private readonly files: FileLookup,
    private readonly rules: CompiledRules,
  ) {}

  get(key: string): ManifestEntry | undefined {
    if (key === '' || isHiddenKey(key)) return undefined;
    if (this.rules.worker && isWorkerSource(this.rules.worker, key)) return undefined;
    return this.files.get(key);
  }

  indexOf(dirKey: string): ManifestEntry | undefined {
    const index = this.rules.settings.index;
    if (index === false) return undefined;
    return this.get(dirKey === '' ? index : `${dirKey}/${index}`);
  }

  hasDir(dirKey: string): boolean {
    if (dirKey !== '' && isHiddenKey(dirKey)) return false;
    return this.files.hasDir ? this.files.hasDir(dirKey) : false;
  }

  list(dirKey: string): ListingEntry[] {
    const prefix = dirKey === '' ? '' : `${dirKey}/`;
    // A directory holding only hidden files is not shown either (listings are rare; depth is bounded).
    return (this.files.list?.(dirKey) ?? []).filter(
      (e) => !isHiddenKey(prefix + e.name) && (e.kind === 'file' || this.list(prefix + e.name).length > 0),
    );
  }

  /** Resolution without redirects: exact → directory index → clean URL. Used for rewrites too. */
  resolve(path: string): ManifestEntry | undefined {
    const key = manifestKey(path);
    const trailing = path.endsWith('/');
    if (!trailing) {
      const exact = this.get(key);
      if (exact) return exact;
    }
    const index = this.indexOf(key);
    if (index) return index;
    if (!trailing && this.rules.settings.cleanUrls && key !== '') return this.get(`${key}.html`);
    return undefined;
  }
}

/** Append the request's query, before any fragment the destination carries. */
function withQuery(location: string, query: URLSearchParams): string {
  const qs = query.toString();
  if (!qs) return location;
  const hash = location.indexOf('#');
  return hash < 0 ? `${location}?${qs}` : `${location.slice(0, hash)}?${qs}${location.slice(hash)}`;
}

interface Ctx {
  req: RouteRequest;
  rules: CompiledRules;
  view: View;
  noStore: boolean;
}

function fileDecision(ctx: Ctx, entry: ManifestEntry, status: number, rule?: string): Decision {
  return {
    type: 'file',
    entry,
    status,
    ...computeHeaders(ctx.rules, ctx.req.path, ctx.req.host),
    noStore: ctx.noStore,
    ...(rule ? { rule } : {}),
  };
}

/** The nearest `404.html` from the path's directory up to the root. */
function nearest404(view: View, path: string): ManifestEntry | undefined {
  const segs = manifestKey(path).split('/').filter(Boolean);
  if (!path.endsWith('/')) segs.pop();
  for (let n = segs.length; n >= 0; n--) {
    const dir = segs.slice(0, n).join('/');
    const hit = view.get(dir === '' ? '404.html' : `${dir}/404.html`);
    if (hit) return hit;
  }
  return undefined;
}

function notFound(ctx: Ctx, forPath: string, rule?: string): Decision {
  return {
    type: 'notFound',
    entry: nearest404(ctx.view, forPath) ?? null,
    status: 404,
    ...computeHeaders(ctx.rules, ctx.req.path, ctx.req.host),
    noStore: ctx.noStore,
    ...(rule ? { rule } : {}),
  };
}

function platformRedirect(ctx: Ctx, path: string, rule: string): Decision {
  return {
    type: 'redirect',
    status: 301,
    location: withQuery(sameSiteLocation(encodePath(path)), ctx.req.query),
    noStore: ctx.noStore,
    rule,
  };
}

/** Split a filled path destination into a normalised path (for an internal rewrite). */
function internalTarget(dest: string): string | null {
  const n = normalisePath(destinationPath(dest));
  return n.ok ? n.path : null;
}

const AUTHORITY = /^https?:\/\/([^/?#]*)/i;

/** A host without port or trailing dot, lowercased. */
function bareHost(host: string): string {
  return host.toLowerCase().replace(/:\d*$/, '').replace(/\.$/, '');
}

/**
 * Would following `target` (a location or proxy URL) ask for this very request again: the same host
 * (any scheme or port — sources match them all), path and query? The fragment is never sent.
 */
function pointsAtItself(target: string, req: RouteRequest): boolean {
  let rest = target;
  const authority = AUTHORITY.exec(target);
  if (authority) {
    if (bareHost(authority[1]) !== bareHost(req.host)) return false;
    rest = target.slice(authority[0].length);
  }
  const path = destinationPath(rest);
  const n = normalisePath(path === '' ? '/' : path);
  if (!n.ok || n.path !== req.path) return false;
  const q = rest.indexOf('?');
  const hash = rest.indexOf('#');
  const search = q < 0 || (hash >= 0 && hash < q) ? '' : rest.slice(q + 1, hash < 0 ? undefined : hash);
  return new URLSearchParams(search).toString() === req.query.toString();
}

function applyRule(ctx: Ctx, rule: RouteRule, caps: Captures): Decision | null {
  const { req, view } = ctx;
  const dest = fillDestination(rule.destination, caps);
  // A captured value that would move the destination to another host or out of its path.
  if (dest === null) return notFound(ctx, req.path, rule.ref);
  const forward = !rule.destinationHasQuery && !rule.query;
  switch (rule.kind) {
    case 'redirect': {
      const absolute = /^https?:\/\//i.test(dest);
      const base = absolute ? dest : sameSiteLocation(dest);
      const location = forward ? withQuery(base, req.query) : base;
      if (pointsAtItself(location, req)) return { type: 'loop', location, noStore: true, rule: rule.ref };
      return { type: 'redirect', status: rule.status, location, noStore: ctx.noStore, rule: rule.ref };
    }
    case 'proxy': {
      const url = forward ? withQuery(dest, req.query) : dest;
      if (pointsAtItself(url, req)) return { type: 'loop', location: url, noStore: true, rule: rule.ref };
      return { type: 'proxy', url, cacheShared: rule.cacheShared, noStore: ctx.noStore, rule: rule.ref };
    }
    case 'rewrite': {
      const target = internalTarget(dest);
      const entry = target ? view.resolve(target) : undefined;
      if (entry) return fileDecision(ctx, entry, 200, rule.ref);
      return notFound(ctx, target ?? req.path, rule.ref);
    }
    case 'notFound': {
      const target = internalTarget(dest);
      const entry = target ? view.resolve(target) : undefined;
      if (entry) return fileDecision(ctx, entry, 404, rule.ref);
      return notFound(ctx, req.path, rule.ref);
    }
  }
}

/**
 * The URL at which the file `key` is served without a redirect: with clean URLs `dir/index.html` is
 * `/dir/` and `about.html` is `/about` (unless a file literally named `about` answers there).
 */
function canonicalUrl(ctx: Ctx, key: string): string {
  const { settings } = ctx.rules;
  if (settings.cleanUrls && key.endsWith('.html')) {
    const base = key.slice(0, -'.html'.length);
    const slash = base.lastIndexOf('/');
    const name = base.slice(slash + 1);
    const dir = slash >= 0 ? base.slice(0, slash) : '';
    if (settings.index !== false && `${name}.html` === settings.index) return dir === '' ? '/' : `/${dir}/`;
    if (name !== '' && !ctx.view.get(base)) return `/${base}`;
  }
  return `/${key}`;
}

function resolveFiles(ctx: Ctx): Decision {
  const { req, view, rules } = ctx;
  const { settings } = rules;
  const path = req.path;
  const key = manifestKey(path);
  const trailing = path.endsWith('/') && path !== '/';
  const redirects = req.method === 'GET' || req.method === 'HEAD';

  if (path === '/' || trailing) {
    const index = view.indexOf(key);
    if (index) return fileDecision(ctx, index, 200);
    if (trailing && redirects) {
      // `/file.txt/` and, with clean URLs, `/about/` → the URL that serves the file without a
      // redirect of its own (files beat directories there), so this never bounces.
      if (view.get(key)) return platformRedirect(ctx, canonicalUrl(ctx, key), 'trailing-slash');
      if (settings.cleanUrls && view.get(`${key}.html`))
        return platformRedirect(ctx, `/${key}`, 'trailing-slash');
    }
    if (settings.listing && view.hasDir(key)) {
      return {
        type: 'listing',
        dir: path,
        entries: view.list(key),
        status: 200,
        ...computeHeaders(rules, path, req.host),
        noStore: ctx.noStore,
      };
    }
  } else {
    const exact = view.get(key);
    if (exact) {
      if (redirects) {
        const canonical = canonicalUrl(ctx, key);
        if (canonical !== `/${key}`) return platformRedirect(ctx, canonical, 'clean-url');
      }
      return fileDecision(ctx, exact, 200);
    }
    if (settings.cleanUrls) {
      const html = view.get(`${key}.html`);
      if (html) return fileDecision(ctx, html, 200, 'clean-url');
    }
    if (redirects && (view.indexOf(key) || (settings.listing && view.hasDir(key)))) {
      return platformRedirect(ctx, `/${key}/`, 'trailing-slash');
    }
  }

  if (rules.worker && workerClaims(rules.worker, path)) return { type: 'worker', noStore: true };
  const fb = settings.fallback;
  if (fb && !(fb.status >= 200 && fb.status < 300 && looksLikeAsset(path))) {
    const entry = view.resolve(fb.path);
    if (entry) return fileDecision(ctx, entry, fb.status, 'fallback');
  }
  return notFound(ctx, path);
}

/**
 * Decide how to answer a request. `req.path` must come from `normalisePath` (the same string the
 * firewall saw); `files` answers manifest keys.
 */
export function route(req: RouteRequest, compiled: CompiledRules, files: Files): Decision {
  for (let i = 0; i < compiled.firewall.length; i++) {
    const fw = compiled.firewall[i];
    if (!trafficMatches(fw.match, fw.any, req)) continue;
    if (fw.action === 'block') return { type: 'block', status: fw.status, noStore: true, rule: fw.ref };
    if (!req.challengePassed) return { type: 'challenge', noStore: true, rule: fw.ref };
  }
  const noStore = compiled.cacheBypass.some((r) => trafficMatches(r.match, r.any, req));
  const view = new View(toLookup(files), compiled);
  const ctx: Ctx = { req, rules: compiled, view, noStore };

  const p = prepare(compiled);
  let shadowed: boolean | undefined;
  const segs = pathSegments(req.path);
  for (const i of candidates(p, req.path)) {
    const rule = p.routes[i];
    const caps = matchPattern(rule.source, req.path, req.host, segs);
    if (!caps) continue;
    if (rule.query && !matchQuery(rule.query, req.query, caps)) continue;
    if (rule.conditions && !conditionsHold(rule.conditions, req)) continue;
    if ((rule.kind === 'rewrite' || rule.kind === 'notFound') && !rule.force) {
      shadowed ??= view.resolve(req.path) !== undefined;
      if (shadowed) continue;
    }
    const d = applyRule(ctx, rule, caps);
    if (d) return d;
  }
  return resolveFiles(ctx);
}
