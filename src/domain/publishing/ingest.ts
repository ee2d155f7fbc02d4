import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Kysely, sql } from 'kysely';
import type { BlobStore } from '../../blobs/port.ts';
import type { DB } from '../../store/schema.ts';

/** Rows per multi-row INSERT (4 columns: far below SQLite's and PostgreSQL's parameter limits). */
const BLOB_ROWS_PER_INSERT = 500;

/**
 * Records stored blobs (the dedupe index); a blob is recorded only after the store holds it. A
 * `variants` value (JSON of precomputed encodings) fills a row that has none yet. Callers pass a
 * transaction for many rows (one commit, one WAL sync).
 */
export async function recordBlobs(
  db: Kysely<DB>,
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
        })),
      )
      .onConflict((oc) =>
        oc
          .column('sha256')
          .doUpdateSet({ variants: sql<string | null>`coalesce(blobs.variants, excluded.variants)` }),
      )
      .execute();
  }
}

export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
  }
}

/**
 * Stores a stream whose digest is not known up front: spooled to a temp file while hashing (never
 * held in memory), then put into the blob store under its digest. Throws `TooLargeError` past `max`.
 */
export async function ingestStream(
  blobs: BlobStore,
  tmpDir: string,
  body: Readable,
  max: number,
): Promise<{ sha256: string; size: number }> {
  await fsp.mkdir(tmpDir, { recursive: true });
  const file = path.join(tmpDir, `ingest-${randomBytes(8).toString('hex')}`);
  const hash = createHash('sha256');
  let size = 0;
  try {
    await pipeline(
      body,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          size += chunk.length;
          if (size > max) throw new TooLargeError(max);
          hash.update(chunk);
          yield chunk;
        }
      },
      fs.createWriteStream(file),
    );
    const sha256 = hash.digest('hex');
    await blobs.put(sha256, size, fs.createReadStream(file));
    return { sha256, size };
  } finally {
    await fsp.rm(file, { force: true });
  }
}
