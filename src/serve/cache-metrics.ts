import type { Metrics, Sample } from '../metrics.ts';

interface CacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
}

/**
 * The edge's caches in `GET /metrics`: entries, estimated bytes and the bound `SPACES_CACHE_BYTES` gives
 * each, so an operator sees they stay within it however many spaces are served.
 */
export function registerCacheMetrics(
  metrics: Metrics,
  caches: Record<string, { stats(): CacheStats }>,
): void {
  const each = (name: string, pick: (s: CacheStats) => number): Sample[] =>
    Object.entries(caches).map(([cache, c]) => ({ name, labels: { cache }, value: pick(c.stats()) }));
  metrics.register({
    name: 'spaces_edge_cache_bytes',
    help: 'Estimated bytes held by each of the edge caches (blobs, versions, hosts, rules).',
    type: 'gauge',
    collect: () => each('spaces_edge_cache_bytes', (s) => s.bytes),
  });
  metrics.register({
    name: 'spaces_edge_cache_max_bytes',
    help: 'The bound of each edge cache: its share of SPACES_CACHE_BYTES.',
    type: 'gauge',
    collect: () => each('spaces_edge_cache_max_bytes', (s) => s.maxBytes),
  });
  metrics.register({
    name: 'spaces_edge_cache_entries',
    help: 'Entries held by each edge cache.',
    type: 'gauge',
    collect: () => each('spaces_edge_cache_entries', (s) => s.entries),
  });
}
