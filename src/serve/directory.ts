import { type Clock, nowMs } from '../clock.ts';
import type { HostsResolver, HostTarget } from '../domain/hosts/resolve.ts';

export type { HostSpace, HostTarget, SiteSpace } from '../domain/hosts/resolve.ts';

interface Entry {
  target: HostTarget;
  spaceId: string | null;
  at: number;
}

/** How long a cached answer is trusted without an invalidation (other processes' writes). */
export const DIRECTORY_TTL_MS = 2000;

/**
 * Host → space resolution for the site edge (the hosts resolver's answers), cached in memory. Writes in this process invalidate
 * entries at once (`invalidate(spaceId)`); writes from other processes are picked up within
 * DIRECTORY_TTL_MS.
 */
export class SiteDirectory {
  private readonly entries = new Map<string, Entry>();
  /** Loads in flight by hostname, shared by the requests that wait for them. */
  private readonly loading = new Map<string, Promise<HostTarget>>();
  /** Bumped by every invalidation: a load that started before one does not store its answer. */
  private generation = 0;

  constructor(
    private readonly resolver: HostsResolver,
    private readonly clock: Clock,
  ) {}

  /** The label of a managed hostname (`a--b` in `a--b.localhost`), or null if not under the base domain. */
  labelOf(hostname: string): string | null {
    return this.resolver.labelOf(hostname);
  }

  /** The cached answer for `hostname` while it is fresh, without waiting; `undefined`: ask `resolve`. */
  peek(hostname: string): HostTarget | undefined {
    const hit = this.entries.get(hostname);
    if (hit && nowMs(this.clock) - hit.at < DIRECTORY_TTL_MS) return hit.target;
    return undefined;
  }

  resolve(hostname: string): Promise<HostTarget> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(hostname);
    if (hit && now - hit.at < DIRECTORY_TTL_MS) return Promise.resolve(hit.target);
    // Requests arriving while a host is being (re)loaded share that one load: without this, every
    // request in flight when the TTL runs out would queue its own queries on the database.
    const pending = this.loading.get(hostname);
    if (pending) return pending;
    const generation = this.generation;
    const p = this.load(hostname).then(
      ({ target, spaceId }) => {
        if (this.loading.get(hostname) === p) this.loading.delete(hostname);
        // An invalidation while loading means what was read may predate the write: don't keep it.
        if (generation === this.generation) {
          if (this.entries.size > 50_000) this.entries.clear();
          this.entries.set(hostname, { target, spaceId, at: now });
        }
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
    this.loading.clear();
    if (!spaceId) {
      this.entries.clear();
      return;
    }
    for (const [host, e] of this.entries)
      if (e.spaceId === spaceId || e.spaceId === null) this.entries.delete(host);
  }

  private async load(hostname: string): Promise<{ target: HostTarget; spaceId: string | null }> {
    const target = await this.resolver.resolve(hostname);
    return { target, spaceId: target.kind === 'none' ? null : target.space.id };
  }
}
