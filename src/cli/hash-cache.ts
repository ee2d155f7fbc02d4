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

type Entry = [size: number, mtimeMs: number, ctimeMs: number, ino: number, sha256: string];

const SETTLE_MS = 2_000;
const VERSION = 2;
const SHA256 = /^[0-9a-f]{64}$/;

export class HashCache {
  private readonly file: string;
  private readonly root: string;
  /** The saved entries as parsed (validated one by one when looked up). */
  private readonly old: Record<string, unknown> = Object.create(null);
  private oldCount = 0;
  private readonly next = new Map<string, Entry>();
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
      const data = JSON.parse(fs.readFileSync(this.file, 'utf8')) as {
        version?: number;
        root?: string;
        entries?: Record<string, unknown>;
      };
      if (data.version === VERSION && data.root === this.root && data.entries) {
        if (typeof data.entries === 'object' && !Array.isArray(data.entries)) {
          this.old = data.entries;
          this.oldCount = Object.keys(data.entries).length;
        }
      }
    } catch {
      // No cache yet, or not one we can read: every file is hashed.
    }
  }

  /** The remembered sha256 of the file at `rel` (its path in the site) if its stat is unchanged. */
  lookup(rel: string, st: FileStat): string | null {
    const e = Object.hasOwn(this.old, rel) ? this.old[rel] : undefined;
    if (!isEntry(e) || !same(e, st)) return null;
    this.hits++;
    this.next.set(rel, e);
    return e[4];
  }

  /** Remembers a freshly computed hash (unless the file changed too recently to trust its stat). */
  remember(rel: string, st: FileStat, sha256: string): void {
    const newest = Math.max(st.mtimeMs, st.ctimeMs);
    if (newest + SETTLE_MS > this.now()) return;
    this.next.set(rel, [st.size, st.mtimeMs, st.ctimeMs, st.ino, sha256]);
    this.changed++;
  }

  /**
   * Writes what this run saw (files no longer present are forgotten), unless that is exactly what is
   * saved already; errors are ignored.
   */
  save(): void {
    if (this.changed === 0 && this.next.size === this.oldCount) return;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const tmp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(
        tmp,
        JSON.stringify({ version: VERSION, root: this.root, entries: Object.fromEntries(this.next) }),
        { mode: 0o600 },
      );
      fs.renameSync(tmp, this.file);
    } catch {
      // A cache that cannot be written only costs the next run its hashing.
    }
  }
}

function isEntry(e: unknown): e is Entry {
  return Array.isArray(e) && e.length === 5 && typeof e[4] === 'string' && SHA256.test(e[4]);
}

function same(e: Entry, st: FileStat): boolean {
  return e[0] === st.size && e[1] === st.mtimeMs && e[2] === st.ctimeMs && e[3] === st.ino;
}
