import { recordBlobs } from '../../blob-rows.ts';
import { releaseFreePages } from '../../db.ts';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type BlobRecordRow = DB['blobs'];

/** Digests per `IN (…)` list. */
const IN_LIST = 500;

function* parts<T>(items: readonly T[], n = IN_LIST): Generator<T[]> {
  for (let i = 0; i < items.length; i += n) yield items.slice(i, i + n);
}

/**
 * The blob index (`blobs`): one row per content-addressed blob the store holds, with its size, its
 * precomputed br/gzip variants and when a version last relied on it (`used_at`, what the sweep's
 * grace period counts from). A row is written only after the bytes are durable.
 */
export class BlobRecordRepository {
  constructor(private readonly ctx: RepoContext) {}

  /**
   * Records stored blobs; a `variants` value fills a row that has none yet; a row stored again gets
   * a fresh `used_at`. Many rows: call it inside a transaction (one commit).
   */
  record(
    blobs: Array<{ sha256: string; size: number; variants?: string | null }>,
    now: string,
  ): Promise<void> {
    return recordBlobs(this.ctx.exec, blobs, now);
  }

  /** The rows among these digests (absent = not recorded). */
  async among(
    shas: readonly string[],
  ): Promise<Array<Pick<BlobRecordRow, 'sha256' | 'variants' | 'used_at'>>> {
    const out: Array<Pick<BlobRecordRow, 'sha256' | 'variants' | 'used_at'>> = [];
    for (const part of parts([...new Set(shas)])) {
      out.push(
        ...(await this.ctx.exec
          .selectFrom('blobs')
          .select(['sha256', 'variants', 'used_at'])
          .where('sha256', 'in', part)
          .execute()),
      );
    }
    return out;
  }

  /** The digests among these that have a row. */
  async recorded(shas: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const part of parts([...new Set(shas)])) {
      const rows = await this.ctx.exec
        .selectFrom('blobs')
        .select('sha256')
        .where('sha256', 'in', part)
        .execute();
      for (const r of rows) out.add(r.sha256);
    }
    return out;
  }

  /**
   * Sets `used_at` = `now` on the rows among `shas` still older than `olderThan`; returns how many
   * it touched (fewer than asked: the sweep took some, or another publisher touched them first).
   */
  async touch(shas: readonly string[], now: string, olderThan: string): Promise<number> {
    let n = 0;
    for (const part of parts(shas)) {
      const r = await this.ctx.exec
        .updateTable('blobs')
        .set({ used_at: now })
        .where('sha256', 'in', part)
        .where('used_at', '<', olderThan)
        .executeTakeFirst();
      n += Number(r.numUpdatedRows);
    }
    return n;
  }

  /** Rows nothing has stored or relied on since `cutoff`: the sweep's candidates. */
  unusedSince(cutoff: string): Promise<Array<Pick<BlobRecordRow, 'sha256' | 'size' | 'variants'>>> {
    return this.ctx.exec
      .selectFrom('blobs')
      .select(['sha256', 'size', 'variants'])
      .where('used_at', '<', cutoff)
      .execute();
  }

  /** Rows that list computed variants (not null, not `{}`). */
  withVariants(): Promise<Array<Pick<BlobRecordRow, 'sha256' | 'variants'>>> {
    return this.ctx.exec
      .selectFrom('blobs')
      .select(['sha256', 'variants'])
      .where('variants', 'is not', null)
      .where('variants', '!=', '{}')
      .execute();
  }

  /** Deletes a row only while it is still older than `cutoff` (one statement); true when it went. */
  async deleteIfUnusedSince(sha256: string, cutoff: string): Promise<boolean> {
    const r = await this.ctx.exec
      .deleteFrom('blobs')
      .where('sha256', '=', sha256)
      .where('used_at', '<', cutoff)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * Gives the pages deleted rows (and in-database blob bytes) left free back to the file system:
   * SQLite only, in steps with the event loop free in between. Returns the pages released.
   */
  async releaseFreePages(): Promise<number> {
    const sqlite = this.ctx.database.sqlite;
    if (!sqlite) return 0;
    const db = this.ctx.database.db;
    return releaseFreePages(sqlite, (step) => db.connection().execute(async () => step()));
  }
}
