/**
 * Which request paths a version's functions worker claims, and which of its files are code that is
 * never served (issue 26). Pure: finalize writes these into the compiled rules, the engine reads them.
 *
 * A route is a path pattern of literal segments, `:name` (one segment) and a final `*` (zero or more
 * segments): `/api/hello`, `/users/:id`, `/files/*`; `/*` claims every path. A claimed path matches
 * with or without one trailing slash.
 */
export interface WorkerClaims {
  routes: string[];
  /** Source files of the worker: exact keys, or prefixes ending in `/` (`functions/`). */
  private: string[];
}

type Seg = { kind: 'lit'; value: string } | { kind: 'param' } | { kind: 'rest' };

const compiled = new WeakMap<WorkerClaims, { routes: Seg[][]; exact: Set<string>; prefixes: string[] }>();

export function parseRoute(route: string): Seg[] {
  return route
    .split('/')
    .filter(Boolean)
    .map(
      (s): Seg =>
        s === '*' ? { kind: 'rest' } : s.startsWith(':') ? { kind: 'param' } : { kind: 'lit', value: s },
    );
}

function prepared(w: WorkerClaims) {
  let c = compiled.get(w);
  if (!c) {
    c = {
      routes: w.routes.map(parseRoute),
      exact: new Set(w.private.filter((p) => !p.endsWith('/'))),
      prefixes: w.private.filter((p) => p.endsWith('/')),
    };
    compiled.set(w, c);
  }
  return c;
}

/** Does the segment list match the pattern? */
export function matchSegments(pattern: readonly Seg[], segs: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p.kind === 'rest') return true;
    if (i >= segs.length) return false;
    if (p.kind === 'lit' && p.value !== segs[i]) return false;
  }
  return pattern.length === segs.length;
}

/** Whether the worker claims this normalised request path (`/api/hello`). */
export function workerClaims(w: WorkerClaims, path: string): boolean {
  const segs = path.split('/').filter(Boolean);
  for (const r of prepared(w).routes) if (matchSegments(r, segs)) return true;
  return false;
}

/** Whether a manifest key is one of the worker's source files (never served as a file). */
export function isWorkerSource(w: WorkerClaims, key: string): boolean {
  const c = prepared(w);
  if (c.exact.has(key)) return true;
  for (const p of c.prefixes) if (key.startsWith(p)) return true;
  return false;
}
