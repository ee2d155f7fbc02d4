/**
 * Finalize-time compilation of a version's routing: `_redirects`, `_headers` and the config file's
 * serving keys become one `CompiledRules` value (plain JSON) plus diagnostics. Error diagnostics make
 * the publish fail; warnings are reported and the rule set still serves.
 */

import { parseCidr } from './firewall.ts';
import { buildHeaderOp, compileHeaderSource, parseHeadersFile } from './headers-file.ts';
import type { HostLabel, PathPattern } from './match.ts';
import { normalisePath } from './path.ts';
import { buildRouteRule, type Diag, parseRedirectsFile, type TemplateVars } from './redirects-file.ts';
import {
  type CacheBypassRule,
  type CompiledRules,
  DEFAULT_RULE_LIMITS,
  type FallbackSetting,
  type FirewallRule,
  type HeaderOp,
  type HeaderRule,
  type QueryMatcher,
  type RouteRule,
  RULES_FORMAT,
  type RuleLimits,
  type ServeSettings,
  TRAFFIC_MAP_ATTRIBUTES,
  TRAFFIC_SCALAR_ATTRIBUTES,
  type TrafficMatch,
  type TrafficValue,
} from './rule-set.ts';
import { currentRoutes, manifestLookup, type RouteRequest, route } from './rules.ts';
import type { CompileDiagnostic, ManifestEntry } from './types.ts';

type TrafficMatchLike = Record<string, unknown>;

/**
 * The serving keys of a SpaceConfig, typed loosely: the TypeBox schema validates the whole document
 * elsewhere; here every value is checked again before it becomes a rule.
 */
export interface SpaceConfigLike {
  index?: string | false;
  fallback?: string | { path: string; status: number };
  cleanUrls?: boolean;
  listing?: boolean;
  redirects?: Array<{
    source: string;
    destination: string;
    status?: number;
    force?: boolean;
    query?: Record<string, string>;
  }>;
  rewrites?: Array<{
    source: string;
    destination: string;
    cache?: string;
    force?: boolean;
    query?: Record<string, string>;
    notFound?: boolean;
  }>;
  headers?: Array<{ source: string; headers: Array<{ key: string; value?: string; remove?: boolean }> }>;
  firewall?: Array<{
    name?: string;
    description?: string;
    action: 'block' | 'challenge';
    status?: number;
    match: TrafficMatchLike;
    any?: boolean;
  }>;
  cache?: { bypass?: Array<{ name?: string; description?: string; match: TrafficMatchLike; any?: boolean }> };
  [key: string]: unknown;
}

export interface CompileInput {
  files: readonly ManifestEntry[];
  redirectsText?: string | null;
  headersText?: string | null;
  config?: SpaceConfigLike | null;
  /** Non-secret variables for `{{ vars.NAME }}` in destinations. */
  vars?: Record<string, string>;
  /** Secret variable names: referencing one is an error. */
  secretNames?: readonly string[];
  /** Routing-rule caps of the plan; default 2,000 static + 100 dynamic. */
  limits?: RuleLimits;
  /** Name of the config file, for diagnostic paths (`spaces.jsonc`). */
  configPath?: string;
  /**
   * Direct publishes: a root `_shell.html` becomes the SPA fallback (200) when the config names no
   * fallback of its own.
   */
  detectShell?: boolean;
  /**
   * Is this hostname one of the space's own (`<name>.<base>`, its channel and version hostnames,
   * custom domains)? Redirects and proxies to these are followed by the loop check like relative
   * ones, as this version may serve on any of them. Without it only relative chains are followed.
   */
  isOwnHost?: (hostname: string) => boolean;
}

export interface CompileResult {
  rules: CompiledRules;
  diagnostics: CompileDiagnostic[];
  /** False when any diagnostic is an error: the version must not go live with these inputs. */
  ok: boolean;
}

