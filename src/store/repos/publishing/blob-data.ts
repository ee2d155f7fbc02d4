import { recordBlobs } from '../../blob-rows.ts';
import type { RepoContext } from '../index.ts';

/** Rows per multi-row INSERT (3 parameters each). */
const ROWS_PER_INSERT = 250;

/**
 * Bytes of small blobs kept in the database (`blob_data`), for the inline blob store
 * (src/blobs/inline.ts). A row's `created_at` is the blob's stored time, which the sweep's
 * conditional delete compares.
 */
export class BlobDataRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Sets a row's stored time; false when there is no row. */
  async freshen(sha256: string, at: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('blob_data')
      .set({ created_at: at })
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async bytes(sha256: string): Promise<Buffer | Uint8Array | null> {
    const row = await this.ctx.exec
      .selectFrom('blob_data')
      .select('data')
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    return row?.data ?? null;
  }

  async has(sha256: string): Promise<boolean> {
    const row = await this.ctx.exec
      .selectFrom('blob_data')
      .select('sha256')
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Deletes a row (only while it is older than `olderThan`, when given); true when it went. */
  async delete(sha256: string, olderThan?: string): Promise<boolean> {
    let q = this.ctx.exec.deleteFrom('blob_data').where('sha256', '=', sha256);
    if (olderThan !== undefined) q = q.where('created_at', '<', olderThan);
    const r = await q.executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Digests in order after `after`, a page at a time. */
  async page(after: string, limit: number): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('blob_data')
      .select('sha256')
      .where('sha256', '>', after)
      .orderBy('sha256')
      .limit(limit)
      .execute();
    return rows.map((r) => r.sha256);
  }

  /** Rows written before `cutoff` that no `blobs` row records (an aborted or crashed batch's). */
  async deleteUnrecordedBefore(cutoff: string): Promise<number> {
    const r = await this.ctx.exec
      .deleteFrom('blob_data')
      .where('created_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('blobs').select('blobs.sha256').whereRef('blobs.sha256', '=', 'blob_data.sha256'),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /**
   * Writes rows (a row already there gets the new stored time) and the blob records that go with
   * them, in one transaction of its own.
   */
  async insert(
    rows: Array<[string, Buffer]>,
    at: string,
    records: Array<{ sha256: string; size: number; variants?: string | null }>,
    recordedAt: string,
  ): Promise<void> {
    await this.ctx.database.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
        await trx
          .insertInto('blob_data')
          .values(
            rows.slice(i, i + ROWS_PER_INSERT).map(([sha256, data]) => ({ sha256, data, created_at: at })),
          )
          .onConflict((oc) =>
            oc.column('sha256').doUpdateSet((eb) => ({ created_at: eb.ref('excluded.created_at') })),
          )
          .execute();
      }
      await recordBlobs(trx, records, recordedAt);
    });
  }

  /**
   * Runs `fn` while holding the main connection (SQLite: Kysely serialises every query and
   * transaction on it), so another connection — the inline store's writer thread — can commit with
   * no main-thread transaction open in between.
   */
  holdingConnection<T>(fn: () => Promise<T>): Promise<T> {
    return this.ctx.database.db.connection().execute(() => fn());
  }
}
