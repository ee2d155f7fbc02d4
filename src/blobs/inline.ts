import { Readable } from 'node:stream';
import { type Clock, systemClock } from '../clock.ts';
import type { Store } from '../store/repos/index.ts';
import type { BlobDataRepository } from '../store/repos/publishing/blob-data.ts';
import { packBuffers, WorkerThread } from '../threads.ts';
import {
  type BlobBatch,
  BlobMismatchError,
  type BlobRecord,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  type DeleteOptions,
  deleteCutoffMs,
  readAtMost,
  SHA256_HEX,
  verifyDigest,
  withBody,
} from './port.ts';

/** Default for `SPACES_INLINE_BLOB_BYTES`: blobs up to this size live in the database. */
export const DEFAULT_INLINE_BLOB_BYTES = 16 * 1024;
/** The largest inline threshold accepted (a batch holds inline blobs in memory until they flush). */
export const MAX_INLINE_BLOB_BYTES = 1024 * 1024;
/** A batch writes its pending inline blobs in one transaction once they reach this many bytes. */
const FLUSH_BYTES = 8 * 1024 * 1024;
/** Flushes queued before `putBuffer` waits (bounds the memory a batch holds). */
const FLUSHES_IN_FLIGHT = 2;
/** Digests per page when listing. */
const LIST_PAGE = 1000;

/**
 * Small blobs in the metadata database, larger ones in a backing store (disk or S3).
 *
 * A blob of at most `maxBytes` is stored as one row of `blob_data` (sha256, bytes) instead of one file
 * or object: a publish of 10,000 small files writes a few multi-row INSERTs in a handful of
 * transactions (one WAL sync or PostgreSQL commit each) instead of creating, syncing and renaming
 * tens of thousands of files — or sending three S3 requests per blob. Larger blobs go to the backing
 * store unchanged. Reads look in the database first, then in the backing store, so blobs stored before
 * the threshold changed (or before inline storage existed) stay readable where they are.
 *
 * Visibility: a row is written only after its bytes were verified against the digest, so a lookup
 * never sees partial or wrong bytes. A batch flushes its rows in chunks while it is still open (the
 * memory it holds stays bounded), so some of its blobs can be visible before `commit`; `commit`
 * returns once all of them are durable. Rows that an aborted or crashed batch left without a `blobs`
 * record (the publishing index) are removed by `removeStaleTemp`, like the disk store's temp files.
 *
 * An inline blob's stored time is its row's `created_at`, from `clock`: set when the row is written,
 * and again whenever the blob is stored anew (a put that finds it, a batch that writes it again).
 */
export interface InlineBlobStoreOptions {
  /** Blobs up to this many bytes are stored inline; 0 stores nothing new inline. */
  maxBytes: number;
  clock?: Clock;
  /**
   * SQLite only: the database file. Batches then write their rows from a worker thread with its own
   * connection (see sqlite-writer.mjs), so the inserts and the WAL sync don't hold up the event loop.
   */
  sqliteFile?: string;
}

export class InlineBlobStore implements BlobStore {
  readonly maxBytes: number;
  private readonly clock: Clock;
  private readonly sqliteFile: string | null;
  private writer: SqliteWriter | null = null;
  private readonly rows: BlobDataRepository;

  constructor(
    store: Store,
    readonly backing: BlobStore,
    opts: InlineBlobStoreOptions,
  ) {
    this.rows = store.repos.blobData;
    this.maxBytes = opts.maxBytes;
    this.clock = opts.clock ?? systemClock;
    this.sqliteFile = opts.sqliteFile && opts.sqliteFile !== ':memory:' ? opts.sqliteFile : null;
  }

  get kind(): BlobStore['kind'] {
    return this.backing.kind;
  }

  /** Whether a blob of this size is stored inline. */
  holds(size: number): boolean {
    return size <= this.maxBytes;
  }

  put(sha256: string, size: number, body: Readable): Promise<{ created: boolean }> {
    return withBody(body, async () => {
      if (!this.holds(size)) return this.backing.put(sha256, size, body);
      if (await this.freshenRow(sha256)) {
        body.resume();
        return { created: false };
      }
      // Stored in the backing store before (larger threshold then, or inline storage off): its put
      // freshens it there — or writes it there again if a delete just took it.
      if (await this.backing.has(sha256)) return this.backing.put(sha256, size, body);
      const bytes = await readVerified(body, sha256, size);
      await this.insertRows([[sha256, bytes]]);
      return { created: true };
    });
  }