/** The settings overlay replaces whole top-level keys of the version's config file. */
export function applyOverlay(
  fileConfig: SpaceConfigLike | null | undefined,
  overlay: SpaceConfigLike | null | undefined,
): SpaceConfigLike | null {
  if (!fileConfig && !overlay) return null;
  const out: SpaceConfigLike = { ...(fileConfig ?? {}) };
  for (const [k, v] of Object.entries(overlay ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

function configDiag(diagnostics: CompileDiagnostic[], configPath: string, pointer: string): Diag {
  return (code, message, extra) =>
    diagnostics.push({
      code,
      severity: 'error',
      message,
      path: configPath,
      ...extra,
      details: { pointer, ...(extra?.details ?? {}) },
    });
}

function compileSettings(
  config: SpaceConfigLike | null,
  files: readonly ManifestEntry[],
  diag: (p: string) => Diag,
): ServeSettings {
  let index: string | false = 'index.html';
  if (config?.index === false) index = false;
  else if (config?.index !== undefined) {
    if (typeof config.index !== 'string' || !/^[^/\\]+$/.test(config.index) || config.index.startsWith('.')) {
      diag('/index')('config_invalid', '`index` is a file name such as `index.html`, or false.');
    } else index = config.index.normalize('NFC');
  }
  let fallback: FallbackSetting | null = null;
  if (config?.fallback !== undefined) {
    const raw = config.fallback;
    const path = typeof raw === 'string' ? raw : raw?.path;
    const status = typeof raw === 'string' ? 200 : raw?.status;
    const n = typeof path === 'string' ? normalisePath(path.startsWith('/') ? path : `/${path}`) : null;
    if (!n?.ok || typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
      diag('/fallback')(
        'config_invalid',
        '`fallback` is a path or `{ path, status }` with a status of 100..599.',
      );
    } else if (status >= 300 && status < 400) {
      diag('/fallback')(
        'config_invalid',
        'A fallback serves a file; a 3xx status needs a redirect rule instead.',
      );
    } else {
      fallback = { path: n.path, status };
      const key = n.path.replace(/^\//, '');
      if (!files.some((f) => f.path === key || f.path === `${key.replace(/\/$/, '')}/index.html`)) {
        diag('/fallback')('fallback_file_missing', `The fallback \`${n.path}\` is not in this version.`, {
          severity: 'warning',
          fix: 'Add the file, or fix the path; until then missing pages get the nearest 404.html.',
        });
      }
    }
  }
  let cleanUrls = !(fallback && fallback.status === 200);
  if (config?.cleanUrls !== undefined) {
    if (typeof config.cleanUrls !== 'boolean')
      diag('/cleanUrls')('config_invalid', '`cleanUrls` is a boolean.');
    else cleanUrls = config.cleanUrls;
  }
  let listing = false;
  if (config?.listing !== undefined) {
    if (typeof config.listing !== 'boolean') diag('/listing')('config_invalid', '`listing` is a boolean.');
    else listing = config.listing;
  }
  return { index, cleanUrls, listing, fallback };
}

function configQuery(q: Record<string, string> | undefined, diag: Diag): QueryMatcher[] | null | false {
  if (q === undefined) return null;
  if (typeof q !== 'object' || q === null) {
    diag('redirect_query_invalid', '`query` maps parameter names to capture names.');
    return false;
  }
  const out: QueryMatcher[] = [];
  for (const [name, capRaw] of Object.entries(q)) {
    const cap = String(capRaw).replace(/^:/, '');
    if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name) || !/^[A-Za-z][A-Za-z0-9_]*$/.test(cap)) {
      diag('redirect_query_invalid', `\`${name}\` → \`${capRaw}\`: names and captures start with a letter.`);
      return false;
    }
    out.push({ name, cap });
  }
  return out;
}

function compileConfigRoutes(
  config: SpaceConfigLike | null,
  tv: TemplateVars,
  d: (p: string) => Diag,
): RouteRule[] {
  const out: RouteRule[] = [];
  (Array.isArray(config?.redirects) ? config.redirects : []).forEach((r, i) => {
    const diag = d(`/redirects/${i}`);
    const query = configQuery(r.query, diag);
    if (query === false) return;
    const rule = buildRouteRule(
      {
        ref: `redirects[${i}]`,
        source: String(r.source ?? ''),
        destination: r.destination,
        status: r.status ?? 302,
        force: r.force === true,
        query,
        conditions: null,
        cacheShared: false,
        origin: 'redirects',
      },
      tv,
      diag,
    );
    if (rule) out.push(rule);
  });
  (Array.isArray(config?.rewrites) ? config.rewrites : []).forEach((r, i) => {
    const diag = d(`/rewrites/${i}`);
    const query = configQuery(r.query, diag);
    if (query === false) return;
    if (r.cache !== undefined && r.cache !== 'shared') {
      diag('redirect_cache_invalid', '`cache` takes `shared`.');
      return;
    }
    const rule = buildRouteRule(
      {
        ref: `rewrites[${i}]`,
        source: String(r.source ?? ''),
        destination: r.destination,
        status: r.notFound ? 404 : 200,
        force: r.force === true,
        query,
        conditions: null,
        cacheShared: r.cache === 'shared',
        notFound: r.notFound === true,
        origin: 'rewrites',
      },
      tv,
      diag,
    );
    if (rule) out.push(rule);
  });
  return out;
}

function compileConfigHeaders(config: SpaceConfigLike | null, d: (p: string) => Diag): HeaderRule[] {
  const out: HeaderRule[] = [];
  (Array.isArray(config?.headers) ? config.headers : []).forEach((h, i) => {
    const diag = d(`/headers/${i}`);
    const source = compileHeaderSource(String(h.source ?? ''), diag);
    if (!source) return;
    const ops: HeaderOp[] = [];
    (Array.isArray(h.headers) ? h.headers : []).forEach((entry, j) => {
      const at = `/headers/${i}/headers/${j}`;
      if (entry.remove === true) {
        const op = buildHeaderOp(String(entry.key ?? ''), null, source, d(`${at}/key`));
        if (op) ops.push(op);
      } else if (typeof entry.value === 'string') {
        const op = buildHeaderOp(
          String(entry.key ?? ''),
          entry.value,
          source,
          d(`${at}/key`),
          d(`${at}/value`),
        );
        if (op) ops.push(op);
      } else d(at)('config_invalid', 'A header entry is `{ key, value }` or `{ key, remove: true }`.');
    });
    if (ops.length > 0) out.push({ ref: `headers[${i}]`, source, ops });
  });
  return out;
}

const OPS = new Set([
  'eq',
  'neq',
  'in',
  'inCidr',
  'contains',
  'startsWith',
  'endsWith',
  'wildcard',
  'exists',
]);

function checkTrafficValue(attr: string, v: unknown, diag: Diag): v is TrafficValue {
  const bad = (msg: string) => {
    diag('config_invalid', msg);
    return false;
  };
  if (typeof v === 'string') {
    if (attr === 'ip' && v.includes('/') && !parseCidr(v)) return bad(`\`${v}\` is not a CIDR range.`);
    return true;
  }
  if (Array.isArray(v)) {
    if (v.length === 0 || !v.every((x) => typeof x === 'string')) return bad('A value list holds strings.');
    return v.every((x) => checkTrafficValue(attr, x, diag));
  }
  if (typeof v !== 'object' || v === null) return bad('A match value is a string, a list or a clause.');
  const c = v as Record<string, unknown>;
  if (typeof c.op !== 'string' || !OPS.has(c.op)) return bad(`\`op\` is one of ${[...OPS].join(', ')}.`);
  if (c.not !== undefined && typeof c.not !== 'boolean') return bad('`not` is a boolean.');
  if (c.op === 'in' || c.op === 'inCidr') {
    const values = c.values ?? (typeof c.value === 'string' ? [c.value] : undefined);
    if (!Array.isArray(values) || values.length === 0 || !values.every((x) => typeof x === 'string')) {
      return bad(`\`${c.op}\` needs \`values\`.`);
    }
    if (c.op === 'inCidr' && !values.every((x) => parseCidr(x as string))) {
      return bad('`inCidr` values are CIDR ranges such as `10.0.0.0/8`.');
    }
  } else if (c.op !== 'exists' && typeof c.value !== 'string')
    return bad(`\`${c.op}\` needs a string \`value\`.`);
  return true;
}

function checkTrafficMatch(m: unknown, diag: (p: string) => Diag, base: string): TrafficMatch | null {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    diag(base)('config_invalid', '`match` is an object of attributes.');
    return null;
  }
  const out: Record<string, unknown> = {};
  let ok = true;
  let fields = 0;
  for (const [k, v] of Object.entries(m)) {
    const p = `${base}/${k}`;
    if ((TRAFFIC_SCALAR_ATTRIBUTES as readonly string[]).includes(k)) {
      fields++;
      if (checkTrafficValue(k, v, diag(p))) out[k] = v;
      else ok = false;
    } else if ((TRAFFIC_MAP_ATTRIBUTES as readonly string[]).includes(k)) {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        diag(p)('config_invalid', `\`${k}\` maps names to match values.`);
        ok = false;
        continue;
      }
      const entries: Record<string, TrafficValue> = {};
      for (const [name, tv] of Object.entries(v)) {
        fields++;
        if (checkTrafficValue(k, tv, diag(`${p}/${name}`)))
          entries[k === 'header' ? name.toLowerCase() : name] = tv;
        else ok = false;
      }
      out[k] = entries;
    } else {
      diag(p)('config_invalid', `\`${k}\` is not a match attribute.`);
      ok = false;
    }
  }
  if (fields === 0) {
    diag(base)('config_invalid', '`match` needs at least one attribute.');
    return null;
  }
  return ok ? (out as TrafficMatch) : null;
}

