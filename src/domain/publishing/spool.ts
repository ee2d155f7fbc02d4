import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';

/** What the server spools under `<dataDir>/tmp/`: an archive part, or one file whose digest is not known yet. */
export type SpoolKind = 'archive' | 'ingest';

const SPOOL_NAME = /^(archive|ingest)-[0-9a-f]{16}$/;

/**
 * Request bodies too large to hold in memory, written to `<dataDir>/tmp/` while they are read. The
 * request that made a spool file removes it; a crash leaves it behind, so `sweep` removes spool files
 * older than any request can live (the caller's `maxAgeMs`). Only names this module
 * makes are swept: the directory may be shared (a disk blob store rooted at the data directory keeps
 * its own temp and trash files there).
 */
export class Spool {
  private made: Promise<unknown> | null = null;

  constructor(readonly dir: string) {}

  /** A fresh file name in the spool directory (the directory is made on first use). */
  async file(kind: SpoolKind): Promise<string> {
    this.made ??= fsp.mkdir(this.dir, { recursive: true }).catch((err) => {
      this.made = null;
      throw err;
    });
    await this.made;
    return path.join(this.dir, `${kind}-${randomBytes(8).toString('hex')}`);
  }

  /** Removes spool files last modified before `now - maxAgeMs`; returns how many. */
  async sweep(now: Date, maxAgeMs: number): Promise<number> {
    const cutoff = now.getTime() - maxAgeMs;
    let names: string[];
    try {
      names = await fsp.readdir(this.dir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      if (!SPOOL_NAME.test(name)) continue;
      const file = path.join(this.dir, name);
      try {
        if ((await fsp.stat(file)).mtimeMs >= cutoff) continue;
        await fsp.rm(file, { force: true });
        removed++;
      } catch {
        // Removed by its request meanwhile.
      }
    }
    return removed;
  }
}
