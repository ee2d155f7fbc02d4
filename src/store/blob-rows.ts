import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from './schema.ts';

/** Rows per multi-row INSERT (4 columns: far below SQLite's and PostgreSQL's parameter limits). */
const BLOB_ROWS_PER_INSERT = 500;

/**
 * Records stored blobs (the dedupe index); a blob is recorded only after the store holds it. A
 * `variants` value (JSON of precomputed encodings) fills a row that has none yet; a row stored again
 * gets a fresh `used_at`. Callers pass a
 * transaction for many rows (one commit, one WAL sync).
 */
export async function recordBlobs(
  db: Kysely<DB> | Transaction<DB>,
  blobs: Array<{ sha256: string; size: number; variants?: string | null }>,
  now: string,
): Promise<void> {
  const unique = [...new Map(blobs.map((b) => [b.sha256, b])).values()];
  for (let i = 0; i < unique.length; i += BLOB_ROWS_PER_INSERT) {
    await db
      .insertInto('blobs')
      .values(
        unique.slice(i, i + BLOB_ROWS_PER_INSERT).map((b) => ({
          sha256: b.sha256,
          size: b.size,
          variants: b.variants ?? null,
          created_at: now,
          used_at: now,
        })),
      )
      .onConflict((oc) =>
        oc.column('sha256').doUpdateSet({
          variants: sql<string | null>`coalesce(blobs.variants, excluded.variants)`,
          // Stored again: fresh for the sweep (see `blobs.used_at`).
          used_at: sql<string>`excluded.used_at`,
        }),
      )
      .execute();
  }
}