function ruleName(name: unknown, diag: Diag): string | null | false {
  if (name === undefined) return null;
  if (typeof name !== 'string' || !/^[a-z0-9_-]{1,61}$/.test(name)) {
    diag('config_invalid', 'A rule name is up to 61 lowercase letters, digits, `-` or `_`.');
    return false;
  }
  return name;
}

function compileTraffic(config: SpaceConfigLike | null, d: (p: string) => Diag) {
  const firewall: FirewallRule[] = [];
  (Array.isArray(config?.firewall) ? config.firewall : []).forEach((r, i) => {
    const base = `/firewall/${i}`;
    const name = ruleName(r.name, d(`${base}/name`));
    if (r.action !== 'block' && r.action !== 'challenge') {
      d(`${base}/action`)('config_invalid', '`action` is `block` or `challenge`.');
      return;
    }
    const status = r.status ?? 403;
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      d(`${base}/status`)('config_invalid', 'A block status is 400..599.');
      return;
    }
    const match = checkTrafficMatch(r.match, d, `${base}/match`);
    if (!match || name === false) return;
    firewall.push({ ref: `firewall[${i}]`, name, action: r.action, status, match, any: r.any === true });
  });
  const cacheBypass: CacheBypassRule[] = [];
  const bypass = Array.isArray(config?.cache?.bypass) ? config.cache.bypass : [];
  if (bypass.length > 50) d('/cache/bypass')('config_invalid', 'At most 50 cache-bypass rules.');
  bypass.slice(0, 50).forEach((r, i) => {
    const base = `/cache/bypass/${i}`;
    const name = ruleName(r.name, d(`${base}/name`));
    const match = checkTrafficMatch(r.match, d, `${base}/match`);
    if (!match || name === false) return;
    cacheBypass.push({ ref: `cache.bypass[${i}]`, name, match, any: r.any === true });
  });
  return { firewall, cacheBypass };
}

