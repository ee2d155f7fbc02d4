import type { Clock } from '../../clock.ts';
import type { AccessLogFilter, AccessLogLine } from '../../store/repos/analytics/access-log.ts';
import type { Store } from '../../store/repos/index.ts';

export type AnalyticsWindow = '48h' | '7d' | '30d';

const HOUR = 3600_000;
const WINDOW_HOURS: Record<AnalyticsWindow, number> = { '48h': 48, '7d': 7 * 24, '30d': 30 * 24 };
/** Keys reported per top list. */
export const TOP_N = 10;
/** Keys kept per (space, day, kind) once the day is over (the sweep trims the rest). */
export const TOP_KEEP = 100;
/** Days back the sweep trims top keys (a flush can still add to yesterday; a missed run is caught up). */
const COMPACT_DAYS = 3;

export interface SpaceAnalytics {
  window: AnalyticsWindow;
  from: string;
  to: string;
  requests: number;
  visitors: number;
  bytes: number;
  statusClasses: { '2xx': number; '3xx': number; '4xx': number; '5xx': number };
  /** Hourly for 48h, daily otherwise. */
  series: Array<{ at: string; requests: number; bytes: number }>;
  topPaths: Array<{ key: string; requests: number }>;
  topReferrers: Array<{ key: string; requests: number }>;
  topCountries: Array<{ key: string; requests: number }>;
}

export interface TrafficUsage {
  storageBytes: number;
  bandwidthBytes: number;
  requests: number;
}

/**
 * Reads over the access log and its rollups: filtered log pages (the routes resolve and authorize
 * the space first), analytics windows read from the rollups only, and usage.
 */
export class AnalyticsService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  accessLog(
    spaceId: string,
    filter: AccessLogFilter,
    after: string | null,
    limit: number,
  ): Promise<AccessLogLine[]> {
    return this.store.repos.accessLog.list(spaceId, filter, after, limit);
  }

  accessLogNewer(spaceId: string, after: string, limit: number): Promise<AccessLogLine[]> {
    return this.store.repos.accessLog.newer(spaceId, after, limit);
  }

  async analytics(spaceId: string, window: AnalyticsWindow): Promise<SpaceAnalytics> {
    const now = this.clock.now().getTime();
    const hours = WINDOW_HOURS[window];
    // Whole hours: the current hour counts, so the window starts hours-1 before it.
    const fromMs = Math.floor(now / HOUR) * HOUR - (hours - 1) * HOUR;
    const from = new Date(fromMs).toISOString();
    const fromHour = from.slice(0, 13);
    const fromDay = from.slice(0, 10);
    const r = this.store.repos.accessRollups;
    const [rows, visitors, topPaths, topReferrers, topCountries] = await Promise.all([
      r.hourly(spaceId, fromHour),
      r.visitors(spaceId, fromDay),
      r.top(spaceId, 'path', fromDay, TOP_N),
      r.top(spaceId, 'referrer', fromDay, TOP_N),
      r.top(spaceId, 'country', fromDay, TOP_N),
    ]);
    const out: SpaceAnalytics = {
      window,
      from,
      to: new Date(now).toISOString(),
      requests: 0,
      visitors,
      bytes: 0,
      statusClasses: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 },
      series: [],
      topPaths,
      topReferrers,
      topCountries,
    };
    const hourly = window === '48h';
    const buckets = new Map<string, { at: string; requests: number; bytes: number }>();
    for (const row of rows) {
      out.requests += row.requests;
      out.bytes += row.bytes;
      out.statusClasses['2xx'] += row.s2xx;
      out.statusClasses['3xx'] += row.s3xx;
      out.statusClasses['4xx'] += row.s4xx;
      out.statusClasses['5xx'] += row.s5xx;
      const at = hourly ? `${row.hour}:00:00.000Z` : `${row.hour.slice(0, 10)}T00:00:00.000Z`;
      let b = buckets.get(at);
      if (!b) {
        b = { at, requests: 0, bytes: 0 };
        buckets.set(at, b);
      }
      b.requests += row.requests;
      b.bytes += row.bytes;
    }
    out.series = [...buckets.values()];
    return out;
  }

  /** Storage, bandwidth and requests of the last 30 days for spaces; null when never served. */
  async spaceUsage(spaceId: string): Promise<TrafficUsage | null> {
    if (!(await this.store.repos.accessLog.anyFor(spaceId))) return null;
    return this.traffic([spaceId]);
  }

  async teamUsage(teamId: string): Promise<{
    spaces: number;
    members: number;
    storageBytes: number;
    publishesThisMonth: number;
    bandwidthBytes: number;
    requests: number;
    periodStart: string;
  }> {
    const u = this.store.repos.usage;
    const ids = await u.teamSpaceIds(teamId);
    const now = this.clock.now();
    const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const [members, publishes, traffic] = await Promise.all([
      u.memberCount(teamId),
      u.publishesSince(ids, month),
      this.traffic(ids, month),
    ]);
    return {
      spaces: ids.length,
      members,
      storageBytes: traffic.storageBytes,
      publishesThisMonth: publishes,
      bandwidthBytes: traffic.bandwidthBytes,
      requests: traffic.requests,
      periodStart: month,
    };
  }

  /** Traffic since the first of this month (UTC) unless `since` is given. */
  private async traffic(spaceIds: string[], since?: string): Promise<TrafficUsage> {
    const now = this.clock.now();
    const start = since ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const [storageBytes, t] = await Promise.all([
      this.store.repos.usage.storageBytes(spaceIds),
      this.store.repos.accessRollups.totals(spaceIds, start.slice(0, 13)),
    ]);
    return { storageBytes, bandwidthBytes: t.bytes, requests: t.requests };
  }

  /** The retention sweep: raw lines older than the setting; per-day visitor/top rows past what analytics reads. */
  async sweep(retentionDays: number): Promise<{ lines: number; rollups: number; compacted: number }> {
    const now = this.clock.now().getTime();
    const lines = await this.store.repos.accessLog.prune(
      new Date(now - retentionDays * 24 * HOUR).toISOString(),
    );
    // Visitor hashes and top keys: kept as long as the longest analytics window (30 days) needs them.
    const keepDays = Math.max(retentionDays, 31);
    const rollups = await this.store.repos.accessRollups.prune(
      new Date(now - keepDays * 24 * HOUR).toISOString().slice(0, 10),
    );
    // Finished days keep their TOP_KEEP most requested keys per kind: a 30-day top list stays small.
    const compacted = await this.store.repos.accessRollups.compactTop(
      new Date(now - COMPACT_DAYS * 24 * HOUR).toISOString().slice(0, 10),
      new Date(now).toISOString().slice(0, 10),
      TOP_KEEP,
    );
    return { lines, rollups, compacted };
  }
}
