import { createHash, hash } from 'node:crypto';
import fs from 'node:fs';
import type { Worker } from 'node:worker_threads';

/**
 * Reading and hashing files on worker threads, the main thread taking a share. The work is cut into
 * units (a run of small files, or one large file) that every thread claims from one shared counter,
 * so a thread that starts late or reads slowly simply takes fewer: no thread waits for another, and
 * no message is needed to hand out work.
 *
 * The CLI runs from one esbuild bundle, so a worker cannot be loaded from a file next to this one:
 * its code is plain JavaScript kept here as a string (`eval` workers). The hashing itself is written
 * once, in {@link CORE}, and compiled on the main thread too, so every thread reads and hashes alike.
 */

/** A file on disk to hash, with its size when collected; `keep`: return its bytes too. */
export interface ThreadFile {
  abs: string;
  size: number;
  keep: boolean;
}

export interface ThreadOptions {
  /** Worker threads to start. */
  workers: number;
  /** Whether the main thread hashes a share too (tests turn it off to exercise the workers alone). */
  mainShare: boolean;
  /** Called as runs of files are done: how many files, and their sizes when collected. */
  onProgress?: (files: number, bytes: number) => void;
}

export interface ThreadResults {
  /** Hex sha256 per file, in input order. */
  sha256: string[];
  /** The file's bytes where `keep` was asked and the file still had its collected size. */
  bytes: (Buffer | undefined)[];
  /** Files hashed on workers (the rest on the main thread). */
  filesOnWorkers: number;
}

/** What {@link CORE} works on. */
interface Job {
  paths: string[];
  sizes: Float64Array;
  /** Where each kept file's bytes go in `kept`, or -1 for a file whose bytes are not kept. */
  at: Float64Array;
  /** The bytes of every kept file (shared memory): each thread reads its files straight into place. */
  kept: Uint8Array;
  /** Unit `u` is the files from `starts[u]` to `starts[u + 1]`. */
  starts: Int32Array;
}

interface UnitResult {
  u: number;
  /** The unit's digests, 64 hex digits each. */
  sums: string;
  /** Kept files whose size changed since collected: their bytes are not returned. */
  inexact: number[];
}

interface WorkerError {
  u: number;
  error: { message: string; code?: string; errno?: number; syscall?: string; path?: string };
}

/** A run of small files is cut after this many files or bytes (large enough to make claiming cheap). */
const UNIT_FILES = 64;
const UNIT_BYTES = 1024 * 1024;
/** The main thread lets worker messages and timers in at least this often while it hashes its share. */
const YIELD_MS = 16;

/**
 * The body of `function (fs, createHash, hash)` returning `{ hashUnit }`: plain JavaScript, run by
 * workers and by the main thread. A kept file is read straight into its slot of `job.kept`, memory
 * shared by all threads, so its bytes reach the main thread without a copy or a transfer; other files
 * go through a reused scratch buffer. A file is hashed whole, as it is when read: one that grew or
 * shrank since it was collected is not kept (its bytes would not match its size).
 */
const CORE = `
'use strict';
const scratch = Buffer.allocUnsafe(1024 * 1024);
const one = Buffer.alloc(1);
/** Whether the file last hashed had its collected size (so its bytes are all in place). */
let exact = false;

function hashFile(file, size, into, at) {
  const fd = fs.openSync(file, 'r');
  try {
    if (into === null) {
      if (size >= scratch.length) {
        exact = false;
        return hashRest(fd, createHash('sha256'));
      }
      into = scratch;
      at = 0;
    }
    let n = 0;
    for (let r = 1; n < size && r > 0; n += r) r = fs.readSync(fd, into, at + n, size - n, null);
    // One byte more says whether that was all (it is, unless the file grew since it was collected).
    exact = n === size && fs.readSync(fd, one, 0, 1, null) === 0;
    if (exact || n < size) return hash('sha256', into.subarray(at, at + n), 'hex');
    return hashRest(fd, createHash('sha256').update(into.subarray(at, at + n)).update(one));
  } finally {
    fs.closeSync(fd);
  }
}

function hashRest(fd, h) {
  for (let r; (r = fs.readSync(fd, scratch, 0, scratch.length, null)) > 0; ) h.update(scratch.subarray(0, r));
  return h.digest('hex');
}

function hashUnit(job, u) {
  let sums = '';
  const inexact = [];
  for (let i = job.starts[u]; i < job.starts[u + 1]; i++) {
    const keep = job.at[i] >= 0;
    sums += hashFile(job.paths[i], job.sizes[i], keep ? job.kept : null, job.at[i]);
    if (keep && !exact) inexact.push(i);
  }
  return { u, sums, inexact };
}

return { hashUnit };
`;

