/**
 * How `SPACES_CACHE_BYTES` is shared among the edge's in-process caches. Each is an LRU bounded by
 * bytes (estimates of what its entries hold), so the memory they take is set by this one number
 * whatever the number of spaces served.
 */
export interface CacheBudget {
  /** File bodies (blob-cache.ts): half. */
  blobs: number;
  /** Version manifests with their lookups and compiled rules (versions.ts): a quarter. */
  versions: number;
  /** Host → space answers (directory.ts): an eighth. */
  hosts: number;
  /** Effective rule sets with their remembered routing answers (decide.ts): the rest, an eighth. */
  rules: number;
}

export function cacheBudget(totalBytes: number): CacheBudget {
  const total = Math.max(0, Math.floor(totalBytes));
  const blobs = Math.floor(total / 2);
  const versions = Math.floor(total / 4);
  const hosts = Math.floor(total / 8);
  return { blobs, versions, hosts, rules: total - blobs - versions - hosts };
}
