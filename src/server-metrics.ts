import type { JobQueue } from './jobs/queue.ts';
import type { Metrics, Sample } from './metrics.ts';
import type { ChangeFeed } from './store/change-feed.ts';

/** The change feed's and the job queue's metrics (the edge registers its caches itself). */
export function registerServerMetrics(
  metrics: Metrics,
  parts: { changes: ChangeFeed; jobs: JobQueue },
): void {
  const { changes, jobs } = parts;
  metrics.register({
    name: 'spaces_change_feed_lag_seconds',
    help: 'Time from a change committed on another instance to its delivery here, over the last 1,024 changes: p50, p99, max (PostgreSQL).',
    type: 'gauge',
    collect: () => {
      const { lagMs } = changes.stats();
      return [
        ['0.5', lagMs.p50],
        ['0.99', lagMs.p99],
        ['1', lagMs.max],
      ].map(([q, v]) => ({
        name: 'spaces_change_feed_lag_seconds',
        labels: { quantile: q as string },
        value: (v as number) / 1000,
      }));
    },
  });
  metrics.register({
    name: 'spaces_change_feed_changes_total',
    help: 'Changes of other instances applied here, by how they arrived: notified, or caught up by the fallback query; and sequence gaps given up on.',
    type: 'counter',
    collect: () => {
      const s = changes.stats();
      return [
        { name: 'spaces_change_feed_changes_total', labels: { via: 'delivered' }, value: s.delivered },
        { name: 'spaces_change_feed_changes_total', labels: { via: 'caught_up' }, value: s.caughtUp },
        { name: 'spaces_change_feed_changes_total', labels: { via: 'skipped_gap' }, value: s.skippedGaps },
      ];
    },
  });
  metrics.register({
    name: 'spaces_change_feed_connected',
    help: '1 while the LISTEN connection is up (PostgreSQL), else 0.',
    type: 'gauge',
    collect: () => [{ name: 'spaces_change_feed_connected', value: changes.stats().connected ? 1 : 0 }],
  });
  metrics.register({
    name: 'spaces_change_feed_reconnects_total',
    help: 'Times the LISTEN connection was made again after it dropped.',
    type: 'counter',
    collect: () => [{ name: 'spaces_change_feed_reconnects_total', value: changes.stats().reconnects }],
  });
  metrics.register({
    name: 'spaces_jobs',
    help: 'Jobs in the durable queue by kind and status (all instances).',
    type: 'gauge',
    collect: async () => {
      const stats = await jobs.stats();
      const out: Sample[] = [];
      for (const [kind, byStatus] of Object.entries(stats.kinds)) {
        for (const [status, n] of Object.entries(byStatus)) {
          out.push({ name: 'spaces_jobs', labels: { kind, status }, value: n ?? 0 });
        }
      }
      return out;
    },
  });
  metrics.register({
    name: 'spaces_jobs_running',
    help: 'Jobs this instance is running now.',
    type: 'gauge',
    collect: async () => [{ name: 'spaces_jobs_running', value: (await jobs.stats()).runningHere }],
  });
}
