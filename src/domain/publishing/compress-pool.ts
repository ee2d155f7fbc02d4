import os from 'node:os';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { BROTLI_QUALITY, GZIP_LEVEL, MIN_SAVING } from '../../site/compress.ts';
import { packBuffers, type WorkerReply, WorkerThread } from '../../threads.ts';

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

/**
 * Publish-time compression off the event loop: brotli (quality `BROTLI_QUALITY`) and gzip (level
 * `GZIP_LEVEL`) variants computed in worker threads, one per core (at most 4), with the same rules as
 * `compressVariants` (a variant is kept only when it saves at least `MIN_SAVING` of the size).
 * Files travel in groups packed into one transferred buffer, so thousands of small files cost a few
 * messages. Workers start on first use and keep the process alive only while they have work.
 */
export class CompressPool {
  private readonly workers: Array<WorkerThread<Variants[]>>;
  private next = 0;

  constructor(size = Math.max(1, Math.min(4, os.availableParallelism()))) {
    this.workers = Array.from(
      { length: size },
      () =>
        new WorkerThread(
          new URL('./compress-worker.mjs', import.meta.url),
          'compression worker',
          { workerData: { brotliQuality: BROTLI_QUALITY, gzipLevel: GZIP_LEVEL, minSaving: MIN_SAVING } },
          decodeVariants,
        ),
    );
  }

  get size(): number {
    return this.workers.length;
  }

  /** Variants of each buffer, in order. */
  compress(buffers: Buffer[]): Promise<Variants[]> {
    if (!buffers.length) return Promise.resolve([]);
    const packed = packBuffers(buffers);
    // Least busy worker (round robin among equals).
    let best = -1;
    for (let k = 0; k < this.workers.length; k++) {
      const i = (this.next + k) % this.workers.length;
      if (best === -1 || this.workers[i]!.pending < this.workers[best]!.pending) best = i;
    }
    this.next = (best + 1) % this.workers.length;
    return this.workers[best]!.call({ data: packed.buffer, lengths: buffers.map((b) => b.length) }, [
      packed.buffer,
    ]);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** A worker's answer: variants packed into one transferred buffer, located by offset and length. */
function decodeVariants(m: WorkerReply): Variants[] {
  const data = m.data as ArrayBuffer | undefined;
  const results = m.results as
    | Array<{ sha256: string; br?: PackedVariant; gzip?: PackedVariant }>
    | undefined;
  if (m.error !== undefined || !data || !results) throw new Error(`compression failed: ${m.error}`);
  const out = Buffer.from(data);
  return results.map((r) => {
    const v: Variants = { sha256: r.sha256 };
    for (const k of ['br', 'gzip'] as const) {
      const p = r[k];
      if (p) v[k] = { sha256: p.sha256, bytes: out.subarray(p.offset, p.offset + p.length) };
    }
    return v;
  });
}

/** The process-wide pool (compression work is CPU-bound: one pool for every publish). */
let shared: CompressPool | null = null;
export function compressPool(): CompressPool {
  shared ??= new CompressPool();
  return shared;
}

export interface CompressedVariants {
  br?: Buffer;
  gzip?: Buffer;
}

/** Compresses `buf` with brotli (quality 5) and gzip (level 6); keeps a variant only if it saves ≥ 5 %. */
export function compressVariants(buf: Buffer): CompressedVariants {
  const out: CompressedVariants = {};
  if (buf.length === 0) return out;
  const limit = buf.length * (1 - MIN_SAVING);
  const br = brotliCompressSync(buf, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: buf.length,
    },
  });
  if (br.length <= limit) out.br = br;
  const gz = gzipSync(buf, { level: GZIP_LEVEL });
  if (gz.length <= limit) out.gzip = gz;
  return out;
}
