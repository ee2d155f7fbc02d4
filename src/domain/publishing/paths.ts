/**
 * Paths inside a version are hostile input: from manifests, multipart filenames and archive entries.
 * One function decides what a canonical site path is; every flow goes through it.
 */

export const MAX_PATH_BYTES = 1024;

export type PathProblem = 'invalid' | 'too_long';

// C0 controls, DEL and C1 controls never belong in a URL path of a published file.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The canonical form of a site path (NFC, no leading `./`), or the reason it is refused: absolute
 * paths, backslashes, control characters, empty, `.` or `..` segments and trailing slashes.
 */
export function canonicalPath(raw: string): { path: string } | { problem: PathProblem; reason: string } {
  if (typeof raw !== 'string' || raw.length === 0) return { problem: 'invalid', reason: 'the path is empty' };
  const p = raw.normalize('NFC').replace(/^(\.\/)+/, '');
  if (Buffer.byteLength(p, 'utf8') > MAX_PATH_BYTES)
    return { problem: 'too_long', reason: `the path is longer than ${MAX_PATH_BYTES} bytes` };
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p))
    return { problem: 'invalid', reason: 'the path must be relative (no leading "/" or drive letter)' };
  if (p.includes('\\')) return { problem: 'invalid', reason: 'the path contains a backslash' };
  if (CONTROL.test(p)) return { problem: 'invalid', reason: 'the path contains a control character' };
  for (const seg of p.split('/')) {
    if (seg === '') return { problem: 'invalid', reason: 'the path has an empty segment or ends with "/"' };
    if (seg === '.' || seg === '..') return { problem: 'invalid', reason: `the path has a "${seg}" segment` };
  }
  return { path: p };
}

/** Tracks paths of one snapshot: exact duplicates and case-only duplicates. */
export class PathSet {
  private readonly exact = new Set<string>();
  private readonly folded = new Map<string, string>();

  /** `null` when added; otherwise which rule the path breaks and the path it collides with. */
  add(path: string): { kind: 'duplicate' | 'case'; other: string } | null {
    if (this.exact.has(path)) return { kind: 'duplicate', other: path };
    const key = path.toLowerCase();
    const other = this.folded.get(key);
    if (other !== undefined) return { kind: 'case', other };
    this.exact.add(path);
    this.folded.set(key, path);
    return null;
  }

  get size(): number {
    return this.exact.size;
  }
}

/** Compile inputs and private dot-files: stored with the version, never served to visitors. */
export function isServable(path: string): boolean {
  if (path === 'spaces.json' || path === 'spaces.jsonc' || path === '_redirects' || path === '_headers')
    return false;
  if (path === 'theme.json' || path === '_layout.html' || path.startsWith('_pages/')) return false;
  const segs = path.split('/');
  if (segs[0] === '.well-known') return segs.slice(1).every((s) => !s.startsWith('.'));
  return segs.every((s) => !s.startsWith('.'));
}
