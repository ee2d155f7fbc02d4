import { createHash, hash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import ignore from 'ignore';
import type yauzl from 'yauzl';
import { UsageError } from './errors.ts';
import type { FileStat, HashCache } from './hash-cache.ts';
import { hashOnThreads } from './hash-threads.ts';

/** A file of the site: its path in the site, and where its bytes come from. */
export interface SourceFile {
  path: string;
  size: number;
  /** On disk, or in memory (from an archive). */
  abs?: string;
  bytes?: Buffer;
  sha256?: string;
  /** The file's stat when it was collected (files on disk). */
  stat?: FileStat;
}

export interface HashedFile extends SourceFile {
  sha256: string;
}

/** What is left out when no `.spacesignore` says otherwise (gitignore syntax; `!` re-includes). */
export const DEFAULT_IGNORES = ['.git', 'node_modules', '.spaces', '.*', '!.well-known'];

export function isArchive(file: string): boolean {
  return /\.(zip|tgz|tar\.gz)$/i.test(file);
}

/** Files of a directory, a single file, or an archive (.zip, .tar.gz). */
export async function collect(input: string): Promise<{ root: string; files: SourceFile[]; kind: string }> {
  let st: fs.Stats;
  try {
    st = await fsp.stat(input);
  } catch {
    throw new UsageError(`${input}: no such file or directory.`);
  }
  if (st.isDirectory()) return { root: input, files: await walk(input), kind: 'directory' };
  if (isArchive(input))
    return { root: path.dirname(input), files: await readArchive(input), kind: 'archive' };
  return {
    root: path.dirname(input),
    files: [{ path: path.basename(input), size: st.size, abs: path.resolve(input) }],
    kind: 'file',
  };
}

async function walk(root: string): Promise<SourceFile[]> {
  const realRoot = await fsp.realpath(root);
  const ig = ignore().add(DEFAULT_IGNORES);
  /** Only the default rules: they can match only names that start with a dot, or node_modules. */
  let defaultsOnly = true;
  try {
    ig.add(await fsp.readFile(path.join(root, '.spacesignore'), 'utf8'));
    defaultsOnly = false;
  } catch {
    // no .spacesignore: defaults only
  }
  const out: SourceFile[] = [];
  // Blocking calls throughout: a walk of thousands of entries is syscalls back to back, and each
  // thread-pool round trip of the async forms costs more than the call itself.
  function visit(dir: string, rel: string): void {
    const entries = fs.readdirSync(dir, { withFileTypes: true });
    for (const e of entries) {
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      const abs = `${dir}${path.sep}${e.name}`;
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        // A link may point anywhere: follow it only while it stays inside the site.
        let real: string;
        try {
          real = fs.realpathSync(abs);
        } catch {
          continue;
        }
        if (real !== realRoot && !real.startsWith(realRoot + path.sep)) continue;
        const s = fs.statSync(real);
        isDir = s.isDirectory();
        isFile = s.isFile();
      }
      const mayMatch = !defaultsOnly || e.name.startsWith('.') || e.name === 'node_modules';
      if (isDir) {
        if (mayMatch && ig.ignores(`${relPath}/`)) continue;
        visit(abs, relPath);
      } else if (isFile) {
        if (mayMatch && ig.ignores(relPath)) continue;
        out.push({ path: relPath, size: 0, abs });
      }
    }
  }
  visit(path.resolve(root), '');
  // Plain blocking stats: for thousands of small files they cost a few µs each, where the thread-pool
  // round trip of the async form costs tens.
  for (const f of out) {
    const s = fs.statSync(f.abs as string);
    f.size = s.size;
    f.stat = { size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, ino: s.ino };
  }
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

/** Archive entries must name safe relative paths; anything else is refused, never written. */
export function safeRelative(name: string): string | null {
  const p = name.replace(/\\/g, '/').replace(/^\.\//, '');
  if (!p || p.startsWith('/') || p.split('/').some((s) => s === '..' || s === '')) return null;
  return p;
}

async function readArchive(file: string): Promise<SourceFile[]> {
  if (/\.zip$/i.test(file)) return readZip(file);
  const { default: tar } = await import('tar-stream');
  const out: SourceFile[] = [];
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (h, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        const p = h.type === 'file' ? safeRelative(h.name) : null;
        if (h.type === 'file' && !p) return reject(new UsageError(`${file}: unsafe entry path "${h.name}".`));
        if (p) {
          const bytes = Buffer.concat(chunks);
          out.push({ path: p, size: bytes.length, bytes });
        }
        next();
      });
      stream.on('error', reject);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  fs.createReadStream(file)
    .pipe(zlib.createGunzip())
    .on('error', (e) => extract.destroy(e))
    .pipe(extract);
  await done;
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

async function readZip(file: string): Promise<SourceFile[]> {
  const { default: yauzl } = await import('yauzl');
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(new UsageError(`${file}: not a readable zip (${err?.message}).`));
      const out: SourceFile[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        const p = safeRelative(entry.fileName);
        if (!p) return reject(new UsageError(`${file}: unsafe entry path "${entry.fileName}".`));
        zip.openReadStream(entry, (e, s) => {
          if (e || !s) return reject(e);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c));
          s.on('end', () => {
            const bytes = Buffer.concat(chunks);
            out.push({ path: p, size: bytes.length, bytes });
            zip.readEntry();
          });
          s.on('error', reject);
        });
      });
      zip.on('end', () => resolve(out.sort((a, b) => (a.path < b.path ? -1 : 1))));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** Small files read for hashing keep their bytes for the upload, up to this much in all. */
