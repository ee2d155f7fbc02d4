import { type Clock, nowMs } from '../clock.ts';
import type { HostsResolver, HostTarget } from '../domain/hosts/resolve.ts';
import { ByteLru, stringBytes } from './lru.ts';

export type { HostSpace, HostTarget, SiteSpace } from '../domain/hosts/resolve.ts';

interface Entry {
  target: HostTarget;
  spaceId: string | null;
  at: number;
}

/** How long a cached answer is trusted without an invalidation (other processes' writes). */
export const DIRECTORY_TTL_MS = 2000;

/** Invalidations remembered for loads in flight (a load older than all of them is not kept). */
const RECENT_INVALIDATIONS = 1024;

export interface SiteDirectoryOptions {
  /** How long an answer is trusted without an invalidation (default DIRECTORY_TTL_MS). */
  ttlMs?: number;
  /** Memory for the answers (an LRU by estimated bytes; default 16 MiB). */
  maxBytes?: number;
}

/**
 * Host → space resolution for the site edge (the hosts resolver's answers), cached in memory: an LRU
 * bounded by bytes (see budget.ts). Writes in this process invalidate entries at once
 * (`invalidate(spaceId)`), and so do other instances' writes through the change feed; what no
 * invalidation reaches is picked up within the TTL (`DIRECTORY_TTL_MS` unless the edge sets a longer
 * one because the change feed is live).
 */
export class SiteDirectory {
  private readonly entries: ByteLru<string, Entry>;
  /** Cached hostnames by space id (a space has several: channels, versions, custom domains). */
  private readonly bySpace = new Map<string, Set<string>>();
  /** Loads in flight by hostname, shared by the requests that wait for them. */
  private readonly loading = new Map<string, Promise<HostTarget>>();
  /** Bumped by every invalidation: a load that started before one may not store its answer. */
  private generation = 0;
  /** The latest invalidations, oldest first: generation and space (null: everything). */
  private readonly recent: Array<{ generation: number; spaceId: string | null }> = [];
  readonly ttlMs: number;

  constructor(
    private readonly resolver: HostsResolver,
    private readonly clock: Clock,
    opts: SiteDirectoryOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? DIRECTORY_TTL_MS;
    this.entries = new ByteLru(opts.maxBytes ?? 16 * 1024 * 1024, (host, e) => this.unindex(host, e));
  }

  /** Answers held and the bytes they are estimated to take. */
  stats(): { entries: number; bytes: number; maxBytes: number } {
    return { entries: this.entries.size, bytes: this.entries.bytes, maxBytes: this.entries.maxBytes };
  }

  /** The label of a managed hostname (`a--b` in `a--b.localhost`), or null if not under the base domain. */
  labelOf(hostname: string): string | null {
    return this.resolver.labelOf(hostname);
  }

  /** The cached answer for `hostname` while it is fresh, without waiting; `undefined`: ask `resolve`. */
  peek(hostname: string): HostTarget | undefined {
    const hit = this.entries.get(hostname);
    if (hit && nowMs(this.clock) - hit.at < this.ttlMs) return hit.target;
    return undefined;
  }

  resolve(hostname: string): Promise<HostTarget> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(hostname);
    if (hit && now - hit.at < this.ttlMs) return Promise.resolve(hit.target);
    // Requests arriving while a host is being (re)loaded share that one load: without this, every
    // request in flight when the TTL runs out would queue its own queries on the database.
    const pending = this.loading.get(hostname);
    if (pending) return pending;
    const generation = this.generation;
    const p = this.load(hostname).then(
      ({ target, spaceId }) => {
        if (this.loading.get(hostname) === p) this.loading.delete(hostname);
        // An invalidation of this space while loading means what was read may predate the write.
        if (!this.invalidatedSince(generation, spaceId)) this.store(hostname, { target, spaceId, at: now });
        return target;
      },
      (err) => {
        if (this.loading.get(hostname) === p) this.loading.delete(hostname);
        throw err;
      },
    );
    this.loading.set(hostname, p);
    return p;
  }

  /** Forgets what is cached about a space (after a settings change, publish, promote, rename…). */
  invalidate(spaceId?: string): void {
    this.generation++;
    this.recent.push({ generation: this.generation, spaceId: spaceId ?? null });
    if (this.recent.length > RECENT_INVALIDATIONS) this.recent.shift();
    if (!spaceId) {
      this.loading.clear();
      this.entries.clear();
      this.bySpace.clear();
      return;
    }
    // Loads in flight finish, but do not store (invalidatedSince); new requests start their own.
    this.loading.clear();
    for (const key of [spaceId, null]) {
      const hosts = this.bySpace.get(key ?? '');
      if (!hosts) continue;
      this.bySpace.delete(key ?? '');
      for (const host of hosts) this.entries.delete(host);
    }
  }

  /**
   * Whether an invalidation since `generation` may cover an answer about `spaceId`: one of that
   * space, of everything, or of any space when the answer was "no space" (a hostname may have just
   * been taken). Older than what is remembered: assume so.
   */
  private invalidatedSince(generation: number, spaceId: string | null): boolean {
    if (generation === this.generation) return false;
    const oldest = this.recent[0];
    if (!oldest || oldest.generation > generation + 1) return true;
    for (let i = this.recent.length - 1; i >= 0; i--) {
      const r = this.recent[i]!;
      if (r.generation <= generation) break;
      if (r.spaceId === null || spaceId === null || r.spaceId === spaceId) return true;
    }
    return false;
  }

  private store(hostname: string, e: Entry): void {
    const old = this.entries.peek(hostname);
    if (old) this.unindex(hostname, old);
    if (!this.entries.set(hostname, e, stringBytes(hostname) + targetBytes(e.target))) return;
    const key = e.spaceId ?? '';
    let hosts = this.bySpace.get(key);
    if (!hosts) {
      hosts = new Set();
      this.bySpace.set(key, hosts);
    }
    hosts.add(hostname);
  }

  private unindex(hostname: string, e: Entry): void {
    const key = e.spaceId ?? '';
    const hosts = this.bySpace.get(key);
    if (!hosts) return;
    hosts.delete(hostname);
    if (hosts.size === 0) this.bySpace.delete(key);
  }

  private async load(hostname: string): Promise<{ target: HostTarget; spaceId: string | null }> {
    const target = await this.resolver.resolve(hostname);
    return { target, spaceId: target.kind === 'none' ? null : target.space.id };
  }
}

/** A rough size of a resolver answer in memory: the space's fields, its overlay, its channels. */
function targetBytes(t: HostTarget): number {
  if (t.kind === 'none') return 64;
  const s = t.space;
  let bytes = 480 + stringBytes(s.id) + stringBytes(s.tenantId) + stringBytes(s.teamId);
  bytes += stringBytes(s.publicName) + stringBytes(s.createdBy) + stringBytes(s.overlayKey);
  if (s.overlay) bytes += 3 * stringBytes(JSON.stringify(s.overlay));
  if (t.kind === 'site') {
    for (const [name, id] of Object.entries(t.space.channels))
      bytes += 64 + stringBytes(name) + stringBytes(id);
  } else bytes += stringBytes(t.hostname);
  return bytes;
}
