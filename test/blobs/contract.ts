import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobMismatchError, type BlobStore } from '../../src/blobs/port.ts';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** The contract every BlobStore adapter meets; each adapter's suite calls this. */
export function blobStoreContract(
  name: string,
  make: () => Promise<{ store: BlobStore; cleanup(): Promise<void> }>,
) {
  describe(`blob store contract: ${name}`, () => {
    let store: BlobStore;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ store, cleanup } = await make());
    });
    afterAll(() => cleanup());

    it('stores by digest and reads back whole and by range', async () => {
      const body = Buffer.from('hello, content-addressed world');
      const d = sha(body);
      expect(await store.has(d)).toBe(false);
      expect((await store.put(d, body.length, Readable.from([body]))).created).toBe(true);
      expect(await store.has(d)).toBe(true);
      expect(await store.stat(d)).toEqual({ size: body.length });
      expect(await text(await store.get(d))).toBe(body.toString());
      expect(await text(await store.get(d, { start: 7, end: 11 }))).toBe('conte');
      expect((await store.put(d, body.length, Readable.from([body]))).created).toBe(false);
    });

    it('refuses a hash or size mismatch and stores nothing', async () => {
      const body = randomBytes(1000);
      const wrong = sha('other');
      await expect(store.put(wrong, body.length, Readable.from([body]))).rejects.toBeInstanceOf(
        BlobMismatchError,
      );
      expect(await store.has(wrong)).toBe(false);
      const d = sha(body);
      await expect(store.put(d, 999, Readable.from([body]))).rejects.toBeInstanceOf(BlobMismatchError);
      await expect(store.put(d, 1001, Readable.from([body]))).rejects.toBeInstanceOf(BlobMismatchError);
      expect(await store.has(d)).toBe(false);
    });

    it('lists and deletes', async () => {
      const body = Buffer.from('to be deleted');
      const d = sha(body);
      await store.put(d, body.length, Readable.from([body]));
      const all: string[] = [];
      for await (const x of store.list()) all.push(x);
      expect(all).toContain(d);
      await store.delete(d);
      expect(await store.has(d)).toBe(false);
      expect(await store.stat(d)).toBeNull();
    });
  });
}
