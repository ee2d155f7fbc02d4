import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../../blobs/port.ts';

export { recordBlobs } from '../../store/blob-rows.ts';

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