function sampleHost(p: PathPattern): string {
  if (!p.host) return 'site.invalid';
  const labels = p.host.labels.map((l: HostLabel) =>
    'lit' in l ? l.lit : 'glob' in l ? l.glob.replace(/\*/g, 'x') : 'x',
  );
  return `${p.host.leadingWildcard ? 'x.' : ''}${labels.join('.')}`;
}

function samplePath(p: PathPattern): string {
  const segs = p.segments.map((s) => ('lit' in s ? s.lit : 'x'));
  if (p.splat) segs.push(`${p.splat.prefix}x`);
  return `/${segs.join('/')}`;
}

const MAX_HOPS = 10;

function loopDiagnostic(rule: RouteRule, chain: string[], message: string, fix: string): CompileDiagnostic {
  return {
    code: 'redirect_loop',
    severity: 'error',
    message,
    path: rule.ref.startsWith('_redirects:') ? rule.ref : null,
    details: { rule: rule.ref, chain },
    fix,
  };
}

/**
 * Follow each redirect (and proxy) rule from a request it matches, through the real engine (rules,
 * clean URLs, trailing-slash redirects), and report the rule when the chain comes back to a URL it
 * visited. Hops to the space's own hostnames (`isOwnHost`) are followed too: a URL there is served
 * by these same rules. Hosts compare without scheme or port, as sources match any of them.
 */
