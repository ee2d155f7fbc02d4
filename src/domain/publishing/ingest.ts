import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { BlobBatch, BlobStore } from '../../blobs/port.ts';
import type { Clock } from '../../clock.ts';
import type { Store } from '../../store/repos/index.ts';
import type { DeclaredFile } from './model.ts';
import type { Spool } from './spool.ts';

export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
  }
}

/**
 * Files up to this size are read into memory and hashed there; larger ones are spooled to disk while
 * hashed. Small files then cost no file of their own until the blob batch writes them in groups, so
 * an archive of many tiny entries costs little per entry.
 */
const IN_MEMORY_MAX_BYTES = 1024 * 1024;

export interface IntakeDeps {
  blobs: BlobStore;
  store: Store;
  clock: Clock;
  spool: Spool;
}

/**
 * The files of one publish whose digests are learned by reading them (multipart parts, archive
 * entries, inline files). Their bytes go into one blob batch as they arrive; `commit` makes them
 * durable and records them together, `abort` drops what the batch holds — so a refused publish
 * records nothing (bytes a store without batches already took are left to the blob sweep).
 */
export class FileIntake {
  private readonly batch: BlobBatch | null;
  private readonly stored = new Map<string, number>();
  private ended = false;

  constructor(
    private readonly d: IntakeDeps,
    private readonly maxFileBytes: number,
  ) {
    this.batch = d.blobs.beginBatch?.() ?? null;
  }

  /** Reads `body` to its end and stores it; throws `TooLargeError` past the per-file cap. */
  async add(path: string, body: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<DeclaredFile> {
    const hash = createHash('sha256');
    const held: Buffer[] = [];
    let size = 0;
    let file: string | null = null;
    let out: fsp.FileHandle | null = null;
    try {
      for await (const chunk of body) {
        size += chunk.length;
        if (size > this.maxFileBytes) throw new TooLargeError(this.maxFileBytes);
        hash.update(chunk);
        if (!out && size <= IN_MEMORY_MAX_BYTES) {
          held.push(chunk);
          continue;
        }
        if (!out) {
          file = await this.d.spool.file('ingest');
          out = await fsp.open(file, 'w');
          for (const b of held.splice(0)) await out.write(b);
        }
        await out.write(chunk);
      }
      const sha256 = hash.digest('hex');
      if (out) {
        await out.close();
        out = null;
        await this.putFile(sha256, size, file!);
      } else {
        await this.putBuffer(sha256, held.length === 1 ? held[0]! : Buffer.concat(held, size));
      }
      this.stored.set(sha256, size);
      return { path, sha256, size };
    } finally {
      await out?.close().catch(() => {});
      if (file) await fsp.rm(file, { force: true });
    }
  }

  /** Makes every file durable, then records them (one transaction). */
  async commit(): Promise<void> {
    this.ended = true;
    const records = [...this.stored].map(([sha256, size]) => ({ sha256, size }));
    const now = this.d.clock.now().toISOString();
    if (this.batch?.commitAndRecord) {
      await this.batch.commitAndRecord(records, now);
      return;
    }
    await this.batch?.commit();
    await this.d.store.transaction((repos) => repos.blobRecords.record(records, now));
  }

  /** Drops what the batch holds (after a failure; a no-op once committed). */
  async abort(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.batch?.abort();
  }

  private async putBuffer(sha256: string, bytes: Buffer): Promise<void> {
    if (this.batch) await this.batch.putBuffer(sha256, bytes, { verified: true });
    else await this.d.blobs.put(sha256, bytes.length, Readable.from([bytes], { objectMode: false }));
  }

  private async putFile(sha256: string, size: number, file: string): Promise<void> {
    const source = fs.createReadStream(file);
    // The store may answer without reading (it holds the blob already); the file is removed next,
    // and a read stream still opening it must not report that to nobody.
    source.on('error', () => {});
    try {
      if (this.batch) await this.batch.put(sha256, size, source);
      else await this.d.blobs.put(sha256, size, source);
    } finally {
      source.destroy();
    }
  }
}
