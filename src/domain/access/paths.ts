/**
 * Path globs of grants and of the config's `access.public`: `/docs/**`, `/blog/*.html`, `!/docs/private/**`.
 * `*` matches within one segment (never `/`), `**` (a whole segment) matches any number of segments,
 * including none. A trailing slash is not significant. A list passes a path when one positive glob
 * matches it and no `!` glob of the same list does.
 */

type Segment = { kind: 'lit'; text: string } | { kind: 'star'; re: RegExp } | { kind: 'any' };

export interface CompiledPaths {
  positive: Segment[][];
  negative: Segment[][];
}

export const MAX_PATH_GLOBS = 100;
export const MAX_GLOB_LENGTH = 1024;

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

function escapeRe(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

function compileGlob(glob: string): Segment[] {
  return splitPath(glob).map((seg): Segment => {
    if (seg === '**') return { kind: 'any' };
    if (!seg.includes('*')) return { kind: 'lit', text: seg };
    return { kind: 'star', re: new RegExp(`^${seg.split('*').map(escapeRe).join('[^/]*')}$`) };
  });
}

/** Why a glob list is not valid (null when it is): each glob starts with `/` or `!/`. */
export function pathsProblem(globs: readonly string[]): { index: number; reason: string } | null {
  if (globs.length === 0) return { index: 0, reason: 'at least one path glob is needed' };
  if (globs.length > MAX_PATH_GLOBS)
    return { index: MAX_PATH_GLOBS, reason: `at most ${MAX_PATH_GLOBS} globs` };
  let positives = 0;
  for (const [index, g] of globs.entries()) {
    const body = g.startsWith('!') ? g.slice(1) : g;
    if (!g.startsWith('!')) positives++;
    if (!body.startsWith('/')) return { index, reason: `"${g}" does not start with / (or !/)` };
    if (g.length > MAX_GLOB_LENGTH) return { index, reason: `longer than ${MAX_GLOB_LENGTH} characters` };
    if (/[\s?#]/.test(body)) return { index, reason: `"${g}" holds a space, ? or #` };
    for (const seg of splitPath(body)) {
      if (seg.includes('**') && seg !== '**')
        return { index, reason: `"${g}": ** is a whole segment (use * within a segment)` };
    }
  }
  if (positives === 0) return { index: 0, reason: 'not every glob may be a negation (!)' };
  return null;
}

export function compilePaths(globs: readonly string[]): CompiledPaths {
  const out: CompiledPaths = { positive: [], negative: [] };
  for (const g of globs) {
    if (g.startsWith('!')) out.negative.push(compileGlob(g.slice(1)));
    else out.positive.push(compileGlob(g));
  }
  return out;
}

function matchFrom(glob: Segment[], gi: number, segs: string[], si: number): boolean {
  while (gi < glob.length) {
    const g = glob[gi]!;
    if (g.kind === 'any') {
      // Collapse consecutive `**`, then try every split.
      if (gi === glob.length - 1) return true;
      for (let k = si; k <= segs.length; k++) if (matchFrom(glob, gi + 1, segs, k)) return true;
      return false;
    }
    if (si >= segs.length) return false;
    const s = segs[si]!;
    if (g.kind === 'lit' ? g.text !== s : !g.re.test(s)) return false;
    gi++;
    si++;
  }
  return si === segs.length;
}

export function globMatches(glob: Segment[], path: string): boolean {
  return matchFrom(glob, 0, splitPath(path), 0);
}

/** One positive glob matches and no negative one does. */
export function pathsMatch(paths: CompiledPaths, path: string): boolean {
  const segs = splitPath(path);
  let hit = false;
  for (const g of paths.positive) {
    if (matchFrom(g, 0, segs, 0)) {
      hit = true;
      break;
    }
  }
  if (!hit) return false;
  for (const g of paths.negative) if (matchFrom(g, 0, segs, 0)) return false;
  return true;
}

/** True when the list passes every path (`/**` with no exclusions): the edge skips matching then. */
export function matchesEverything(paths: CompiledPaths): boolean {
  return (
    paths.negative.length === 0 &&
    paths.positive.some((g) => g.length > 0 && g.every((s) => s.kind === 'any'))
  );
}