function findLoops(
  rules: CompiledRules,
  files: readonly ManifestEntry[],
  isOwnHost: ((hostname: string) => boolean) | undefined,
): CompileDiagnostic[] {
  // No rule that sends the visitor anywhere, no loop: the file index (all of a big site's
  // directories) is not needed.
  const starts = rules.routes.filter((r) => r.kind === 'redirect' || (r.kind === 'proxy' && isOwnHost));
  if (starts.length === 0) return [];
  const lookup = manifestLookup(files);
  const probe: CompiledRules = { ...rules, firewall: [], cacheBypass: [] };
  const out: CompileDiagnostic[] = [];
  const narrow =
    'Point the destination at a URL that serves content, or narrow the source so the destination does not match it.';
  for (const rule of starts) {
    const c = rule.conditions;
    let req: RouteRequest = {
      method: 'GET',
      path: samplePath(rule.source),
      query: new URLSearchParams((rule.query ?? []).map((q) => [q.name, q.value ?? 'x'])),
      host: sampleHost(rule.source),
      headers: {
        'user-agent': c?.agent ? 'curl/8.5.0' : 'Mozilla/5.0 (loop check)',
        ...(c?.language ? { 'accept-language': c.language[0] } : {}),
      },
      cookies: Object.fromEntries((c?.cookie ?? []).map((n) => [n, '1'])),
      ip: '192.0.2.1',
      country: c?.country?.[0] ?? null,
    };
    const startHost = req.host;
    /** `scheme://host` of the hops on another host than the first, for the chain shown. */
    let origin = '';
    const seen = new Set<string>();
    const chain: string[] = [];
    for (let hop = 0; hop <= MAX_HOPS; hop++) {
      const query = req.query.toString();
      const key = `${req.host} ${req.path}?${query}`;
      chain.push(`${origin}${req.path}${query ? `?${query}` : ''}`);
      if (seen.has(key)) {
        out.push(
          loopDiagnostic(rule, chain, `This rule starts a redirect loop: ${chain.join(' → ')}.`, narrow),
        );
        break;
      }
      seen.add(key);
      const d = route(req, probe, lookup);
      if (d.type === 'loop') {
        // The engine saw the rule send this request to itself.
        chain.push(chain[chain.length - 1]);
        out.push(
          loopDiagnostic(rule, chain, `This rule starts a redirect loop: ${chain.join(' → ')}.`, narrow),
        );
        break;
      }
      const target = d.type === 'redirect' ? d.location : d.type === 'proxy' ? d.url : null;
      if (target === null) break;
      const absolute = /^https?:\/\//i.test(target);
      const url = new URL(target, 'http://loop.invalid');
      if (absolute && !isOwnHost?.(url.hostname)) break;
      if (hop === MAX_HOPS) {
        // A chain that keeps growing (`/blog/* → /blog/en/:splat`) never repeats a URL but never ends.
        out.push(
          loopDiagnostic(
            rule,
            chain,
            `This rule starts a chain of more than ${MAX_HOPS} redirects: ${chain.slice(0, 4).join(' → ')} → …`,
            'Narrow the source so the destination does not match it again.',
          ),
        );
        break;
      }
      const n = normalisePath(url.pathname);
      if (!n.ok) break;
      if (absolute) {
        origin = url.hostname === startHost ? '' : `${url.protocol}//${url.host}`;
        req = { ...req, host: url.hostname };
      }
      req = { ...req, path: n.path, query: url.searchParams };
    }
  }
  return out;
}

