import type { CompileDiagnostic } from '../../site/types.ts';

/**
 * Entry detection for `runtime.kind: "functions"` (behaviour §9), in this order:
 * 1. a declared `runtime.entry` (a file, or a directory of route modules such as `functions`);
 * 2. a framework adapter's worker output: `_worker.js` (a file) or `_worker.js/index.js`;
 * 3. `handler.ts`, `handler.js` or `handler.mjs` at the root;
 * 4. modules under `functions/`, each a route, Pages-Functions style.
 * A declared entry that is not in the version, or no entry at all, is `config_runtime_entry_missing`.
 */

export type EntryKind = 'declared' | 'adapter' | 'handler' | 'functions';

/** One route module under the functions directory. */
export interface RouteModule {
  /** The module's path in the version (`functions/api/[id].ts`). */
  path: string;
  /** The route it answers (`/api/:id`). */
  route: string;
}

export interface DetectedEntry {
  kind: EntryKind;
  /** The entry file, or the functions directory (`functions`). */
  entry: string;
  /** A single module exporting `{ fetch }` (null for route modules). */
  module: string | null;
  /** Route modules, most specific first (empty for a single module). */
  modules: RouteModule[];
  /**
   * `_middleware` modules of the functions directory, outermost first: `route` is the folder they
   * wrap (`/` for `functions/_middleware.ts`, `/api` for `functions/api/_middleware.ts`).
   */
  middleware: RouteModule[];
  /** Routes the worker claims: every path for a single module. */
  routes: string[];
  /** Source files and directories never served (`functions/`, `handler.ts`). */
  private: string[];
}

export const MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs', '.jsx', '.tsx'];
const HANDLERS = ['handler.ts', 'handler.js', 'handler.mjs'];

const isModule = (p: string) => MODULE_EXTENSIONS.some((e) => p.endsWith(e));

/**
 * The route of a module path relative to the functions directory: `api/hello.ts` → `/api/hello`,
 * `index.ts` → `/`, `users/[id].ts` → `/users/:id`, `files/[[path]].ts` → `/files/*`. Null for a
 * module that is not a route (a name starting with `_`, such as `_middleware.ts` or `_lib/db.ts`).
 */
export function routeOf(relative: string): string | null {
  const noExt = relative.replace(/\.[^./]+$/, '');
  const segs = noExt.split('/');
  if (segs.some((s) => s.startsWith('_'))) return null;
  if (segs[segs.length - 1] === 'index') segs.pop();
  const out: string[] = [];
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    const rest = /^\[\[([A-Za-z0-9_$]+)\]\]$/.exec(s);
    if (rest) {
      if (i !== segs.length - 1) return null;
      out.push('*');
      continue;
    }
    const param = /^\[([A-Za-z0-9_$]+)\]$/.exec(s);
    out.push(param ? `:${param[1]}` : s);
  }
  return `/${out.join('/')}`;
}

/** Sort key: literal segments before parameters before a catch-all, then longer first. */
function specificity(route: string): string {
  const segs = route.split('/').filter(Boolean);
  return segs.map((s) => (s === '*' ? '2' : s.startsWith(':') ? '1' : '0')).join('') + '3';
}

export function byRouteOrder(a: RouteModule, b: RouteModule): number {
  const sa = specificity(a.route);
  const sb = specificity(b.route);
  if (sa !== sb) return sa < sb ? -1 : 1;
  return a.route < b.route ? -1 : a.route > b.route ? 1 : 0;
}

/**
 * The folder a `_middleware` module wraps, as a route prefix (`api/_middleware.ts` → `/api`), or null
 * when the path is not a middleware module or sits under a folder that is not routed (`_lib/`).
 */
export function middlewareOf(relative: string): string | null {
  const m = /^(?:(.*)\/)?_middleware\.[^./]+$/.exec(relative);
  if (!m) return null;
  const dir = m[1] ?? '';
  if (dir === '') return '/';
  const route = routeOf(`${dir}/index.ts`);
  return route === null || route.includes(':') || route.includes('*') ? null : route;
}

