import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobMismatchError, type BlobStore, STORED_TIME_SLACK_MS } from '../../src/blobs/port.ts';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/**
 * The contract every BlobStore adapter meets; each adapter's suite calls this. Stored times are
 * compared with real time (file mtimes, S3's LastModified), so a store with a clock must use the
 * system clock here.
 */
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

    it('batch: verifies at once, shows nothing wrong, and holds every blob after commit', async () => {
      if (!store.beginBatch) return;
      const batch = store.beginBatch();
      const blobs = Array.from({ length: 40 }, (_, i) => randomBytes(100 + i * 97));
      for (const b of blobs) await batch.putBuffer(sha(b), b);
      // The same bytes twice in one batch: one blob.
      await batch.putBuffer(sha(blobs[0]!), blobs[0]!);
      const streamed = randomBytes(3000);
      expect((await batch.put(sha(streamed), streamed.length, Readable.from([streamed]))).created).toBe(true);
      const bad = randomBytes(500);
      await expect(batch.putBuffer(sha('not these bytes'), bad)).rejects.toBeInstanceOf(BlobMismatchError);
      await expect(batch.put(sha(bad), bad.length + 1, Readable.from([bad]))).rejects.toBeInstanceOf(
        BlobMismatchError,
      );
      await batch.commit();
      for (const b of [...blobs, streamed]) {
        expect(await store.stat(sha(b))).toEqual({ size: b.length });
        expect((await buffer(await store.get(sha(b)))).equals(b)).toBe(true);
      }
      expect(await store.has(sha('not these bytes'))).toBe(false);
      expect(await store.has(sha(bad))).toBe(false);
    });

    it('batch: an aborted batch leaves nothing it had not made durable', async () => {
      if (!store.beginBatch) return;
      const batch = store.beginBatch();
      const b = randomBytes(700);
      await batch.putBuffer(sha(b), b);
      await batch.abort();
      expect(await store.has(sha(b))).toBe(false);
    });

    it('lists and deletes unconditionally, answering whether it deleted', async () => {
      const body = Buffer.from('to be deleted');
      const d = sha(body);
      await store.put(d, body.length, Readable.from([body]));
      const all: string[] = [];
      for await (const x of store.list()) all.push(x);
      expect(all).toContain(d);
      expect(await store.delete(d)).toBe(true);
      expect(await store.has(d)).toBe(false);
      expect(await store.stat(d)).toBeNull();
      // Nothing there: false where the store can tell (S3 cannot).
      expect(typeof (await store.delete(d))).toBe('boolean');
    });

    // Small and large: an inline store keeps them in different places.
    const sizes = [200, 5000];

    it('a conditional delete keeps a blob stored since unusedSince', async () => {
      for (const size of sizes) {
        const body = randomBytes(size);
        const d = sha(body);
        await store.put(d, size, Readable.from([body]));
        expect(await store.delete(d, { unusedSince: new Date(Date.now() - 60_000) })).toBe(false);
        expect(await store.has(d)).toBe(true);
        expect((await buffer(await store.get(d))).equals(body)).toBe(true);
      }
      // Nothing to delete.
      expect(await store.delete(sha('never stored'), { unusedSince: new Date(Date.now() + 60_000) })).toBe(
        false,
      );
    });

    it('a conditional delete takes a blob stored before unusedSince', async () => {
      for (const size of sizes) {
        const body = randomBytes(size);
        const d = sha(body);
        await store.put(d, size, Readable.from([body]));
        expect(await store.delete(d, { unusedSince: new Date(Date.now() + 60_000) })).toBe(true);
        expect(await store.has(d)).toBe(false);
        expect(await store.stat(d)).toBeNull();
      }
    });

    it('a put of a blob already stored freshens it, so a sweep that began before keeps it', async () => {
      const single = sizes.map((n) => randomBytes(n));
      const batched = store.beginBatch ? sizes.map((n) => randomBytes(n)) : [];
      for (const b of [...single, ...batched]) await store.put(sha(b), b.length, Readable.from([b]));
      // Past the granularity of stored times (S3's LastModified has whole seconds) and the slack of
      // conditional deletes: without freshening, these blobs now count as stored before `mark`.
      await new Promise((r) => setTimeout(r, STORED_TIME_SLACK_MS + 1100));
      const mark = new Date();
      for (const b of single)
        expect((await store.put(sha(b), b.length, Readable.from([b]))).created).toBe(false);
      if (store.beginBatch) {
        const batch = store.beginBatch();
        for (const b of batched) await batch.put(sha(b), b.length, Readable.from([b]));
        await batch.commit();
      }
      for (const b of [...single, ...batched]) {
        expect(await store.delete(sha(b), { unusedSince: mark })).toBe(false);
        expect((await buffer(await store.get(sha(b)))).equals(b)).toBe(true);
      }
      // With an unusedSince after the freshening they go.
      const later = new Date(Date.now() + 60_000);
      for (const b of [...single, ...batched])
        expect(await store.delete(sha(b), { unusedSince: later })).toBe(true);
    });
  });
}