const KEEP_BYTES = 64 * 1024 * 1024;
/** Files up to this size are read with one blocking call (cheaper than the thread pool's round trips). */
const SYNC_READ = 64 * 1024;
/**
 * Cache misses go to worker threads from this many files or bytes: below, threads don't pay (measured
 * on 2 cores). A worker takes 20-50 ms to start, and while it does (and compiles its code) it slows
 * the main thread down; small files cost mostly system calls, which gain less from a second thread
 * than hashing does. So 10,000 files of 2 KiB hash ~10% slower with a worker, 16,000 as fast, 40,000
 * ~30% faster; large files gain from ~32 MiB (1 GiB: 2x faster).
 */
const THREADS_FROM = { files: 16_000, bytes: 32 * 1024 * 1024 };

export interface HashOptions {
  /** Threads to hash on, the main thread included: min(4, available parallelism) unless given. */
  threads?: number;
  /** Cache misses from which workers are started: this many files, or bytes (default THREADS_FROM). */
  threadsFrom?: { files: number; bytes: number };
  /** Whether the main thread hashes a share when workers run (tests turn it off). Default true. */
  mainShare?: boolean;
  /** Filled in with how the work was done (for tests and benchmarks). */
  stats?: HashStats;
}

export interface HashStats {
  /** Worker threads started (0 when the misses were too few to pay for one). */
  workers: number;
  /** Files read and hashed on workers. */
  filesOnWorkers: number;
}

/**
 * sha256 of every file; `onFile` reports progress. With a {@link HashCache}, files on disk whose stat
 * is unchanged since a previous run are not read again. Small files read here keep their bytes
 * (`bytes`, within a budget) so an upload doesn't read them a second time. When the files left to
 * read are many or large, they are spread over worker threads (see hash-threads.ts); otherwise small
 * files are read here and larger ones `concurrency` at a time.
 */