function routeModules(
  dir: string,
  paths: readonly string[],
  diagnostics: CompileDiagnostic[],
): { modules: RouteModule[]; middleware: RouteModule[] } {
  const prefix = `${dir}/`;
  const modules: RouteModule[] = [];
  const middleware: RouteModule[] = [];
  const seen = new Map<string, string>();
  for (const p of paths) {
    if (!p.startsWith(prefix) || !isModule(p)) continue;
    const rel = p.slice(prefix.length);
    const route = routeOf(rel);
    if (route === null) {
      const wraps = middlewareOf(rel);
      if (wraps !== null) middleware.push({ path: p, route: wraps });
      else if (/(^|\/)_middleware\.[^/]+$/.test(p)) {
        diagnostics.push({
          code: 'runtime_middleware_unsupported',
          severity: 'warning',
          message: `${p}: middleware runs for plain folders only (not under a [param] folder or a _ folder); it is bundled only if a route imports it.`,
          path: p,
        });
      }
      continue;
    }
    const other = seen.get(route);
    if (other !== undefined) {
      diagnostics.push({
        code: 'runtime_route_duplicate',
        severity: 'error',
        message: `${p} and ${other} both answer ${route}.`,
        path: p,
        details: { route, paths: [other, p] },
      });
      continue;
    }
    seen.set(route, p);
    modules.push({ path: p, route });
  }
  // Outermost first: `/` before `/api` before `/api/v2`.
  middleware.sort(
    (a, b) => a.route.split('/').filter(Boolean).length - b.route.split('/').filter(Boolean).length,
  );
  return { modules: modules.sort(byRouteOrder), middleware };
}

/** Finds the version's entry; null (with an error diagnostic) when there is none. */
export function detectEntry(
  declared: string | undefined,
  paths: readonly string[],
  diagnostics: CompileDiagnostic[],
): DetectedEntry | null {
  const has = new Set(paths);
  const single = (kind: EntryKind, module: string, priv: string[]): DetectedEntry => ({
    kind,
    entry: module,
    module,
    modules: [],
    middleware: [],
    routes: ['/*'],
    private: priv,
  });
  const directory = (kind: EntryKind, dir: string): DetectedEntry | null => {
    const { modules, middleware } = routeModules(dir, paths, diagnostics);
    if (!modules.length) return null;
    return {
      kind,
      entry: dir,
      module: null,
      modules,
      middleware,
      routes: modules.map((m) => m.route),
      private: [`${dir}/`],
    };
  };
  if (declared !== undefined) {
    const entry = declared.replace(/^\.?\/+/, '').replace(/\/+$/, '');
    if (has.has(entry) && isModule(entry)) return single('declared', entry, [entry]);
    const dir = entry && paths.some((p) => p.startsWith(`${entry}/`)) ? directory('declared', entry) : null;
    if (dir) return dir;
    diagnostics.push({
      code: 'config_runtime_entry_missing',
      severity: 'error',
      message: `runtime.entry "${declared}" is not a module (.ts, .js, .mjs) or a directory of route modules in this version.`,
      path: 'spaces.json',
      details: { pointer: '/spaces.json/runtime/entry', entry: declared },
    });
    return null;
  }
  if (has.has('_worker.js')) return single('adapter', '_worker.js', ['_worker.js']);
  if (has.has('_worker.js/index.js')) return single('adapter', '_worker.js/index.js', ['_worker.js/']);
  for (const h of HANDLERS) if (has.has(h)) return single('handler', h, [...HANDLERS]);
  const fns = directory('functions', 'functions');
  if (fns) return fns;
  diagnostics.push({
    code: 'config_runtime_entry_missing',
    severity: 'error',
    message:
      'runtime.kind is "functions" but the version has no entry: add `_worker.js`, `handler.ts|js|mjs` or route modules under `functions/`, or declare `runtime.entry`.',
    path: 'spaces.json',
    details: { pointer: '/spaces.json/runtime' },
  });
  return null;
}
