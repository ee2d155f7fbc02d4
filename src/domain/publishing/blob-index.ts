import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { type BlobStore, readAtMost } from '../../blobs/port.ts';
import type { Clock } from '../../clock.ts';
import type { Store } from '../../store/repos/index.ts';
import { BLOB_TOUCH_INTERVAL_MS } from './model.ts';

/**
 * What publishing knows of stored bytes: the blob index's rows (which blobs exist, their variants)
 * over the blob store's bytes. Every collaborator that stores or relies on a blob goes through it.
 */
export class BlobIndex {
  constructor(
    private readonly store: Store,
    readonly blobs: BlobStore,
    private readonly clock: Clock,
  ) {}

  /**
   * The `variants` column of every stored blob among `shas` (absent = not stored), for a version that
   * is about to rely on them. Rows not used for `BLOB_TOUCH_INTERVAL_MS` are touched (`used_at` = now)
   * before they are answered: the sweep deletes a row only while it is older than its cutoff (at least
   * `2 × BLOB_TOUCH_INTERVAL_MS` back), in the same statement, so it can't take a blob this answer
   * says is stored. A stale row the sweep deleted between the read and the touch is answered as
   * absent, and the publisher uploads those bytes again.
   */
  async known(shas: string[]): Promise<Map<string, string | null>> {
    const out = new Map<string, string | null>();
    const nowMs = this.clock.now().getTime();
    const now = new Date(nowMs).toISOString();
    const stale = new Date(nowMs - BLOB_TOUCH_INTERVAL_MS).toISOString();
    const repo = this.store.repos.blobRecords;
    const rows = await repo.among(shas);
    // Only stale rows are written: a first publish (nothing stored) and a re-publish within the
    // interval write nothing.
    const old = rows.filter((r) => r.used_at < stale).map((r) => r.sha256);
    let gone = new Set<string>();
    if (old.length && (await repo.touch(old, now, stale)) < old.length) {
      // Some were swept meanwhile (or touched by another publisher: those are still there).
      const still = await repo.recorded(old);
      gone = new Set(old.filter((d) => !still.has(d)));
    }
    for (const r of rows) if (!gone.has(r.sha256)) out.set(r.sha256, r.variants);
    return out;
  }

  /** Records blobs the store holds durably (one transaction). */
  record(blobs: Array<{ sha256: string; size: number; variants?: string | null }>): Promise<void> {
    if (!blobs.length) return Promise.resolve();
    const now = this.clock.now().toISOString();
    return this.store.transaction((repos) => repos.blobRecords.record(blobs, now));
  }

  /** A stored blob's bytes, refused past `max`. */
  async read(sha256: string, max: number): Promise<Buffer> {
    return readAtMost(await this.blobs.get(sha256), max, () => new Error('blob larger than expected'));
  }

  /** Stores bytes made here (a rendered template); the caller records them. */
  async putBuffer(buf: Buffer): Promise<{ sha256: string; size: number }> {
    const sha256 = createHash('sha256').update(buf).digest('hex');
    const s = new PassThrough();
    s.end(buf);
    await this.blobs.put(sha256, buf.length, s);
    return { sha256, size: buf.length };
  }
}
