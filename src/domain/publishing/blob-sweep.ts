import type { BlobStore } from '../../blobs/port.ts';
import type { Store } from '../../store/repos/index.ts';
import { BLOB_TOUCH_INTERVAL_MS } from './model.ts';

/**
 * The blob sweep (run as the `blobs.sweep` maintenance job): deletes content nothing references any
 * more, after a grace period, without ever taking bytes a concurrent publish relies on.
 */
export class BlobSweep {
  constructor(
    private readonly store: Store,
    private readonly blobs: BlobStore,
  ) {}

  /**
   * Deletes blobs that no ready or still-uploading version references, no space thumbnail names, that no remaining blob lists
   * as one of its compressed variants, and that nothing has stored or relied on for `graceMs`
   * (`blobs.used_at`). Races with publishers are settled per blob, never by the scan alone:
   * - the row is deleted only while it is still older than the cutoff, in that one statement — a
   *   version created since the scan touched the rows it relies on (`knownBlobs`), and an upload
   *   refreshes the row it records;
   * - then the bytes, only if the store has not stored or freshened them since the cutoff (a
   *   publisher that found the row gone uploads them again; `BlobStore.delete`'s `unusedSince`);
   * - a variant goes only after the blob listing it went, in this run or an earlier one.
   * `hooks.afterScan` runs between the scan and the deletions (tests use it to interleave a publish).
   */
  async run(
    now: Date,
    graceMs: number,
    hooks?: { afterScan?: () => Promise<void> },
  ): Promise<{ deleted: number; bytes: number }> {
    if (graceMs < 2 * BLOB_TOUCH_INTERVAL_MS) {
      throw new Error(`the blob grace period must be at least ${2 * BLOB_TOUCH_INTERVAL_MS} ms`);
    }
    const cutoffDate = new Date(now.getTime() - graceMs);
    // Temp files a crash left between write and rename. A day old at least: an upload batch keeps
    // its temp files until it commits, and unfinalized uploads expire after 24 hours anyway.
    await this.blobs.removeStaleTemp?.(new Date(now.getTime() - Math.max(graceMs, 24 * 3600_000)));
    const rows = await this.sweepRecorded(cutoffDate, hooks);
    const unrecorded = await this.sweepUnrecorded(cutoffDate);
    const deleted = rows.deleted + unrecorded.deleted;
    // Small blobs were rows: give their pages back to the file system (SQLite; new databases).
    if (deleted) await this.store.repos.blobRecords.releaseFreePages();
    return { deleted, bytes: rows.bytes + unrecorded.bytes };
  }

  /** The sweep's blobs with a row (see `sweepBlobs`): rows first, then their bytes. */
  private async sweepRecorded(
    cutoffDate: Date,
    hooks?: { afterScan?: () => Promise<void> },
  ): Promise<{ deleted: number; bytes: number }> {
    const cutoff = cutoffDate.toISOString();
    const repos = this.store.repos;
    const candidates = await repos.blobRecords.unusedSince(cutoff);
    // Nothing old enough: no need to read what every version references.
    if (!candidates.length) {
      await hooks?.afterScan?.();
      return { deleted: 0, bytes: 0 };
    }
    const bySha = new Map(candidates.map((c) => [c.sha256, c]));
    const variantsOf = (enc: string | null): string[] =>
      enc ? Object.values(JSON.parse(enc) as Record<string, { sha256: string }>).map((e) => e.sha256) : [];
    const referenced = new Set<string>();
    // Rows of deleted bases that live layers inherit count: they are still those layers' files.
    const referencing = await repos.versionFiles.referencing();
    // Space thumbnails (the thumbnails job) are blobs too, named by their table rather than a version.
    for (const d of await repos.spaceThumbnails.allNamed()) referenced.add(d);
    // Functions bundles (finalize of a runtime version) are named by their version's runtime row.
    for (const d of await repos.versionRuntimes.allBundles()) referenced.add(d);
    // Objects of runtime spaces' stores (env.STORAGE) are named by their table.
    for (const d of await repos.storageObjects.allDigests()) referenced.add(d);
    for (const d of await repos.spaceDbOwners.allSnapshots()) referenced.add(d);
    for (const r of referencing) {
      referenced.add(r.sha256);
      referenced.add(r.source_sha256);
      for (const v of variantsOf(r.encodings)) referenced.add(v);
    }
    // Which rows list each candidate as a variant: a later version reuses variants from the row of
    // their source, so they stay as long as that row does.
    const listers = new Map<string, Set<string>>();
    const withVariants = await repos.blobRecords.withVariants();
    for (const r of withVariants) {
      for (const v of variantsOf(r.variants)) {
        if (!bySha.has(v)) continue;
        const l = listers.get(v) ?? new Set<string>();
        l.add(r.sha256);
        listers.set(v, l);
      }
    }
    await hooks?.afterScan?.();
    let deleted = 0;
    let bytes = 0;
    const sweep = async (c: (typeof candidates)[number]): Promise<void> => {
      if (referenced.has(c.sha256) || listers.get(c.sha256)?.size) return;
      bySha.delete(c.sha256);
      // Stored again or relied on since the scan: it stays (and so do its variants).
      if (!(await repos.blobRecords.deleteIfUnusedSince(c.sha256, cutoff))) return;
      if (await this.blobs.delete(c.sha256, { unusedSince: cutoffDate })) {
        deleted++;
        bytes += c.size;
      }
      for (const v of variantsOf(c.variants)) {
        const l = listers.get(v);
        l?.delete(c.sha256);
        const vc = bySha.get(v);
        if (vc && !l?.size) await sweep(vc);
      }
    };
    for (const c of candidates) if (bySha.has(c.sha256)) await sweep(c);
    return { deleted, bytes };
  }

  /**
   * Bytes no row records: stored by an upload that never recorded them (a crash or a failed batch in
   * between), or stored again by a publisher while the sweep deleted their row and then not recorded.
   * Taken once nothing has stored them since `cutoffDate`, like the rest.
   */
  private async sweepUnrecorded(cutoffDate: Date): Promise<{ deleted: number; bytes: number }> {
    let deleted = 0;
    let bytes = 0;
    let page: string[] = [];
    const orphans = async () => {
      const recorded = await this.store.repos.blobRecords.recorded(page);
      const thumbnails = await this.store.repos.spaceThumbnails.named(page);
      for (const d of page) {
        if (recorded.has(d) || thumbnails.has(d)) continue;
        const size = (await this.blobs.stat(d))?.size ?? 0;
        if (await this.blobs.delete(d, { unusedSince: cutoffDate })) {
          deleted++;
          bytes += size;
        }
      }
      page = [];
    };
    for await (const d of this.blobs.list()) {
      page.push(d);
      if (page.length >= 500) await orphans();
    }
    if (page.length) await orphans();
    return { deleted, bytes };
  }
}