  /** Sets the stored time of an inline blob to now; false when there is no row for it. */
  private async freshenRow(sha256: string): Promise<boolean> {
    return this.rows.freshen(sha256, this.clock.now().toISOString());
  }

  /** The inline bytes of `sha256`, or null when it is not stored inline. */
  async inline(sha256: string): Promise<Buffer | null> {
    const data = await this.rows.bytes(sha256);
    return data ? asBuffer(data) : null;
  }

  async get(sha256: string, range?: ByteRange): Promise<Readable> {
    if (!SHA256_HEX.test(sha256)) throw new Error('invalid blob digest');
    const bytes = await this.inline(sha256);
    if (!bytes) return this.backing.get(sha256, range);
    const part = range ? bytes.subarray(range.start, range.end + 1) : bytes;
    return Readable.from([part], { objectMode: false });
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.rows.has(sha256)) || this.backing.has(sha256);
  }

  async stat(sha256: string): Promise<BlobStat | null> {
    const bytes = await this.inline(sha256);
    if (bytes) return { size: bytes.length };
    return this.backing.stat(sha256);
  }

  /**
   * Unconditional: removes the row and the backing store's copy (true if either was there).
   *
   * Conditional: one statement deletes the row only if its `created_at` is older than `unusedSince`
   * (less the slack of {@link deleteCutoffMs}), so a put or batch that freshens or rewrites the row
   * concurrently either comes first (the row stays) or after (it writes the row anew). A row that
   * is there but fresh keeps the blob, and the backing store is not asked. Without a row the blob
   * can only be in the backing store, whose own conditional delete decides. A blob may be in both
   * (a batch writes rows without looking in the backing store): after the row, the backing copy is
   * deleted if it too is old.
   */
  async delete(sha256: string, opts?: DeleteOptions): Promise<boolean> {
    if (!opts?.unusedSince) {
      const inRows = await this.rows.delete(sha256);
      const inBacking = await this.backing.delete(sha256);
      return inRows || inBacking;
    }
    const cutoff = new Date(deleteCutoffMs(opts.unusedSince)).toISOString();
    if (await this.rows.delete(sha256, cutoff)) {
      await this.backing.delete(sha256, opts);
      return true;
    }
    if (await this.rows.has(sha256)) return false;
    return this.backing.delete(sha256, opts);
  }

  async *list(): AsyncIterable<string> {
    let after = '';
    for (;;) {
      const page = await this.rows.page(after, LIST_PAGE);
      yield* page;
      if (page.length < LIST_PAGE) break;
      after = page[page.length - 1]!;
    }
    yield* this.backing.list();
  }

  /**
   * The backing store's temp files, and inline rows written before `cutoff` that no `blobs` row
   * records: what a batch that was aborted, or cut short by a crash between storing and recording,
   * left behind. (Every writer records a blob in `blobs` right after storing it, and a batch touches
   * `created_at` of rows it finds already present, so a row an open batch counts on is never old.)
   */
  async removeStaleTemp(cutoff: Date): Promise<number> {
    const files = (await this.backing.removeStaleTemp?.(cutoff)) ?? 0;
    return files + (await this.rows.deleteUnrecordedBefore(cutoff.toISOString()));
  }

  /**
   * Small blobs collect in memory and are written in transactions of about `FLUSH_BYTES` (one WAL
   * sync or commit each) while the batch is open; larger ones go to a batch of the backing store (or
   * straight to it when it has no batches, like S3). `commit` writes what is left and commits the
   * backing batch.
   */
  beginBatch(): BlobBatch {
    const store = this;
    let pending: Array<[string, Buffer]> = [];
    let pendingBytes = 0;
    const seen = new Set<string>();
    let large: BlobBatch | null | undefined;
    const backingBatch = () => {
      if (large === undefined) large = store.backing.beginBatch?.() ?? null;
      return large;
    };
    let chain: Promise<void> = Promise.resolve();
    let inflight = 0;
    let failure: unknown = null;
    /** Records of inline blobs, written with the next flush (which holds or follows their bytes). */
    let records: BlobRecord[] = [];
    let recordedAt = '';
    /** Records of blobs in the backing store, written once its batch is committed. */
    const deferred: BlobRecord[] = [];
    const flush = () => {
      if (!pending.length) return;
      const rows = pending;
      const recs = records;
      const at = recordedAt;
      pending = [];
      pendingBytes = 0;
      records = [];
      inflight++;
      chain = chain
        .then(() => store.insertRows(rows, recs, at))
        .catch((err) => {
          failure ??= err;
        })
        .finally(() => {
          inflight--;
        });
    };
    const add = async (sha256: string, bytes: Buffer) => {
      pending.push([sha256, bytes]);
      pendingBytes += bytes.length;
      if (pendingBytes >= FLUSH_BYTES) flush();
      while (inflight >= FLUSHES_IN_FLIGHT) await chain;
    };
    return {
      put(sha256, size, body) {
        return withBody(body, async () => {
          if (!store.holds(size)) {
            const b = backingBatch();
            return b ? b.put(sha256, size, body) : store.backing.put(sha256, size, body);
          }
          if (seen.has(sha256)) {
            body.resume();
            return { created: false };
          }
          const bytes = await readVerified(body, sha256, size);
          if (seen.has(sha256)) return { created: false };
          seen.add(sha256);
          await add(sha256, bytes);
          return { created: true };
        });
      },
      async putBuffer(sha256, bytes, opts) {
        if (!store.holds(bytes.length)) {
          const b = backingBatch();
          if (b) return b.putBuffer(sha256, bytes, opts);
          await store.backing.put(sha256, bytes.length, Readable.from([bytes], { objectMode: false }));
          return;
        }
        if (!opts?.verified) verifyDigest(sha256, bytes);
        if (seen.has(sha256)) return;
        seen.add(sha256);
        await add(sha256, bytes);
      },
      async commit() {
        flush();
        await chain;
        if (failure) throw failure;
        await large?.commit();
      },
      record(recs, now) {
        recordedAt = now;
        for (const r of recs) (seen.has(r.sha256) ? records : deferred).push(r);
      },
      async commitAndRecord(last, now) {
        await chain;
        if (failure) throw failure;
        // The backing store's blobs first: no record may name a blob that is not durable yet.
        await large?.commit();
        const rows = pending;
        const recs = [...records, ...deferred, ...last];
        pending = [];
        pendingBytes = 0;
        records = [];
        deferred.length = 0;
        await store.insertRows(rows, recs, now);
      },
      async abort() {
        pending = [];
        pendingBytes = 0;
        records = [];
        deferred.length = 0;
        await chain;
        await large?.abort();
      },
    };
  }

  /**
   * Writes rows in one transaction. A row already present keeps its bytes (same digest, same bytes)
   * and gets a fresh `created_at`, so the stale-row sweep never takes a blob an open batch counts on.
   */
  private async insertRows(
    rows: Array<[string, Buffer]>,
    records: BlobRecord[] = [],
    recordedAt = '',
  ): Promise<void> {
    const now = this.clock.now().toISOString();
    if (this.sqliteFile) {
      this.writer ??= new SqliteWriter(this.sqliteFile);
      const writer = this.writer;
      const packed = packBuffers(rows.map(([, b]) => b));
      const msg = {
        op: 'write',
        shas: rows.map(([sha]) => sha),
        lengths: rows.map(([, b]) => b.length),
        data: packed.buffer,
        now,
        records: records.map((r) => [r.sha256, r.size, r.variants ?? null]),
        recordedAt,
      };
      // Holding the main connection (Kysely serialises every query and transaction on it) while the
      // writer thread commits: no main-thread transaction is open in between, so neither side ever
      // finds its snapshot outdated by the other's commit. Other queries wait, as they would for a
      // transaction on the main connection; the event loop does not.
      await this.rows.holdingConnection(() => writer.call(msg, [packed.buffer]));
      return;
    }
    await this.rows.insert(rows, now, records, recordedAt);
  }

  async close(): Promise<void> {
    await this.writer?.close();
    this.writer = null;
    await this.backing.close();
  }
}

/** The SQLite writer thread (see sqlite-writer.mjs), with its own connection to `file`. */
class SqliteWriter extends WorkerThread {
  constructor(file: string) {
    super(new URL('./sqlite-writer.mjs', import.meta.url), 'inline blob writer thread', {
      workerData: { file },
    });
  }

  /** Closes the writer's connection, then the thread. */
  async close(): Promise<void> {
    if (!this.running) return;
    await this.call({ op: 'close' }).catch(() => {});
    await this.terminate();
  }
}

/** Reads a small body whole, checking its size while reading and its digest at the end. */
async function readVerified(body: Readable, sha256: string, size: number): Promise<Buffer> {
  const bytes = await readAtMost(body, size, (n) => new BlobMismatchError('size', size, n));
  if (bytes.length !== size) throw new BlobMismatchError('size', size, bytes.length);
  verifyDigest(sha256, bytes);
  return bytes;
}

/** better-sqlite3 and pg both answer BLOB/bytea as a Buffer; a Uint8Array is wrapped without a copy. */
function asBuffer(data: Buffer | Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
