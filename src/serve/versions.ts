import { type FileLookup, manifestLookup } from '../site/rules.ts';
import type { ManifestEntry } from '../site/types.ts';
import type { ServableVersionRepository } from '../store/repos/serving/servable-versions.ts';
import { ByteLru, stringBytes } from './lru.ts';

/** A ready version as the edge serves it: its manifest in memory, its compiled rules, its time. */
export interface ServableVersion {
  id: string;
  spaceId: string;
  createdAt: Date;
  entries: ManifestEntry[];
  /** Path lookups and directory listings over the manifest. */
  files: Required<FileLookup>;
  /** CompiledRules JSON from finalize. */
  rules: unknown;
  /** The version's own settings file (spaces.json), or null. */
  config: Record<string, unknown> | null;
  /** An estimate of the memory this version takes (for the cache's byte bound). */
  bytes: number;
}

/**
 * Ready versions by id, kept in memory: an LRU bounded by bytes (an estimate of each manifest, its
 * lookups and rules; see budget.ts). Versions are immutable, so an entry never goes stale; only
 * deletion removes one (`forget`). Concurrent loads of one version share one query.
 */
export class VersionCache {
  private readonly loaded: ByteLru<string, ServableVersion>;
  private readonly loading = new Map<string, Promise<ServableVersion | null>>();

  constructor(
    private readonly repo: ServableVersionRepository,
    maxBytes = 64 * 1024 * 1024,
  ) {
    this.loaded = new ByteLru(maxBytes);
  }

  /** Versions held and the bytes they are estimated to take. */
  stats(): { entries: number; bytes: number; maxBytes: number } {
    return { entries: this.loaded.size, bytes: this.loaded.bytes, maxBytes: this.loaded.maxBytes };
  }

  get(versionId: string): Promise<ServableVersion | null> {
    const hit = this.loaded.get(versionId);
    if (hit) return Promise.resolve(hit);
    const pending = this.loading.get(versionId);
    if (pending) return pending;
    const p = this.load(versionId).then(
      (v) => {
        if (this.loading.get(versionId) === p) {
          this.loading.delete(versionId);
          if (v) this.loaded.set(versionId, v, v.bytes);
        }
        return v;
      },
      (err) => {
        if (this.loading.get(versionId) === p) this.loading.delete(versionId);
        throw err;
      },
    );
    this.loading.set(versionId, p);
    return p;
  }

  /**
   * The version if it is already loaded, without waiting (the hot path: no promise, no microtask).
   * `undefined` means "not loaded yet": ask `get`.
   */
  peek(versionId: string): ServableVersion | undefined {
    return this.loaded.get(versionId);
  }

  forget(versionId: string): void {
    this.loaded.delete(versionId);
    this.loading.delete(versionId);
  }

  private async load(versionId: string): Promise<ServableVersion | null> {
    const v = await this.repo.readyById(versionId);
    if (!v) return null;
    const entries: ManifestEntry[] = [];
    // What the version holds, roughly: per file the entry, its path twice (entry and lookup), the
    // digest; then rules and config as parsed objects (~3× their JSON).
    let bytes = 512 + 3 * (stringBytes(v.rules) + stringBytes(v.config));
    for (const r of v.files) {
      bytes += 240 + 2 * stringBytes(r.path) + (r.encodings ? 3 * stringBytes(r.encodings) : 0);
      const entry: ManifestEntry = {
        path: r.path,
        sha256: r.sha256,
        size: r.size,
        contentType: r.contentType ?? 'application/octet-stream',
      };
      if (r.encodings) entry.encodings = JSON.parse(r.encodings);
      entries.push(entry);
    }
    return {
      id: v.id,
      spaceId: v.spaceId,
      createdAt: new Date(v.servedSince),
      entries,
      files: manifestLookup(entries),
      rules: v.rules ? JSON.parse(v.rules) : null,
      config: v.config ? JSON.parse(v.config) : null,
      bytes,
    };
  }
}
