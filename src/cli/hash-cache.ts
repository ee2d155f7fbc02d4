import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * What `spaces publish` remembers between runs about a directory's files, so an unchanged file is not
 * read and hashed again: per absolute path, the file's size, mtime, ctime and inode (nanoseconds, as
 * `stat` gives them) and its sha256. A file is trusted from the cache only if all four still match.
 * Any write to a file changes its ctime, which no tool can set back, so content that changed is always
 * hashed again. Files modified in the last {@link SETTLE_MS} are never remembered: a second write within
 * the same timestamp tick could otherwise leave the same stat behind ("racily clean", as git calls it).
 *
 * One JSON file per site directory under `<config dir>/cache/`; unreadable or foreign content is
 * ignored (the cache only ever saves work, it never decides what is published).
 */
export interface FileStat {
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
}

type Entry = [size: number, mtimeNs: string, ctimeNs: string, ino: string, sha256: string];

const SETTLE_MS = 2_000n;
const VERSION = 1;

export class HashCache {
  private readonly file: string;
  private readonly root: string;
  private readonly old = new Map<string, Entry>();
  private readonly next = new Map<string, Entry>();
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
        entries?: Record<string, Entry>;
      };
      if (data.version === VERSION && data.root === this.root && data.entries) {
        for (const [abs, e] of Object.entries(data.entries)) {
          if (Array.isArray(e) && e.length === 5 && /^[0-9a-f]{64}$/.test(String(e[4]))) this.old.set(abs, e);
        }
      }
    } catch {
      // No cache yet, or not one we can read: every file is hashed.
    }
  }

  /** The remembered sha256 of `abs` if its stat is unchanged. */
  lookup(abs: string, st: FileStat): string | null {
    const e = this.old.get(abs);
    if (!e || !same(e, st)) return null;
    this.hits++;
    this.next.set(abs, e);
    return e[4];
  }

  /** Remembers a freshly computed hash (unless the file changed too recently to trust its stat). */
  remember(abs: string, st: FileStat, sha256: string): void {
    const newest = st.mtimeNs > st.ctimeNs ? st.mtimeNs : st.ctimeNs;
    if (newest / 1_000_000n + SETTLE_MS > BigInt(this.now())) return;
    this.next.set(abs, [st.size, String(st.mtimeNs), String(st.ctimeNs), String(st.ino), sha256]);
  }

  /** Writes what this run saw (files no longer present are forgotten); errors are ignored. */
  save(): void {
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

function same(e: Entry, st: FileStat): boolean {
  return (
    e[0] === st.size && e[1] === String(st.mtimeNs) && e[2] === String(st.ctimeNs) && e[3] === String(st.ino)
  );
}
