import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { BROTLI_QUALITY, GZIP_LEVEL, MIN_SAVING } from '../../serve/compress.ts';

/** One compressed variant inside a result buffer. */
export interface PackedVariant {
  sha256: string;
  offset: number;
  length: number;
}

export interface Variants {
  /** The digest of the input itself. */
  sha256: string;
  br?: { sha256: string; bytes: Buffer };
  gzip?: { sha256: string; bytes: Buffer };
}

interface Job {
  resolve: (v: Variants[]) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  jobs: Map<number, Job>;
}

/**
 * Publish-time compression off the event loop: brotli (quality `BROTLI_QUALITY`) and gzip (level
 * `GZIP_LEVEL`) variants computed in worker threads, one per core (at most 4), with the same rules as
 * `compressVariants` (a variant is kept only when it saves at least `MIN_SAVING` of the size).
 * Files travel in groups packed into one transferred buffer, so thousands of small files cost a few
 * messages. Workers start on first use and keep the process alive only while they have work.
 */
export class CompressPool {
  private readonly slots: Array<Slot | null>;
  private next = 0;
  private seq = 0;

  constructor(size = Math.max(1, Math.min(4, os.availableParallelism()))) {
    this.slots = Array.from({ length: size }, () => null);
  }

  get size(): number {
    return this.slots.length;
  }

  private slot(i: number): Slot {
    const existing = this.slots[i];
    if (existing) return existing;
    const worker = new Worker(new URL('./compress-worker.mjs', import.meta.url), {
      workerData: { brotliQuality: BROTLI_QUALITY, gzipLevel: GZIP_LEVEL, minSaving: MIN_SAVING },
    });
    worker.unref();
    const slot: Slot = { worker, jobs: new Map() };
    const failAll = (err: Error) => {
      if (this.slots[i] === slot) this.slots[i] = null;
      for (const j of slot.jobs.values()) j.reject(err);
      slot.jobs.clear();
    };
    worker.on(
      'message',
      (m: {
        id: number;
        error?: string;
        data?: ArrayBuffer;
        results?: Array<{ sha256: string; br?: PackedVariant; gzip?: PackedVariant }>;
      }) => {
        const job = slot.jobs.get(m.id);
        if (!job) return;
        slot.jobs.delete(m.id);
        if (!slot.jobs.size) worker.unref();
        if (m.error !== undefined || !m.data || !m.results) {
          job.reject(new Error(`compression failed: ${m.error}`));
          return;
        }
        const out = Buffer.from(m.data);
        job.resolve(
          m.results.map((r) => {
            const v: Variants = { sha256: r.sha256 };
            for (const k of ['br', 'gzip'] as const) {
              const p = r[k];
              if (p) v[k] = { sha256: p.sha256, bytes: out.subarray(p.offset, p.offset + p.length) };
            }
            return v;
          }),
        );
      },
    );
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`compression worker exited (${code})`)));
    this.slots[i] = slot;
    return slot;
  }

  /** Variants of each buffer, in order. */
  compress(buffers: Buffer[]): Promise<Variants[]> {
    if (!buffers.length) return Promise.resolve([]);
    const total = buffers.reduce((s, b) => s + b.length, 0);
    const packed = new Uint8Array(total);
    let off = 0;
    for (const b of buffers) {
      packed.set(b, off);
      off += b.length;
    }
    // Least busy worker (round robin among equals).
    let best = -1;
    for (let k = 0; k < this.slots.length; k++) {
      const i = (this.next + k) % this.slots.length;
      const load = this.slots[i]?.jobs.size ?? 0;
      if (best === -1 || load < (this.slots[best]?.jobs.size ?? 0)) best = i;
    }
    this.next = (best + 1) % this.slots.length;
    const slot = this.slot(best);
    const id = ++this.seq;
    return new Promise<Variants[]>((resolve, reject) => {
      slot.jobs.set(id, { resolve, reject });
      // Busy workers keep the process alive until they answer; idle ones never do.
      slot.worker.ref();
      slot.worker.postMessage({ id, data: packed.buffer, lengths: buffers.map((b) => b.length) }, [
        packed.buffer,
      ]);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s?.worker.terminate()));
    this.slots.fill(null);
  }
}

/** The process-wide pool (compression work is CPU-bound: one pool for every publish). */
let shared: CompressPool | null = null;
export function compressPool(): CompressPool {
  shared ??= new CompressPool();
  return shared;
}
