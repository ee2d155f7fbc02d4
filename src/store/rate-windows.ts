import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Database } from './db.ts';

/** A window is counted in this many buckets: the sliding count is exact to a tenth of the window. */
export const BUCKETS_PER_WINDOW = 10;

export interface SlidingCount {
  /** Hits in the last `windowMs`, this one included (the oldest bucket weighted by its overlap). */
  count: number;
  /** When the oldest counted hit's bucket leaves the window (ms since the epoch), or null. */
  oldestLeavesAt: number | null;
}

/**
 * Rate-limit counts in the database, so every instance counts against one limit. A window is
 * counted in `BUCKETS_PER_WINDOW` buckets: one statement per hit adds it to its bucket (an atomic
 * upsert) and reads the buckets still inside the window.
 */
export class RateWindows {
  constructor(private readonly database: Database) {}

  async hit(name: string, key: string, windowMs: number, nowMs: number): Promise<SlidingCount> {
    const hashed = hashKey(name, key);
    const bucketMs = windowMs / BUCKETS_PER_WINDOW;
    const bucket = Math.floor(nowMs / bucketMs);
    const expiresAt = Math.ceil((bucket + 1) * bucketMs + windowMs);
    const r = await sql<{ window: number | string; hits: number }>`
      with cur as (
        insert into rate_windows (key, "window", hits, expires_at)
        values (${hashed}, ${bucket}, 1, ${expiresAt})
        on conflict (key, "window") do update set hits = rate_windows.hits + 1
        returning "window", hits
      )
      select "window", hits from cur
      union all
      select "window", hits from rate_windows
        where key = ${hashed} and "window" >= ${bucket - BUCKETS_PER_WINDOW} and "window" < ${bucket}`.execute(
      this.database.db,
    );
    const windowStart = nowMs - windowMs;
    let count = 0;
    let oldest: number | null = null;
    for (const row of r.rows) {
      const start = Number(row.window) * bucketMs;
      const end = start + bucketMs;
      if (end <= windowStart || row.hits <= 0) continue;
      // The bucket straddling the window's start counts for the part still inside.
      const inside = start >= windowStart ? 1 : (end - windowStart) / bucketMs;
      count += row.hits * inside;
      if (oldest === null || start < oldest) oldest = start;
    }
    return { count, oldestLeavesAt: oldest === null ? null : oldest + bucketMs + windowMs };
  }

  /** Takes back a hit that was refused (refusals do not count against the limit). */
  async unhit(name: string, key: string, windowMs: number, nowMs: number): Promise<void> {
    const bucket = Math.floor(nowMs / (windowMs / BUCKETS_PER_WINDOW));
    await this.database.db
      .updateTable('rate_windows')
      .set((eb) => ({ hits: eb('hits', '-', 1) }))
      .where('key', '=', hashKey(name, key))
      .where('window', '=', bucket)
      .execute();
  }

  /** Deletes buckets that no longer count. */
  async prune(nowMs: number): Promise<number> {
    const r = await this.database.db
      .deleteFrom('rate_windows')
      .where('expires_at', '<', nowMs)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

function hashKey(name: string, key: string): string {
  return createHash('sha256').update(`${name}\0${key}`).digest('hex');
}
