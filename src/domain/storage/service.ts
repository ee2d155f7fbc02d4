import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import type { BlobStore } from '../../blobs/port.ts';
import type { Clock } from '../../clock.ts';
import { ApiError } from '../../errors/problem.ts';
import type { Store } from '../../store/repos/index.ts';
import type { StorageObjectRow } from '../../store/repos/storage.ts';
import { checkObjectType, MAX_OBJECT_BYTES } from './types.ts';

export interface StoredObject {
  id: string;
  contentType: string;
  size: number;
  url: string;
  createdAt: string;
  versionId: string | null;
}

const OBJECT_ID = /^[0-9a-f]{32}$/;

/** Reads a body up to `max` bytes; null when it is longer (the rest is not read). */
async function readUpTo(body: AsyncIterable<Uint8Array>, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) return null;
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks, size);
}

/**
 * `env.STORAGE` (behaviour §11): one unversioned store per runtime space on the blob store. Objects
 * have 128-bit ids, are at most 5 MiB, never HTML, JavaScript, SVG, PHP or executables, and are read
 * through URLs signed with the space's read key — rotating it ends every URL given before. Objects
 * outlive publishes and rollbacks; deleting one removes its bytes unless something else holds them.
 */
export class StorageService {
  constructor(
    private readonly d: { store: Store; blobs: BlobStore; clock: Clock; publicUrl: () => string },
  ) {}

  /** Stores an upload from a function; refused uploads throw an ApiError with the spec's code. */
  async upload(
    spaceId: string,
    versionId: string | null,
    body: AsyncIterable<Uint8Array>,
    declaredType: string | null,
  ): Promise<StoredObject> {
    const bytes = await readUpTo(body, MAX_OBJECT_BYTES);
    if (bytes === null) {
      throw new ApiError(
        'storage_object_too_large',
        `An object is at most ${MAX_OBJECT_BYTES} bytes (5 MiB).`,
        {
          details: { limit: MAX_OBJECT_BYTES },
        },
      );
    }
    const verdict = checkObjectType(declaredType, bytes.subarray(0, 512), bytes.length);
    if (!verdict.ok) throw new ApiError(verdict.code, verdict.reason);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await this.d.blobs.put(sha256, bytes.length, Readable.from([bytes]));
    const row: StorageObjectRow = {
      id: randomBytes(16).toString('hex'),
      space_id: spaceId,
      content_type: verdict.contentType,
      size: bytes.length,
      sha256,
      version_id: versionId,
      created_at: this.d.clock.now().toISOString(),
    };
    await this.d.store.repos.storageObjects.insert(row);
    return this.present(row);
  }

  /** An object and its bytes, or null (no such object in this space). */
  async open(
    spaceId: string,
    id: string,
  ): Promise<{ row: StorageObjectRow; body: () => Promise<Readable> } | null> {
    if (!OBJECT_ID.test(id)) return null;
    const row = await this.d.store.repos.storageObjects.get(spaceId, id);
    if (!row) return null;
    return { row, body: () => this.d.blobs.get(row.sha256) };
  }

  /** Removes an object (its bytes too, unless another object or a version holds them). */
  async delete(spaceId: string, id: string): Promise<boolean> {
    if (!OBJECT_ID.test(id)) return false;
    const repos = this.d.store.repos;
    const row = await repos.storageObjects.delete(spaceId, id);
    if (!row) return false;
    const held =
      (await repos.storageObjects.holds(row.sha256)) ||
      (await repos.blobRecords.recorded([row.sha256])).size > 0;
    if (!held) await this.d.blobs.delete(row.sha256).catch(() => false);
    return true;
  }

  async list(spaceId: string, after: string | null, limit: number): Promise<StorageObjectRow[]> {
    let key: { createdAt: string; id: string } | null = null;
    if (after) {
      const i = after.lastIndexOf('|');
      key = { createdAt: after.slice(0, i), id: after.slice(i + 1) };
    }
    return this.d.store.repos.storageObjects.list(spaceId, key, limit);
  }

  usage(spaceId: string): Promise<{ objects: number; bytes: number }> {
    return this.d.store.repos.storageObjects.usage(spaceId);
  }

  /** A new read key: every read URL given before stops working at once. */
  async rotateReadKey(spaceId: string): Promise<string> {
    const at = this.d.clock.now().toISOString();
    await this.d.store.repos.storageObjects.putReadKey(spaceId, randomBytes(32).toString('hex'), at);
    return at;
  }

  private async readKey(spaceId: string): Promise<string> {
    const repos = this.d.store.repos;
    const key = await repos.storageObjects.readKey(spaceId);
    if (key) return key;
    await this.rotateReadKey(spaceId);
    return (await repos.storageObjects.readKey(spaceId))!;
  }

  private sign(key: string, spaceId: string, id: string): string {
    return createHmac('sha256', Buffer.from(key, 'hex'))
      .update(`${spaceId}/${id}`)
      .digest('base64url')
      .slice(0, 32);
  }

  /** The object's read URL (on the API origin), signed with the space's current read key. */
  async urlOf(spaceId: string, id: string): Promise<string> {
    const key = await this.readKey(spaceId);
    return `${this.d.publicUrl()}/v1/storage/${spaceId}/${id}?sig=${this.sign(key, spaceId, id)}`;
  }

  /** Whether a read URL's signature is the one the current read key gives (constant time). */
  async verify(spaceId: string, id: string, sig: string | undefined): Promise<boolean> {
    if (!sig || !OBJECT_ID.test(id)) return false;
    const key = await this.d.store.repos.storageObjects.readKey(spaceId);
    if (!key) return false;
    const want = Buffer.from(this.sign(key, spaceId, id));
    const got = Buffer.from(sig);
    return want.length === got.length && timingSafeEqual(want, got);
  }

  async present(row: StorageObjectRow): Promise<StoredObject> {
    return {
      id: row.id,
      contentType: row.content_type,
      size: Number(row.size),
      url: await this.urlOf(row.space_id, row.id),
      createdAt: row.created_at,
      versionId: row.version_id,
    };
  }
}