/** A worker: claims units until none is left, posts each result (or the first error) and ends. */
const WORKER = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const crypto = require('node:crypto');
const core = (function (fs, createHash, hash) {${CORE}})(require('node:fs'), crypto.createHash, crypto.hash);
const job = workerData;
const units = job.starts.length - 1;
for (;;) {
  const u = Atomics.add(workerData.next, 0, 1);
  if (u >= units) break;
  let r;
  try {
    r = core.hashUnit(job, u);
  } catch (e) {
    const { message, code, errno, syscall, path } = e;
    parentPort.postMessage({ u, error: { message: String(message), code, errno, syscall, path } });
    break;
  }
  parentPort.postMessage(r);
}
`;

let mainCore: { hashUnit(job: Job, u: number): UnitResult } | undefined;

/** The same hashing on the main thread. */
function core() {
  mainCore ??= new Function('fs', 'createHash', 'hash', CORE)(fs, createHash, hash) as typeof mainCore;
  return mainCore!;
}

/** An error from a worker as a plain `Error` with the fs error's fields (the message names the file). */
function toError(e: WorkerError['error']): Error {
  return Object.assign(new Error(e.message), e);
}

/**
 * Units in claiming order: large files first, largest first (so none is left to finish alone at the
 * end), each on its own; then the rest in runs, in input order. Returns the job and, per position in
 * it, the input index.
 */
function plan(files: ThreadFile[]): { job: Job; order: number[] } {
  const large: number[] = [];
  const order: number[] = [];
  for (let i = 0; i < files.length; i++) {
    if (files[i]!.size > UNIT_BYTES) large.push(i);
  }
  large.sort((a, b) => files[b]!.size - files[a]!.size);
  const n = files.length;
  const paths: string[] = new Array(n);
  const sizes = new Float64Array(n);
  const at = new Float64Array(n);
  let keptBytes = 0;
  const starts = [0];
  const add = (i: number) => {
    const f = files[i]!;
    const k = order.length;
    order.push(i);
    paths[k] = f.abs;
    sizes[k] = f.size;
    at[k] = f.keep ? keptBytes : -1;
    if (f.keep) keptBytes += f.size;
  };
  for (const i of large) {
    add(i);
    starts.push(order.length);
  }
  let runFiles = 0;
  let runBytes = 0;
  for (let i = 0; i < n; i++) {
    const size = files[i]!.size;
    if (size > UNIT_BYTES) continue;
    add(i);
    runBytes += size;
    if (++runFiles === UNIT_FILES || runBytes >= UNIT_BYTES) {
      starts.push(order.length);
      runFiles = 0;
      runBytes = 0;
    }
  }
  if (runFiles > 0) starts.push(order.length);
  const kept = new Uint8Array(new SharedArrayBuffer(keptBytes));
  return { job: { paths, sizes, at, kept, starts: Int32Array.from(starts) }, order };
}

/**
 * sha256 (and, where asked, the bytes) of files on disk, on `workers` worker threads and the main
 * thread. Workers are terminated before this returns or throws; an unreadable file rejects with the
 * fs error (its message names the file). The main thread reads with blocking calls and yields between
 * units, so it may be busy for as long as one large file takes.
 */
export async function hashOnThreads(files: ThreadFile[], o: ThreadOptions): Promise<ThreadResults> {
  if (o.workers < 1 && !o.mainShare) throw new Error('hashOnThreads: no thread to hash on.');
  const { job, order } = plan(files);
  const units = job.starts.length - 1;
  const next = new Int32Array(new SharedArrayBuffer(4));
  const sha256: string[] = new Array(files.length);
  const bytes: (Buffer | undefined)[] = new Array(files.length);
  let filesOnWorkers = 0;
  let remaining = units;

  let settle!: () => void;
  let fail!: (e: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  // The main thread's own error may come first; a later one from a worker is then of no interest.
  finished.catch(() => {});
  const stop = (e: unknown) => {
    Atomics.store(next, 0, units);
    fail(e);
  };
  const accept = (r: UnitResult, onWorker: boolean) => {
    const from = job.starts[r.u]!;
    const to = job.starts[r.u + 1]!;
    let unitBytes = 0;
    for (let k = from; k < to; k++) {
      const i = order[k]!;
      const size = job.sizes[k]!;
      sha256[i] = r.sums.slice((k - from) * 64, (k - from + 1) * 64);
      if (job.at[k]! >= 0 && !r.inexact.includes(k)) bytes[i] = Buffer.from(job.kept.buffer, job.at[k], size);
      unitBytes += size;
    }
    if (onWorker) filesOnWorkers += to - from;
    o.onProgress?.(to - from, unitBytes);
    if (--remaining === 0) settle();
  };

  const workers: Worker[] = [];
  try {
    if (units === 0) settle();
    if (o.workers > 0) {
      // Loaded only when needed: every command of the CLI would pay for it at start otherwise (~1.5 ms).
      const { Worker } = await import('node:worker_threads');
      const workerData = { ...job, next };
      for (let w = 0; w < o.workers; w++) {
        const worker = new Worker(WORKER, { eval: true, workerData });
        worker.on('message', (m: UnitResult | WorkerError) => {
          if ('error' in m) stop(toError(m.error));
          else accept(m, true);
        });
        worker.on('error', stop);
        worker.on('exit', (code) => {
          if (code !== 0 && remaining > 0) stop(new Error(`A hashing thread stopped (exit code ${code}).`));
        });
        workers.push(worker);
      }
    }
    if (o.mainShare) {
      const hashUnit = core().hashUnit;
      let since = performance.now();
      for (let u = Atomics.add(next, 0, 1); u < units; u = Atomics.add(next, 0, 1)) {
        accept(hashUnit(job, u), false);
        if (performance.now() - since > YIELD_MS) {
          await new Promise(setImmediate);
          since = performance.now();
        }
      }
    }
    await finished;
  } finally {
    Atomics.store(next, 0, units);
    // Not awaited: a terminated worker holds nothing the caller needs, and the process may exit now.
    for (const w of workers) w.terminate().catch(() => {});
  }
  return { sha256, bytes, filesOnWorkers };
}
