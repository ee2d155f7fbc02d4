import type { Clock } from '../clock.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { ApiError, type ProblemExtras } from '../errors/problem.ts';

/**
 * A sliding-window counter per key, in memory. Good for one process; a scaled-out deployment puts a
 * shared limiter in front (documented in docs/guides/self-hosting.md).
 */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    readonly max: number,
    readonly windowMs: number,
    private readonly code: ErrorCode = 'rate_limited',
    private readonly extras: ProblemExtras = {},
  ) {}

  /** Counts one hit; throws a 429 problem with `Retry-After` when the key is over its limit. */
  take(key: string): void {
    const now = this.clock.now().getTime();
    const since = now - this.windowMs;
    const list = (this.hits.get(key) ?? []).filter((t) => t > since);
    if (list.length >= this.max) {
      const retryAfter = Math.max(1, Math.ceil((list[0]! + this.windowMs - now) / 1000));
      this.hits.set(key, list);
      throw new ApiError(this.code, `Too many requests; try again in ${retryAfter} s.`, {
        ...this.extras,
        facts: { retryAfterSeconds: retryAfter },
        details: { limit: this.max, windowSeconds: this.windowMs / 1000, retryAfterSeconds: retryAfter },
      });
    }
    list.push(now);
    this.hits.set(key, list);
    if (this.hits.size > 100_000) this.prune(since);
  }

  private prune(since: number): void {
    for (const [k, v] of this.hits) if (!v.some((t) => t > since)) this.hits.delete(k);
  }
}