export async function hashAll(
  files: SourceFile[],
  onFile?: (done: number, bytes: number) => void,
  concurrency = 16,
  cache?: HashCache,
  options: HashOptions = {},
): Promise<HashedFile[]> {
  let done = 0;
  let bytes = 0;
  // The cache answers without a read, and bytes in memory need none.
  const misses: SourceFile[] = [];
  let missBytes = 0;
  for (const f of files) {
    const cached = cache && f.abs && f.stat ? cache.lookup(f.path, f.stat) : null;
    if (cached) f.sha256 = cached;
    else if (f.bytes) f.sha256 = hash('sha256', f.bytes, 'hex');
    else {
      misses.push(f);
      missBytes += f.size;
      continue;
    }
    done++;
    bytes += f.size;
  }
  if (done) onFile?.(done, bytes);
  const stats = options.stats ?? { workers: 0, filesOnWorkers: 0 };
  stats.workers = 0;
  stats.filesOnWorkers = 0;
  if (misses.length === 0) return files as HashedFile[];
  const threads = options.threads ?? Math.min(4, os.availableParallelism());
  const mainShare = options.mainShare ?? true;
  const workers = threads - (mainShare ? 1 : 0);
  const from = options.threadsFrom ?? THREADS_FROM;
  const worthIt = misses.length >= from.files || missBytes >= from.bytes;
  if (workers < 1 || !worthIt) {
    await hashHere(misses, concurrency, cache, (n, b) => {
      done += n;
      bytes += b;
      onFile?.(done, bytes);
    });
    return files as HashedFile[];
  }

  // The byte budget is given out in file order, as when files are read here.
  let kept = 0;
  const keep = misses.map((f) => {
    if (f.size > SYNC_READ || kept + f.size > KEEP_BYTES) return false;
    kept += f.size;
    return true;
  });
  let reported = { done, bytes };
  stats.workers = workers;
  const r = await hashOnThreads(
    misses.map((f, i) => ({ abs: f.abs as string, size: f.size, keep: keep[i]! })),
    {
      workers,
      mainShare,
      onProgress: (n, b) => {
        done += n;
        bytes += b;
        // As often as when files are read here: every 500 small files, or every few large ones.
        if (done - reported.done >= 500 || bytes - reported.bytes >= 16 * 1024 * 1024) {
          onFile?.(done, bytes);
          reported = { done, bytes };
        }
      },
    },
  );
  stats.filesOnWorkers = r.filesOnWorkers;
  misses.forEach((f, i) => {
    f.sha256 = r.sha256[i]!;
    const b = r.bytes[i];
    if (b) f.bytes = b;
    if (cache && f.stat) cache.remember(f.path, f.stat, f.sha256);
  });
  if (reported.done !== done) onFile?.(done, bytes);
  return files as HashedFile[];
}

/**
 * Files on disk hashed on this thread: small ones synchronously (a small file costs less to read and
 * hash than to schedule), the rest `concurrency` at a time. `onFiles` is called every 500 small files
 * and after each large one.
 */
async function hashHere(
  files: SourceFile[],
  concurrency: number,
  cache: HashCache | undefined,
  onFiles: (files: number, bytes: number) => void,
): Promise<void> {
  let kept = 0;
  let n = 0;
  let b = 0;
  const todo: SourceFile[] = [];
  for (const f of files) {
    if (f.size > SYNC_READ) {
      todo.push(f);
      continue;
    }
    const buf = fs.readFileSync(f.abs as string);
    f.sha256 = hash('sha256', buf, 'hex');
    if (kept + buf.length <= KEEP_BYTES && buf.length === f.size) {
      f.bytes = buf;
      kept += buf.length;
    }
    if (cache && f.stat) cache.remember(f.path, f.stat, f.sha256);
    n++;
    b += f.size;
    if (n === 500) {
      onFiles(n, b);
      n = 0;
      b = 0;
    }
  }
  if (n) onFiles(n, b);
  await mapLimit(todo, concurrency, async (f) => {
    f.sha256 = await sha256Of(f.abs as string, f.size);
    if (cache && f.stat) cache.remember(f.path, f.stat, f.sha256);
    onFiles(1, f.size);
  });
}

async function sha256Of(abs: string, size: number): Promise<string> {
  if (size <= 4 * 1024 * 1024) return hash('sha256', await fsp.readFile(abs), 'hex');
  const h = createHash('sha256');
  for await (const c of fs.createReadStream(abs)) h.update(c as Buffer);
  return h.digest('hex');
}

/** The bytes of a file as a fetch body (a Blob backed by the file on disk: never buffered). */
export async function bodyOf(f: SourceFile): Promise<Blob> {
  if (f.bytes) return new Blob([new Uint8Array(f.bytes)]);
  return fs.openAsBlob(f.abs as string);
}

export async function mapLimit<T>(
  items: T[],
  limit: number,
  fn: (item: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T, i);
    }
  });
  await Promise.all(workers);
}
