import type { Grant } from './model.ts';
import { pathsProblem } from './paths.ts';

/**
 * The settings file's `access` key, compiled into the same grants the matcher reads (one engine):
 * `"public"` → a public grant over every path and version; `{ public: [globs, "!neg"] }` → a public
 * grant over those paths; `"team"`/`"private"` add nothing (the space's own access is the floor:
 * grants only ever open). Validated at finalize (`configAccessProblem`).
 */
export type ConfigAccess = 'public' | 'team' | 'private' | { public: string[] };

export function configAccessProblem(access: unknown): { pointer: string; reason: string } | null {
  if (access === undefined || typeof access === 'string') return null;
  const globs = (access as { public?: unknown }).public;
  if (!Array.isArray(globs)) return null; // the schema reports shape errors
  const p = pathsProblem(globs as string[]);
  return p ? { pointer: `/access/public/${p.index}`, reason: p.reason } : null;
}

const cache = new WeakMap<object, Grant[]>();
const PUBLIC_ALL: Grant[] = [
  {
    id: 'config',
    audience: { type: 'public' },
    paths: ['/**'],
    role: 'viewer',
    target: 'all-versions',
    constraints: {},
    uses: 0,
  },
];

/** The grants a version's settings give (memoised per settings object). */
export function configGrants(config: Record<string, unknown> | null | undefined): Grant[] {
  const access = config?.access as ConfigAccess | undefined;
  if (!access || access === 'team' || access === 'private') return [];
  if (access === 'public') return PUBLIC_ALL;
  if (typeof access !== 'object' || !Array.isArray(access.public)) return [];
  let hit = cache.get(access);
  if (!hit) {
    hit = pathsProblem(access.public) ? [] : [{ ...PUBLIC_ALL[0]!, paths: access.public }];
    cache.set(access, hit);
  }
  return hit;
}
