import type { Kysely } from 'kysely';
import type { DB } from '../store/schema.ts';
import { versionFilesQuery } from '../store/version-files.ts';
import { type FileLookup, manifestLookup } from './rules.ts';
import type { ManifestEntry } from './types.ts';

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

  constructor(
    private readonly db: Kysely<DB>,
    private readonly max = 256,
  ) {}

  get(versionId: string): Promise<ServableVersion | null> {
    const hit = this.entries.get(versionId);
    if (hit) {
      this.entries.delete(versionId);
      this.entries.set(versionId, hit);
      return hit.promise;
    }
    const slot: { promise: Promise<ServableVersion | null>; value?: ServableVersion } = {
      promise: this.load(versionId),
    };
    this.entries.set(versionId, slot);
    slot.promise
      .then((v) => {
        if (!v) this.entries.delete(versionId);
        else slot.value = v;
      })
      .catch(() => this.entries.delete(versionId));
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return slot.promise;
  }

  /**
   * The version if it is already loaded, without waiting (the hot path: no promise, no microtask).
   * `undefined` means "not loaded yet": ask `get`.
   */
  peek(versionId: string): ServableVersion | undefined {
    const hit = this.entries.get(versionId);
    if (hit?.value === undefined) return undefined;
    this.entries.delete(versionId);
    this.entries.set(versionId, hit);
    return hit.value;
  }

  forget(versionId: string): void {
    this.entries.delete(versionId);
  }

  private async load(versionId: string): Promise<ServableVersion | null> {
    const v = await this.db.selectFrom('versions').selectAll().where('id', '=', versionId).executeTakeFirst();
    if (v?.status !== 'ready') return null;
    const rows = await versionFilesQuery(this.db, v).execute();
    const entries: ManifestEntry[] = [];
    for (const r of rows) {
      const entry: ManifestEntry = {
        path: r.path,
        sha256: r.sha256,
        size: Number(r.size),
        contentType: r.content_type ?? 'application/octet-stream',
      };
      if (r.encodings) entry.encodings = JSON.parse(r.encodings);
      entries.push(entry);
    }
    return {
      id: v.id,
      spaceId: v.space_id,
      createdAt: new Date(v.finalized_at ?? v.created_at),
      entries,
      files: manifestLookup(entries),
      rules: v.rules ? JSON.parse(v.rules) : null,
      config: v.config ? JSON.parse(v.config) : null,
    };
  }
}
