import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * What `spaces publish` remembers between runs about a directory's files, so an unchanged file is not
 * read and hashed again: per path in the site, the file's size, mtime, ctime (milliseconds with their
 * sub-millisecond fraction, as `stat` gives them) and inode, and its sha256. A file is trusted from the
 * cache only if all four still match. Any write to a file changes its ctime, which no tool can set
 * back, so content that changed is always hashed again. Files modified in the last {@link SETTLE_MS}
 * are never remembered: a second write within the same timestamp tick could otherwise leave the same
 * stat behind ("racily clean", as git calls it).
 *
 * One JSON file per site directory under `<config dir>/cache/`; unreadable or foreign content is
 * ignored (the cache only ever saves work, it never decides what is published). It is rewritten only
 * when this run's view differs from what it holds.
 */
export interface FileStat {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

const SETTLE_MS = 2_000;
const VERSION = 3;
const HEX = /^[0-9a-f]*$/;

/**
 * The file on disk: parallel arrays in path order (JavaScript string order), which parse and
 * serialise several times faster than one object per file: `paths`, `stats` (size, mtimeMs, ctimeMs,
 * ino per file, flattened) and `sha256` (every digest's 64 hex digits, concatenated).
 */
interface Saved {
  version: number;
  root: string;
  paths: string[];
  stats: number[];
  sha256: string;
}

export class HashCache {
  private readonly file: string;
  private readonly root: string;
  private paths: string[] = [];
  private stats: number[] = [];
  private sums = '';
  /** Where the next lookup probably is: callers ask in path order. */
  private hint = 0;
  /** This run's view: path → [stat, sha256]. */
  private readonly next = new Map<string, { st: FileStat; sha256: string }>();
  /** Entries of `next` that are not the saved ones. */
  private changed = 0;
  /** Files answered from the cache in this run. */
  hits = 0;

  constructor(
    configDir: string,
    root: string,
    private readonly now: () => number = Date.now,
  ) {
    this.root = path.resolve(root);
    const id = createHash('sha256').update(this.root).digest('hex').slice(0, 24);
    this.file = path.join(configDir, 'cache', `hashes-${id}.json`);
    try {
      const data = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Partial<Saved>;
      const n = Array.isArray(data.paths) ? data.paths.length : -1;
      if (
        data.version === VERSION &&
        data.root === this.root &&
        n >= 0 &&
        Array.isArray(data.stats) &&
        data.stats.length === n * 4 &&
        typeof data.sha256 === 'string' &&
        data.sha256.length === n * 64 &&
        HEX.test(data.sha256)
      ) {
        this.paths = data.paths as string[];
        this.stats = data.stats;
        this.sums = data.sha256;
      }
    } catch {
      // No cache yet, or not one we can read: every file is hashed.
    }
  }

  /** The remembered sha256 of the file at `rel` (its path in the site) if its stat is unchanged. */
  lookup(rel: string, st: FileStat): string | null {
    const i = this.indexOf(rel);
    if (i < 0) return null;
    const s = this.stats;
    const k = i * 4;
    if (s[k] !== st.size || s[k + 1] !== st.mtimeMs || s[k + 2] !== st.ctimeMs || s[k + 3] !== st.ino)
      return null;
    const sha256 = this.sums.slice(i * 64, i * 64 + 64);
    this.hits++;
    this.next.set(rel, { st, sha256 });
    return sha256;
  }

  /** Remembers a freshly computed hash (unless the file changed too recently to trust its stat). */
  remember(rel: string, st: FileStat, sha256: string): void {
    const newest = Math.max(st.mtimeMs, st.ctimeMs);
    if (newest + SETTLE_MS > this.now()) return;
    this.next.set(rel, { st, sha256 });
    this.changed++;
  }

  /**
   * Writes what this run saw (files no longer present are forgotten), unless that is exactly what is
   * saved already; errors are ignored.
   */
  save(): void {
    if (this.changed === 0 && this.next.size === this.paths.length) return;
    try {
      const paths = [...this.next.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const stats: number[] = [];
      const sums: string[] = [];
      for (const p of paths) {
        const { st, sha256 } = this.next.get(p)!;
        stats.push(st.size, st.mtimeMs, st.ctimeMs, st.ino);
        sums.push(sha256);
      }
      const saved: Saved = { version: VERSION, root: this.root, paths, stats, sha256: sums.join('') };
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const tmp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(saved), { mode: 0o600 });
      fs.renameSync(tmp, this.file);
    } catch {
      // A cache that cannot be written only costs the next run its hashing.
    }
  }

  /** Index of `rel` in the saved paths, or -1: the hinted slot first, else a binary search. */
  private indexOf(rel: string): number {
    const paths = this.paths;
    if (paths[this.hint] === rel) return this.hint++;
    let lo = 0;
    let hi = paths.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const p = paths[mid]!;
      if (p === rel) {
        this.hint = mid + 1;
        return mid;
      }
      if (p < rel) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}
