import { type FileLookup, manifestLookup } from '../site/rules.ts';
import type { ManifestEntry } from '../site/types.ts';
import type { ServableVersionRepository } from '../store/repos/serving/servable-versions.ts';

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
}

/**
 * Ready versions by id, kept in memory (LRU by count). Versions are immutable, so an entry never
 * goes stale; only deletion removes one (`forget`).
 */
export class VersionCache {
  private readonly entries = new Map<
    string,
    { promise: Promise<ServableVersion | null>; value?: ServableVersion }
  >();

  /**
   * The key last in the map's order (the most recently used), which a hit need not move: with one
   * hot version, hits then leave the map alone (a delete + set per hit churns its hash table).
   */
  private last = '';

  constructor(
    private readonly repo: ServableVersionRepository,
    private readonly max = 256,
  ) {}

  /** Marks `hit` most recently used (moves it to the end of the map's order). */
  private touch(versionId: string, hit: { promise: Promise<ServableVersion | null> }): void {
    if (versionId === this.last) return;
    this.entries.delete(versionId);
    this.entries.set(versionId, hit);
    this.last = versionId;
  }

  private drop(versionId: string): void {
    this.entries.delete(versionId);
    if (versionId === this.last) this.last = '';
  }

  get(versionId: string): Promise<ServableVersion | null> {
    const hit = this.entries.get(versionId);
    if (hit) {
      this.touch(versionId, hit);
      return hit.promise;
    }
    const slot: { promise: Promise<ServableVersion | null>; value?: ServableVersion } = {
      promise: this.load(versionId),
    };
    this.entries.set(versionId, slot);
    this.last = versionId;
    slot.promise
      .then((v) => {
        if (!v) {
          if (this.entries.get(versionId) === slot) this.drop(versionId);
        } else slot.value = v;
      })
      .catch(() => {
        if (this.entries.get(versionId) === slot) this.drop(versionId);
      });
    while (this.entries.size > this.max) this.drop(this.entries.keys().next().value!);
    return slot.promise;
  }

  /**
   * The version if it is already loaded, without waiting (the hot path: no promise, no microtask).
   * `undefined` means "not loaded yet": ask `get`.
   */
  peek(versionId: string): ServableVersion | undefined {
    const hit = this.entries.get(versionId);
    if (hit?.value === undefined) return undefined;
    this.touch(versionId, hit);
    return hit.value;
  }

  forget(versionId: string): void {
    this.drop(versionId);
  }

  private async load(versionId: string): Promise<ServableVersion | null> {
    const v = await this.repo.readyById(versionId);
    if (!v) return null;
    const entries: ManifestEntry[] = [];
    for (const r of v.files) {
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
    };
  }
}
