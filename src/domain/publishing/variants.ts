import { PassThrough } from 'node:stream';
import type { Clock } from '../../clock.ts';
import type { ManifestEntry } from '../../site/types.ts';
import type { Store } from '../../store/repos/index.ts';
import type { BlobIndex } from './blob-index.ts';
import { compressPool } from './compress-pool.ts';
import { COMPRESS_GROUP_BYTES, COMPRESS_GROUP_FILES, MAX_COMPRESS_BYTES } from './model.ts';

/**
 * Compressed variants (br, gzip) of stored blobs: computed once per content on the worker pool and
 * recorded on the source blob's row, so every later version that holds the same bytes reuses them.
 */
export class VariantMaker {
  constructor(
    private readonly store: Store,
    private readonly index: BlobIndex,
    private readonly clock: Clock,
  ) {}

  /**
   * br/gzip variants for blobs that never had them computed (uploaded one by one, or rendered from a
   * template): compressed once per content on the worker pool, stored as one durable batch, recorded
   * on the source blob's row (later versions reuse them for free).
   */
  async compute(
    todo: Array<{ sha256: string; size: number }>,
  ): Promise<Map<string, NonNullable<ManifestEntry['encodings']>>> {
    const out = new Map<string, NonNullable<ManifestEntry['encodings']>>();
    if (!todo.length) return out;
    const batch = this.index.blobs.beginBatch?.() ?? null;
    const stored: Array<{ sha256: string; size: number }> = [];
    const put = async (sha256: string, buf: Buffer) => {
      if (batch) await batch.putBuffer(sha256, buf);
      else {
        const s = new PassThrough();
        s.end(buf);
        await this.index.blobs.put(sha256, buf.length, s);
      }
      stored.push({ sha256, size: buf.length });
      return { sha256, size: buf.length };
    };
    const pool = compressPool();
    const small = todo.filter((b) => b.size <= MAX_COMPRESS_BYTES);
    for (const b of todo) if (b.size > MAX_COMPRESS_BYTES) out.set(b.sha256, {});
    let next = 0;
    const work = async () => {
      while (next < small.length) {
        // Read a group, compress it in one worker message, store what was kept.
        const g: Array<{ sha256: string; size: number; bytes: Buffer }> = [];
        let n = 0;
        while (next < small.length && g.length < COMPRESS_GROUP_FILES && n < COMPRESS_GROUP_BYTES) {
          const b = small[next++]!;
          g.push({ ...b, bytes: Buffer.alloc(0) });
          n += b.size;
        }
        await Promise.all(
          g.map(async (x) => {
            x.bytes = await this.index.read(x.sha256, x.size);
          }),
        );
        const results = await pool.compress(g.map((x) => x.bytes));
        for (let i = 0; i < g.length; i++) {
          const enc: NonNullable<ManifestEntry['encodings']> = {};
          for (const k of ['br', 'gzip'] as const) {
            const r = results[i]![k];
            if (r) enc[k] = await put(r.sha256, r.bytes);
          }
          out.set(g[i]!.sha256, enc);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: pool.size + 1 }, work));
      await batch?.commit();
    } catch (err) {
      await batch?.abort();
      throw err;
    }
    const now = this.clock.now().toISOString();
    await this.store.transaction(async (repos) => {
      await repos.blobRecords.record(stored, now);
      await repos.blobRecords.record(
        todo.map((b) => ({
          sha256: b.sha256,
          size: b.size,
          variants: JSON.stringify(out.get(b.sha256) ?? {}),
        })),
        now,
      );
    });
    return out;
  }
}
