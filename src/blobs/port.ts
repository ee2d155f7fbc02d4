import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

export interface BlobStat {
  size: number;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/**
 * Content-addressed bytes. A blob's name is the lowercase hex sha256 of its bytes; a blob is never
 * visible under its name until all of its bytes are stored and verified.
 */
export interface BlobStore {
  readonly kind: 'file' | 's3';
  /**
   * Stores a stream under its digest. Hashes while streaming and rejects (storing nothing) when the
   * bytes don't match `sha256` or `size`. Storing a blob that exists already is a cheap success
   * (`created: false`, the body is drained unread) that *freshens* it: its stored time becomes now,
   * so a `delete` with an `unusedSince` up to now keeps it. Should the blob vanish between the check
   * and the freshening (a concurrent `delete`), the bytes are written as for a new blob.
   */
  put(sha256: string, size: number, body: Readable): Promise<{ created: boolean }>;
  get(sha256: string, range?: ByteRange): Promise<Readable>;
  has(sha256: string): Promise<boolean>;
  stat(sha256: string): Promise<BlobStat | null>;
  /**
   * Deletes a blob's bytes; resolves to whether this call deleted them.
   *
   * Without `unusedSince` the delete is unconditional: true when bytes were there, false when the
   * store knows nothing was (S3 cannot tell and always answers true).
   *
   * With `unusedSince` (garbage collection racing publishers) the bytes go only if the blob was last
   * stored or freshened (see `put`) before that time; a blob written or freshened since then is kept
   * and the answer is false — as is the answer for a blob that is not there. Stored times are
   * compared in favour of keeping: a blob stored less than {@link STORED_TIME_SLACK_MS} before
   * `unusedSince` may be kept too (see {@link deleteCutoffMs}). A blob put in a batch counts as stored
   * when the batch wrote its bytes (between its `put`/`putBuffer` and `commit`), so `unusedSince`
   * must precede the start of any batch still open — a grace period (git prune's `--expire`), not
   * the sweep's own start. The disk store decides atomically; S3 leaves one HEAD → DELETE round trip
   * open (see `S3BlobStore.delete`).
   */
  delete(sha256: string, opts?: DeleteOptions): Promise<boolean>;
  /**
   * Optional: a batch of puts made durable together (one group of syncs at `commit`, not one per
   * blob). Blobs of a batch become visible under their names only at `commit`.
   */
  beginBatch?(): BlobBatch;
  /** Every stored digest (for garbage collection). */
  list(): AsyncIterable<string>;
  /**
   * Optional: removes temporary files last modified before `cutoff` — what a crash between writing and
   * renaming left behind (no lookup ever sees them). Returns how many were removed.
   */
  removeStaleTemp?(cutoff: Date): Promise<number>;
  close(): Promise<void>;
}

/** Options of `BlobStore.delete`. */
export interface DeleteOptions {
  /** Delete only a blob last stored or freshened before this time (see `BlobStore.delete`). */
  unusedSince?: Date;
}

/**
 * How much earlier than `unusedSince` a blob's stored time must be for a conditional delete to take
 * it. Stored times are coarse or come from another clock: S3's LastModified has whole seconds (and
 * is the server's time), some filesystems keep whole seconds, and Linux stamps files from a clock
 * that can lag `Date.now()` by a scheduler tick. Keeping a blob one sweep longer costs nothing;
 * deleting one a publisher has just stored loses data.
 */
export const STORED_TIME_SLACK_MS = 1000;

/** A conditional delete takes a blob only if its stored time (ms since the epoch) is below this. */
export function deleteCutoffMs(unusedSince: Date): number {
  return unusedSince.getTime() - STORED_TIME_SLACK_MS;
}

/** A row of the `blobs` index (the publishing domain's record of a stored blob). */
export interface BlobRecord {
  sha256: string;
  size: number;
  variants?: string | null;
}

/** Puts that become durable and visible together. */
export interface BlobBatch {
  /**
   * Hashes and verifies like `BlobStore.put`; the blob is not visible until `commit`. A blob the
   * store holds already is freshened like `BlobStore.put` does.
   */
  put(sha256: string, size: number, body: Readable): Promise<{ created: boolean }>;
  /**
   * Bytes already in memory (small files): verified at once (throws `BlobMismatchError`), written in
   * the background. Resolves as soon as the write is queued; waits only when many writes are in
   * flight (backpressure). A failed write fails `commit`. `verified`: the caller computed `sha256`
   * from these very bytes itself (e.g. on a worker thread), so they are not hashed again.
   */
  putBuffer(sha256: string, bytes: Buffer, opts?: { verified?: boolean }): Promise<void>;
  /** Waits for every queued write, then makes the whole batch durable and visible. */
  commit(): Promise<void>;
  /**
   * Optional (a store keeping bytes in the metadata database): `commit`, and in the same last
   * transaction — after every blob of the batch is durable — upserts `records` into the `blobs`
   * index, with `recordBlobs`' rule (a `variants` value fills a row that has none yet).
   */
  commitAndRecord?(records: BlobRecord[], now: string): Promise<void>;
  /**
   * Optional, with `commitAndRecord`: records for blobs already put in this batch, written as soon as
   * the blobs they name are durable — with the same transaction as their bytes when those are kept
   * in the database, else at `commitAndRecord` — so most of the index is written while the batch is
   * still open. A record never becomes visible before its blob.
   */
  record?(records: BlobRecord[], now: string): void;
  /** Drops every blob of the batch not yet committed. */
  abort(): Promise<void>;
}

export class BlobMismatchError extends Error {
  constructor(
    readonly kind: 'hash' | 'size',
    readonly expected: string | number,
    readonly actual: string | number,
  ) {
    super(`blob ${kind} mismatch: expected ${expected}, got ${actual}`);
  }
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Runs a put that takes `body`, so the body is always settled: the put reads it or drains it, and a
 * put that fails destroys it (a client stops sending, a spool file is closed). Its errors are heard
 * from the start: a body the put drains unread or gives up on can still fail later (a client going
 * away, a spool file removed under a read stream still opening it), and an `error` event nobody
 * listens to ends the process.
 */
export async function withBody<T>(body: Readable, put: () => Promise<T>): Promise<T> {
  body.on('error', ignoreError);
  try {
    return await put();
  } catch (err) {
    body.destroy();
    throw err;
  }
}

function ignoreError(): void {}

/** Throws a `BlobMismatchError` unless `bytes` hash to `sha256`. */
export function verifyDigest(sha256: string, bytes: Buffer): void {
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== sha256) throw new BlobMismatchError('hash', sha256, actual);
}

/**
 * A body read whole into memory. Once more than `max` bytes have arrived the body is destroyed and
 * `tooLarge(bytesSoFar)` is thrown.
 */
export async function readAtMost(
  body: Readable,
  max: number,
  tooLarge: (n: number) => Error,
): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    n += b.length;
    if (n > max) {
      body.destroy();
      throw tooLarge(n);
    }
    parts.push(b);
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, n);
}
