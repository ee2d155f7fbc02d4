import { type BlobStore, readAtMost } from '../blobs/port.ts';

/**
 * A byte-bounded LRU of small, hot blobs kept in memory so the edge can answer a cached file with one
 * `writeHead` + `end(buffer)`: no `stat`, no `open`, no stream per request. Blobs are immutable
 * (content-addressed), so entries never go stale; they only fall out when the byte budget needs room.
 *
 * Keys are usually a blob digest; derived bodies (for example an HTML file with injected snippets)
 * use `<digest>:<suffix>` keys and share the same budget.
 */
export interface BlobCacheOptions {
  /** Total bytes held (default 64 MiB). 0 disables caching. */
  maxBytes?: number;
  /** Largest single body cached (default 1 MiB). Bigger files always stream. */
  maxEntryBytes?: number;
}

export class BlobCache {
  readonly maxBytes: number;
  readonly maxEntryBytes: number;
  /** In least-recently-used-first order (approximately: see {@link get}). */
  private readonly map = new Map<string, { buf: Buffer; at: number }>();
  /** Counts insertions and moves to the end of the order; an entry's `at` is its last one. */
  private tick = 0;
  private readonly loading = new Map<string, Promise<Buffer>>();
  private used = 0;
  hits = 0;
  misses = 0;

  constructor(opts: BlobCacheOptions = {}) {
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
    this.maxEntryBytes = Math.min(opts.maxEntryBytes ?? 1024 * 1024, this.maxBytes);
  }

  /** Bytes currently held. */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.map.size;
  }

  /** Bodies held, their bytes and the bound (for `GET /metrics`). */
  stats(): { entries: number; bytes: number; maxBytes: number } {
    return { entries: this.map.size, bytes: this.bytes, maxBytes: this.maxBytes };
  }

  /** Whether a body of this size is eligible for the cache. */
  accepts(size: number): boolean {
    return size <= this.maxEntryBytes && this.maxBytes > 0;
  }

  /**
   * The cached body, marking it recently used. Re-inserting moves a key to the end of the Map's
   * insertion order (the LRU order), but only for an entry in the older half of that order: fewer than
   * `size / 2` insertions and moves since its own mean it is still among the newer half, far from
   * eviction, and moving it would only churn the Map (a delete + set per hit) on the edge's hot path.
   */
  get(key: string): Buffer | undefined {
    const e = this.map.get(key);
    if (e === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    if (e.at !== this.tick && this.tick - e.at >= this.map.size >> 1) {
      this.map.delete(key);
      this.map.set(key, e);
      e.at = ++this.tick;
    }
    return e.buf;
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, buf: Buffer): void {
    if (!this.accepts(buf.length)) return;
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.used -= old.buf.length;
    }
    this.map.set(key, { buf, at: ++this.tick });
    this.used += buf.length;
    this.evict();
  }

  delete(key: string): void {
    const old = this.map.get(key);
    if (old === undefined) return;
    this.map.delete(key);
    this.used -= old.buf.length;
  }

  clear(): void {
    this.map.clear();
    this.used = 0;
  }

  /**
   * The blob's bytes from the cache, or read whole from the store and cached. Concurrent misses for
   * the same blob share one read. `size` is the manifest's size; a blob larger than that is refused.
   */
  async load(blobs: BlobStore, sha256: string, size: number): Promise<Buffer> {
    const hit = this.get(sha256);
    if (hit) return hit;
    const pending = this.loading.get(sha256);
    if (pending) return pending;
    const p = readWhole(blobs, sha256, size).then(
      (buf) => {
        this.loading.delete(sha256);
        this.set(sha256, buf);
        return buf;
      },
      (err) => {
        this.loading.delete(sha256);
        throw err;
      },
    );
    this.loading.set(sha256, p);
    return p;
  }

  private evict(): void {
    if (this.used <= this.maxBytes) return;
    for (const [key, e] of this.map) {
      this.map.delete(key);
      this.used -= e.buf.length;
      if (this.used <= this.maxBytes) break;
    }
  }
}

async function readWhole(blobs: BlobStore, sha256: string, size: number): Promise<Buffer> {
  const bytes = await readAtMost(
    await blobs.get(sha256),
    size,
    () => new Error(`blob ${sha256} is larger than its manifest size ${size}`),
  );
  if (bytes.length !== size)
    throw new Error(`blob ${sha256} has ${bytes.length} bytes, manifest says ${size}`);
  return bytes;
}
