import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { WorkerThread } from '../threads.ts';
import {
  type BlobBatch,
  BlobMismatchError,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  type DeleteOptions,
  deleteCutoffMs,
  SHA256_HEX,
  verifyDigest,
  withBody,
} from './port.ts';

/**
 * How blobs are laid out under the root, recorded in `<root>/LAYOUT` when a store is first opened:
 * `flat` — `<root>/<aa>/<sha256>`, 256 shard directories (stores created from now on) — or `nested` —
 * `<root>/<aa>/<bb>/<sha256>` (stores created before the marker existed: they keep their layout).
 * The nested layout spreads a first publish of 10,000 files over up to 65,536 directories and so
 * creates a new directory for most blobs; the flat one creates at most 256, ever.
 */
export type FsLayout = 'flat' | 'nested';

/** A shard directory's name: two hex digits. */
const SHARD = /^[0-9a-f]{2}$/;
/** A blob a conditional delete moved aside: `tmp/del-<sha256>.<random>` (see `FsBlobStore.delete`). */
const TRASH = /^del-([0-9a-f]{64})\.[0-9a-f]+$/;

/** Reads, or on a new store decides and durably records, the layout of the store at `root`. */
export function fsLayoutOf(root: string): FsLayout {
  const marker = path.join(root, 'LAYOUT');
  try {
    const v = fs.readFileSync(marker, 'utf8').trim();
    if (v === 'flat' || v === 'nested') return v;
    throw new Error(`unknown blob store layout "${v}" in ${marker}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(root, { recursive: true });
  // Shard directories without a marker: a store from before the marker, in the nested layout.
  const layout: FsLayout = fs.readdirSync(root).some((n) => SHARD.test(n)) ? 'nested' : 'flat';
  const tmp = `${marker}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, `${layout}\n`);
  fsyncPathSync(tmp);
  fs.renameSync(tmp, marker);
  fsyncPathSync(root);
  return layout;
}

function fsyncPathSync(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Blobs as files under `<root>/<aa>/<sha256>` (or `<root>/<aa>/<bb>/<sha256>`, see {@link FsLayout}).
 * Writes go to a temp name (`<root>/tmp/…`, or `<sha256>.<random>.tmp` beside the final name for
 * batches), are synced, then renamed into place, so a crash never leaves a partial blob under its
 * final name (only a temp file, which no lookup sees).
 *
 * A blob's stored time is its file's mtime: a put of a blob that exists sets it to now (`utimes`),
 * and a conditional delete compares it with `unusedSince` after moving the file aside (see
 * {@link FsBlobStore.delete}).
 */
export class FsBlobStore implements BlobStore {
  readonly kind = 'file' as const;
  private readonly tmp: string;
  /** Shard directories known to exist (they are never removed). */
  private readonly dirs = new Map<string, Promise<void>>();
  private fsWriter: FsWriter | null = null;

  readonly layout: FsLayout;

  constructor(private readonly root: string) {
    this.layout = fsLayoutOf(root);
    this.tmp = path.join(root, 'tmp');
    fs.mkdirSync(this.tmp, { recursive: true });
    this.restoreTrash();
  }

  /**
   * Puts back every blob a conditional delete had moved aside when the process stopped (between its
   * rename and its decision): the blob may have been freshened by a put that counted on it. One that
   * is still unused goes at the next sweep. Runs before anything else can use the store, so no
   * delete of this process is in flight; `removeStaleTemp` never touches trash files. Should another
   * process sharing the directory be mid-delete, putting its trash back only keeps that blob one
   * sweep longer (its `delete` tolerates the trash vanishing).
   */
  private restoreTrash(): void {
    for (const name of fs.readdirSync(this.tmp)) {
      const m = TRASH.exec(name);
      if (!m) continue;
      const trash = path.join(this.tmp, name);
      const final = this.pathOf(m[1]!);
      fs.mkdirSync(path.dirname(final), { recursive: true });
      try {
        fs.linkSync(trash, final);
        fsyncPathSync(path.dirname(final));
      } catch (err) {
        // EEXIST: the blob was stored again meanwhile (same digest, same bytes). ENOENT: another
        // process sharing the store finished with this trash (removed or restored it) meanwhile.
        const code = errCode(err);
        if (code === 'ENOENT') continue;
        if (code !== 'EEXIST') throw err;
      }
      fs.rmSync(trash, { force: true });
    }
  }

  pathOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new Error('invalid blob digest');
    if (this.layout === 'flat') return path.join(this.root, sha256.slice(0, 2), sha256);
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  put(sha256: string, size: number, body: Readable): Promise<{ created: boolean }> {
    return withBody(body, async () => {
      const final = this.pathOf(sha256);
      if (await freshen(final)) {
        body.resume();
        return { created: false };
      }
      const tmpFile = path.join(this.tmp, `${sha256}.${randomBytes(6).toString('hex')}`);
      await this.writeVerified(tmpFile, sha256, size, body, true);
      try {
        await this.ensureDir(path.dirname(final));
        await fsp.rename(tmpFile, final);
        await syncDir(path.dirname(final));
        return { created: true };
      } catch (err) {
        await fsp.rm(tmpFile, { force: true });
        throw err;
      }
    });
  }

  /**
   * Batch writes: each blob goes to `tmp/` unsynced. Small in-memory blobs are grouped and written by
   * a worker thread with plain blocking calls (no thread-pool round trip per file, no event-loop
   * stall). `commit` waits for them, flushes all their data with one `syncfs`, renames them into
   * place (worker again) and flushes the names with a second `syncfs`. So a batch of thousands of
   * blobs costs two flushes, not one fsync per blob, and a crash before `commit` ends leaves only
   * temp files — never a partial blob under its final name.
   */
  beginBatch(): BlobBatch {
    const pending = new Map<string, string>();
    const store = this;
    const writer = this.writer();
    const inflight = new Set<Promise<void>>();
    let failure: unknown = null;
    let group: { files: string[]; bufs: Buffer[]; bytes: number } = { files: [], bufs: [], bytes: 0 };
    const flush = () => {
      if (!group.files.length) return;
      const g = group;
      group = { files: [], bufs: [], bytes: 0 };
      const packed = new Uint8Array(g.bytes);
      let off = 0;
      for (const b of g.bufs) {
        packed.set(b, off);
        off += b.length;
      }
      const msg = { op: 'write', files: g.files, lengths: g.bufs.map((b) => b.length), data: packed.buffer };
      const p: Promise<void> = writer
        .call(msg, [packed.buffer])
        .catch((err) => {
          failure ??= err;
        })
        .finally(() => inflight.delete(p));
      inflight.add(p);
    };
    const tmpName = (sha256: string) => path.join(store.tmp, `${sha256}.${randomBytes(6).toString('hex')}`);
    return {
      put(sha256, size, body) {
        return withBody(body, async () => {
          const final = store.pathOf(sha256);
          if (pending.has(sha256) || (await freshen(final))) {
            body.resume();
            return { created: false };
          }
          const tmpFile = tmpName(sha256);
          await store.writeVerified(tmpFile, sha256, size, body, false);
          pending.set(sha256, tmpFile);
          return { created: true };
        });
      },
      async putBuffer(sha256, bytes, opts) {
        const final = store.pathOf(sha256);
        if (!opts?.verified) verifyDigest(sha256, bytes);
        if (pending.has(sha256)) return;
        // No existence check: the caller asks only for blobs it does not know, and a rename over an
        // existing blob swaps in identical bytes that were synced before the rename — and a stored
        // time (the temp file's mtime) from this batch, so the blob counts as fresh.
        // The temp file sits next to its final name: the rename at commit stays inside one directory
        // (cheap, no cross-directory rename lock) and the shard directory is made while bytes are
        // still arriving. Its name never matches a digest, so `has`/`list` never see it.
        const tmpFile = `${final}.${randomBytes(6).toString('hex')}.tmp`;
        pending.set(sha256, tmpFile);
        group.files.push(tmpFile);
        group.bufs.push(bytes);
        group.bytes += bytes.length;
        if (group.files.length >= WRITE_GROUP_FILES || group.bytes >= WRITE_GROUP_BYTES) flush();
        while (inflight.size >= WRITE_GROUPS_IN_FLIGHT) await Promise.race(inflight);
      },
      async commit() {
        flush();
        await Promise.all([...inflight]);
        if (failure) throw failure;
        const items = [...pending.entries()];
        if (!items.length) return;
        // Data first: every temp file of the batch durable before any name points at it. A small
        // batch fsyncs its own files and directories; a large one flushes the filesystem once
        // (`syncfs`), which also flushes other writers' data — worth it only for many files.
        const small = items.length <= SMALL_BATCH_FILES;
        if (small || !(await syncFs(store.root))) {
          await writer.call({ op: 'fsync', files: items.map(([, f]) => f) });
        }
        const per = Math.ceil(items.length / writer.size);
        await Promise.all(
          Array.from({ length: writer.size }, (_, lane) => {
            const pairs = items
              .slice(lane * per, (lane + 1) * per)
              .map(([sha256, tmpFile]) => [tmpFile, store.pathOf(sha256)]);
            return pairs.length ? writer.call({ op: 'rename', pairs }, [], lane) : null;
          }),
        );
        pending.clear();
        // Then the names: every touched directory, or one filesystem flush.
        if (small || !(await syncFs(store.root))) {
          const dirs = new Set<string>([store.root]);
          for (const [sha256] of items) {
            const dir = path.dirname(store.pathOf(sha256));
            dirs.add(dir);
            dirs.add(path.dirname(dir));
          }
          await writer.call({ op: 'fsync', files: [...dirs] });
        }
      },
      async abort() {
        group = { files: [], bufs: [], bytes: 0 };
        await Promise.allSettled([...inflight]);
        const files = [...pending.values()];
        pending.clear();
        if (files.length) await writer.call({ op: 'remove', files }).catch(() => {});
      },
    };
  }

  /** The batch writer thread (started on first use; keeps the process alive only while busy). */
  private writer(): FsWriter {
    this.fsWriter ??= new FsWriter();
    return this.fsWriter;
  }

  /** `mkdir -p` once per shard directory per process (concurrent callers share one call). */
  private ensureDir(dir: string): Promise<void> {
    let p = this.dirs.get(dir);
    if (!p) {
      p = fsp.mkdir(dir, { recursive: true }).then(
        () => {},
        (err) => {
          this.dirs.delete(dir);
          throw err;
        },
      );
      this.dirs.set(dir, p);
    }
    return p;
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

  /**
   * Unconditional: unlinks the file (false when there was none). Conditional (`unusedSince`): moves
   * the file aside to `tmp/del-<sha256>.<random>` (one atomic rename), then reads the mtime of what it
   * moved. A put that freshened the blob before the rename left a new mtime there, so the file is
   * linked back under its name; a put whose `utimes` came after the rename got ENOENT and writes the
   * blob anew. Either way a blob a put counted on stays. Readers may miss the blob for the moment
   * between rename and link-back (only blobs the sweep found unreferenced are ever moved aside).
   * A crash while the file is aside is undone when the store is next opened (`restoreTrash`).
   */
  async delete(sha256: string, opts?: DeleteOptions): Promise<boolean> {
    const final = this.pathOf(sha256);
    if (!opts?.unusedSince) return unlinkIfThere(final);
    const cutoff = deleteCutoffMs(opts.unusedSince);
    const trash = path.join(this.tmp, `del-${sha256}.${randomBytes(6).toString('hex')}`);
    try {
      await fsp.rename(final, trash);
    } catch (err) {
      if (errCode(err) === 'ENOENT') return false;
      throw err;
    }
    let mtimeMs: number;
    try {
      mtimeMs = (await fsp.stat(trash)).mtimeMs;
    } catch (err) {
      // ENOENT: another process sharing the store, opening it, put the blob back (`restoreTrash`).
      if (errCode(err) === 'ENOENT') return false;
      // Never delete what could not be checked.
      await this.restore(trash, final);
      throw err;
    }
    if (mtimeMs >= cutoff) {
      await this.restore(trash, final);
      return false;
    }
    // False if, again, an opening process put it back meanwhile.
    return unlinkIfThere(trash);
  }

  /**
   * Links a moved-aside blob back under its name (synced), then removes the trash name. Tolerates a
   * newer copy under the name (EEXIST: same digest, same bytes) and trash that another process
   * opening the store has restored already (ENOENT).
   */
  private async restore(trash: string, final: string): Promise<void> {
    const dir = path.dirname(final);
    await this.ensureDir(dir);
    try {
      await fsp.link(trash, final);
      await syncDir(dir);
    } catch (err) {
      const code = errCode(err);
      if (code === 'ENOENT') return;
      if (code !== 'EEXIST') throw err;
    }
    await unlinkIfThere(trash);
  }

  /** The directories blobs sit in: `<aa>` (flat) or `<aa>/<bb>` (nested). */
  private async *shardDirs(): AsyncIterable<string> {
    for (const a of await readdirSafe(this.root)) {
      if (!SHARD.test(a)) continue;
      const dir = path.join(this.root, a);
      if (this.layout === 'flat') yield dir;
      else for (const b of await readdirSafe(dir)) if (SHARD.test(b)) yield path.join(dir, b);
    }
  }

  async *list(): AsyncIterable<string> {
    for await (const dir of this.shardDirs()) {
      for (const name of await readdirSafe(dir)) if (SHA256_HEX.test(name)) yield name;
    }
  }

  /**
   * Trash files of conditional deletes (`tmp/del-*`) are left alone: the delete that made one removes
   * or restores it, and one a crash left is restored when the store is next opened.
   */
  async removeStaleTemp(cutoff: Date): Promise<number> {
    const limit = cutoff.getTime();
    let removed = 0;
    const removeIfStale = async (file: string) => {
      try {
        if ((await fsp.stat(file)).mtimeMs < limit) {
          await fsp.rm(file, { force: true });
          removed++;
        }
      } catch {
        // Gone already (renamed into place or removed by its writer).
      }
    };
    for (const name of await readdirSafe(this.tmp)) {
      if (!TRASH.test(name)) await removeIfStale(path.join(this.tmp, name));
    }
    // Batch temp files sit beside their final names: `<sha256>.<random>.tmp` in the shard directories.
    for await (const dir of this.shardDirs()) {
      for (const name of await readdirSafe(dir)) {
        if (name.endsWith('.tmp')) await removeIfStale(path.join(dir, name));
      }
    }
    return removed;
  }

  async close(): Promise<void> {
    await this.fsWriter?.close();
    this.fsWriter = null;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fsp.access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Sets a stored blob's mtime (its stored time) to now; false when there is no such file, or when its
 * times may not be set (a file another user owns: EPERM/EACCES) — the caller then writes the blob,
 * which renames a fresh copy over it. Not synced: a stored time lost in a crash only matters to a
 * sweep racing a put, and the crash ended that sweep.
 */
async function freshen(file: string): Promise<boolean> {
  const now = new Date();
  try {
    await fsp.utimes(file, now, now);
    return true;
  } catch (err) {
    const code = errCode(err);
    if (code === 'ENOENT' || code === 'EPERM' || code === 'EACCES') return false;
    throw err;
  }
}

async function unlinkIfThere(file: string): Promise<boolean> {
  try {
    await fsp.unlink(file);
    return true;
  } catch (err) {
    if (errCode(err) === 'ENOENT') return false;
    throw err;
  }
}

function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
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

/** A write group goes to the writer thread at this many files or bytes. */
const WRITE_GROUP_FILES = 256;
const WRITE_GROUP_BYTES = 4 * 1024 * 1024;
/** Groups queued at the writer before `putBuffer` waits (bounds the memory a batch holds). */
const WRITE_GROUPS_IN_FLIGHT = 4;
/** Batches up to this many files fsync each file and directory instead of the whole filesystem. */
const SMALL_BATCH_FILES = 64;
const WRITER_THREADS = Math.max(2, Math.min(4, os.availableParallelism()));

/**
 * Worker threads running a batch's blocking file calls (see fs-writer.mjs). Two by default: file
 * creation in different shard directories proceeds in parallel in the kernel.
 */
class FsWriter {
  private readonly lanes: WorkerThread[];

  constructor(size = WRITER_THREADS) {
    this.lanes = Array.from(
      { length: size },
      () => new WorkerThread(new URL('./fs-writer.mjs', import.meta.url), 'blob writer thread'),
    );
  }

  get size(): number {
    return this.lanes.length;
  }

  /** Runs `msg` on the least busy thread (or on thread `lane`). */
  call(msg: Record<string, unknown>, transfer: ArrayBuffer[] = [], lane?: number): Promise<void> {
    let i = lane ?? 0;
    if (lane === undefined) {
      for (let k = 1; k < this.lanes.length; k++) if (this.lanes[k]!.pending < this.lanes[i]!.pending) i = k;
    }
    return this.lanes[i]!.call(msg, transfer);
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.terminate()));
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
