import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  type BlobBatch,
  BlobMismatchError,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  SHA256_HEX,
} from './port.ts';

/**
 * Blobs as files under `<root>/<aa>/<bb>/<sha256>`. Writes go to `<root>/tmp`, are fsynced, then
 * renamed into place, so a crash never leaves a partial blob under its final name.
 */
export class FsBlobStore implements BlobStore {
  readonly kind = 'file' as const;
  private readonly tmp: string;

  constructor(private readonly root: string) {
    this.tmp = path.join(root, 'tmp');
    fs.mkdirSync(this.tmp, { recursive: true });
  }

  pathOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new Error('invalid blob digest');
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  async put(sha256: string, size: number, body: Readable): Promise<{ created: boolean }> {
    const final = this.pathOf(sha256);
    if (await exists(final)) {
      body.resume();
      return { created: false };
    }
    const tmpFile = path.join(this.tmp, `${sha256}.${randomBytes(6).toString('hex')}`);
    await this.writeVerified(tmpFile, sha256, size, body, true);
    try {
      await fsp.mkdir(path.dirname(final), { recursive: true });
      await fsp.rename(tmpFile, final);
      await syncDir(path.dirname(final));
      return { created: true };
    } catch (err) {
      await fsp.rm(tmpFile, { force: true });
      throw err;
    }
  }

  /**
   * Batch writes: each blob goes to `tmp/` unsynced; `commit` syncs every file of the batch in
   * parallel (the kernel groups them into few journal commits), renames them into place and syncs
   * the directories. A crash before `commit` leaves only temp files, never a partial named blob.
   */
  beginBatch(): BlobBatch {
    const pending = new Map<string, string>();
    const store = this;
    const cleanup = async () => {
      await Promise.all([...pending.values()].map((f) => fsp.rm(f, { force: true })));
      pending.clear();
    };
    return {
      async put(sha256, size, body) {
        const final = store.pathOf(sha256);
        if (pending.has(sha256) || (await exists(final))) {
          body.resume();
          return { created: false };
        }
        const tmpFile = path.join(store.tmp, `${sha256}.${randomBytes(6).toString('hex')}`);
        await store.writeVerified(tmpFile, sha256, size, body, false);
        pending.set(sha256, tmpFile);
        return { created: true };
      },
      async commit() {
        const items = [...pending.entries()];
        if (!items.length) return;
        // Data first: every temp file of the batch durable before any name points at it.
        if (!(await syncFs(store.tmp))) {
          await forEachLimit(items, 64, async ([, tmpFile]) => {
            const fh = await fsp.open(tmpFile, 'r+');
            try {
              await fh.sync();
            } finally {
              await fh.close();
            }
          });
        }
        const dirs = new Set<string>();
        await forEachLimit(items, 64, async ([sha256, tmpFile]) => {
          const final = store.pathOf(sha256);
          await fsp.mkdir(path.dirname(final), { recursive: true });
          await fsp.rename(tmpFile, final);
          dirs.add(path.dirname(final));
          dirs.add(path.dirname(path.dirname(final)));
        });
        pending.clear();
        // Then the names: one filesystem sync, or every touched directory.
        if (!(await syncFs(store.root))) {
          dirs.add(store.root);
          await forEachLimit([...dirs], 64, syncDir);
        }
      },
      abort: cleanup,
    };
  }

  /** Streams `body` into `file`, checking size and digest; removes the file on any failure. */
  private async writeVerified(
    file: string,
    sha256: string,
    size: number,
    body: Readable,
    sync: boolean,
  ): Promise<void> {
    const hash = createHash('sha256');
    let count = 0;
    const fh = await fsp.open(file, 'w');
    try {
      await pipeline(body, async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          count += chunk.length;
          if (count > size) throw new BlobMismatchError('size', size, count);
          hash.update(chunk);
          await fh.write(chunk);
        }
      });
      if (count !== size) throw new BlobMismatchError('size', size, count);
      const actual = hash.digest('hex');
      if (actual !== sha256) throw new BlobMismatchError('hash', sha256, actual);
      if (sync) await fh.sync();
      await fh.close();
    } catch (err) {
      await fh.close().catch(() => {});
      await fsp.rm(file, { force: true });
      throw err;
    }
  }

  async get(sha256: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(sha256);
    await fsp.access(file);
    return fs.createReadStream(file, range ? { start: range.start, end: range.end } : {});
  }

  async has(sha256: string): Promise<boolean> {
    return exists(this.pathOf(sha256));
  }

  async stat(sha256: string): Promise<BlobStat | null> {
    try {
      const st = await fsp.stat(this.pathOf(sha256));
      return { size: st.size };
    } catch {
      return null;
    }
  }

  async delete(sha256: string): Promise<void> {
    await fsp.rm(this.pathOf(sha256), { force: true });
  }

  async *list(): AsyncIterable<string> {
    for (const a of await readdirSafe(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(a)) continue;
      for (const b of await readdirSafe(path.join(this.root, a))) {
        for (const name of await readdirSafe(path.join(this.root, a, b))) {
          if (SHA256_HEX.test(name)) yield name;
        }
      }
    }
  }

  async close(): Promise<void> {}
}

async function exists(file: string): Promise<boolean> {
  try {
    await fsp.access(file);
    return true;
  } catch {
    return false;
  }
}

async function readdirSafe(dir: string): Promise<string[]> {
  try {
    return await fsp.readdir(dir);
  } catch {
    return [];
  }
}

/**
 * One `syncfs(2)` for the filesystem holding `dir` (via coreutils `sync -f`): a batch of thousands of
 * blobs costs one flush instead of one fsync each. False when unavailable (the caller fsyncs files).
 */
function syncFs(dir: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('sync', ['-f', dir], (err) => resolve(!err));
  });
}

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
