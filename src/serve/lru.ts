/**
 * A least-recently-used map bounded by bytes: each entry carries an estimate of what it holds, and
 * the oldest entries go when the total passes `maxBytes`. The edge's caches (hosts, versions, rule
 * sets) are these, each with its share of `SPACES_CACHE_BYTES` (see budget.ts), so memory follows
 * the setting, not the number of spaces served.
 *
 * The order is a Map's insertion order. A hit moves its key to the end (a delete + set) only when
 * the entry has drifted into the older half of that order: fewer than `size / 2` insertions and
 * moves since its own mean it is far from eviction, and moving it would only churn the Map (a delete
 * + set per hit fills its hash table with deleted slots and forces rehashes of the whole table) on
 * the edge's hot path. With thousands of hosts in random order that churn was most of a request.
 */
export class ByteLru<K, V> {
  private readonly map = new Map<K, { value: V; bytes: number; at: number }>();
  private used = 0;
  /** Counts insertions and moves to the end of the order; an entry's `at` is its last one. */
  private tick = 0;

  constructor(
    readonly maxBytes: number,
    /** Called for each entry evicted to make room (not for `delete`, `clear` or a replaced value). */
    private readonly onEvict?: (key: K, value: V) => void,
  ) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.map.size;
  }

  /** The value, marked most recently used. */
  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    if (e.at !== this.tick && this.tick - e.at >= this.map.size >> 1) {
      this.map.delete(key);
      this.map.set(key, e);
      e.at = ++this.tick;
    }
    return e.value;
  }

  /** The value without changing the order. */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Stores `value` as most recently used; false (and nothing stored) when it alone is over the bound. */
  set(key: K, value: V, bytes: number): boolean {
    this.delete(key);
    if (bytes > this.maxBytes) return false;
    this.map.set(key, { value, bytes, at: ++this.tick });
    this.used += bytes;
    this.evict();
    return this.map.has(key);
  }

  /** Adds `delta` bytes to an entry's estimate (it grew in place), evicting others if needed. */
  grow(key: K, delta: number): void {
    const e = this.map.get(key);
    if (e === undefined) return;
    e.bytes += delta;
    this.used += delta;
    this.evict();
  }

  delete(key: K): boolean {
    const e = this.map.get(key);
    if (e === undefined) return false;
    this.map.delete(key);
    this.used -= e.bytes;
    return true;
  }

  clear(): void {
    this.map.clear();
    this.used = 0;
  }

  keys(): IterableIterator<K> {
    return this.map.keys();
  }

  private evict(): void {
    if (this.used <= this.maxBytes) return;
    for (const [key, e] of this.map) {
      this.map.delete(key);
      this.used -= e.bytes;
      this.onEvict?.(key, e.value);
      if (this.used <= this.maxBytes) break;
    }
  }
}

/** A rough size in bytes of a string held in memory (UTF-16, plus the object header). */
export function stringBytes(s: string | null | undefined): number {
  return s ? 16 + 2 * s.length : 0;
}