function countLimits(routes: RouteRule[], limits: RuleLimits): CompileDiagnostic[] {
  const staticCount = routes.filter((r) => r.staticKey !== null).length;
  const dynamicCount = routes.length - staticCount;
  const out: CompileDiagnostic[] = [];
  if (staticCount > limits.staticRules || dynamicCount > limits.dynamicRules) {
    out.push({
      code: 'routing_rules_over_plan',
      severity: 'error',
      message: `This version has ${staticCount} static and ${dynamicCount} dynamic routing rules; the limit is ${limits.staticRules} static and ${limits.dynamicRules} dynamic (\`_redirects\`, config redirects and rewrites together).`,
      details: { static: staticCount, dynamic: dynamicCount, limits },
      fix: 'Merge rules with placeholders or splats, or drop rules that no longer receive traffic.',
    });
  }
  return out;
}

interface FileParts {
  routes: RouteRule[];
  headers: HeaderRule[];
}

function assemble(
  fileParts: FileParts,
  input: Omit<CompileInput, 'redirectsText' | 'headersText'>,
  diagnostics: CompileDiagnostic[],
): CompileResult {
  const config = input.config ?? null;
  const configPath = input.configPath ?? 'spaces.json';
  const d = (pointer: string) => configDiag(diagnostics, configPath, pointer);
  const tv: TemplateVars = { vars: input.vars, secretNames: input.secretNames };
  const shell =
    input.detectShell && config?.fallback === undefined && input.files.some((f) => f.path === '_shell.html');
  const settings = compileSettings(shell ? { ...config, fallback: '/_shell.html' } : config, input.files, d);
  const routes = [...fileParts.routes, ...compileConfigRoutes(config, tv, d)];
  const configHeaders = compileConfigHeaders(config, d);
  const { firewall, cacheBypass } = compileTraffic(config, d);
  const rules: CompiledRules = {
    format: RULES_FORMAT,
    routes,
    fileHeaders: fileParts.headers,
    configHeaders,
    firewall,
    cacheBypass,
    settings,
  };
  diagnostics.push(...countLimits(routes, input.limits ?? DEFAULT_RULE_LIMITS));
  const loops = findLoops(rules, input.files, input.isOwnHost);
  diagnostics.push(...loops);
  if (loops.length > 0) {
    const bad = new Set(loops.map((l) => (l.details as { rule: string }).rule));
    rules.routes = routes.filter((r) => !bad.has(r.ref));
  }
  return { rules, diagnostics, ok: !diagnostics.some((x) => x.severity === 'error') };
}

/** Compile everything a version serves with. */
export function compileSite(input: CompileInput): CompileResult {
  const diagnostics: CompileDiagnostic[] = [];
  const tv: TemplateVars = { vars: input.vars, secretNames: input.secretNames };
  const redirects = input.redirectsText
    ? parseRedirectsFile(input.redirectsText, tv)
    : { rules: [], diagnostics: [] };
  const headers = input.headersText ? parseHeadersFile(input.headersText) : { rules: [], diagnostics: [] };
  diagnostics.push(...redirects.diagnostics, ...headers.diagnostics);
  return assemble({ routes: redirects.rules, headers: headers.rules }, input, diagnostics);
}

/**
 * Recompile the config-derived part over an already compiled version: the edge calls this when the
 * space's settings overlay changes (effective config = `applyOverlay(versionConfig, overlay)`). The
 * `_redirects` and `_headers` rules of the version are kept as compiled at finalize.
 */
export function recompileWithConfig(
  base: CompiledRules,
  input: Omit<CompileInput, 'redirectsText' | 'headersText'>,
): CompileResult {
  const fileRoutes = currentRoutes(base).filter((r) => r.ref.startsWith('_redirects:'));
  return assemble({ routes: fileRoutes, headers: base.fileHeaders }, input, []);
}
