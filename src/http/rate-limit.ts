import type { Clock } from '../clock.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { ApiError, type ProblemExtras } from '../errors/problem.ts';

/** Where limits are counted when several instances share one database (store/rate-windows.ts). */
export interface SharedRateCounts {
  hit(
    name: string,
    key: string,
    windowMs: number,
    nowMs: number,
  ): Promise<{ count: number; oldestLeavesAt: number | null }>;
  unhit(name: string, key: string, windowMs: number, nowMs: number): Promise<void>;
}

/**
 * A rate limit per key. On one process (SQLite) it is a sliding window in memory. With `shared`
 * (PostgreSQL: every instance of a scaled-out deployment), hits are counted in the database in
 * buckets of a tenth of the window, one atomic upsert per hit; the sliding count weights the bucket
 * straddling the window's start by its overlap. As in memory, a refused hit does not count.
 */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();
  private shared: { counts: SharedRateCounts; name: string } | null = null;

  constructor(
    private readonly clock: Clock,
    readonly max: number,
    readonly windowMs: number,
    private readonly code: ErrorCode = 'rate_limited',
    private readonly extras: ProblemExtras = {},
  ) {}

  /** Counts hits in the shared store under this limiter's `name` from now on. */
  shareWith(counts: SharedRateCounts, name: string): this {
    this.shared = { counts, name };
    return this;
  }

  /** Counts one hit; throws a 429 problem with `Retry-After` when the key is over its limit. */
  async take(key: string): Promise<void> {
    if (this.shared) return this.takeShared(this.shared, key);
    const now = this.clock.now().getTime();
    const since = now - this.windowMs;
    const list = (this.hits.get(key) ?? []).filter((t) => t > since);
    if (list.length >= this.max) {
      const retryAfter = Math.max(1, Math.ceil((list[0]! + this.windowMs - now) / 1000));
      this.hits.set(key, list);
      throw this.refusal(retryAfter);
    }
    list.push(now);
    this.hits.set(key, list);
    if (this.hits.size > 100_000) this.prune(since);
  }

  private async takeShared(shared: { counts: SharedRateCounts; name: string }, key: string): Promise<void> {
    const now = this.clock.now().getTime();
    const { count, oldestLeavesAt } = await shared.counts.hit(shared.name, key, this.windowMs, now);
    if (count <= this.max) return;
    await shared.counts.unhit(shared.name, key, this.windowMs, now);
    throw this.refusal(Math.max(1, Math.ceil(((oldestLeavesAt ?? now + this.windowMs) - now) / 1000)));
  }

  private refusal(retryAfter: number): ApiError {
    return new ApiError(this.code, `Too many requests; try again in ${retryAfter} s.`, {
      ...this.extras,
      facts: { retryAfterSeconds: retryAfter },
      details: { limit: this.max, windowSeconds: this.windowMs / 1000, retryAfterSeconds: retryAfter },
    });
  }

  private prune(since: number): void {
    for (const [k, v] of this.hits) if (!v.some((t) => t > since)) this.hits.delete(k);
  }
}
