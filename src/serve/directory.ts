import type { Kysely } from 'kysely';
import { type Clock, nowMs } from '../clock.ts';
import type { Config } from '../config.ts';
import { splitSiteLabel } from '../domain/hosts/names.ts';
import type { DB } from '../store/schema.ts';

/** What the edge needs to know about a space, loaded once and kept in memory. */
export interface SiteSpace {
  id: string;
  tenantId: string;
  teamId: string | null;
  publicName: string;
  anonymous: boolean;
  access: 'private' | 'team' | 'public';
  noindex: boolean;
  /** Non-null when serving is off: `anonymous_expired`, `abuse_takedown`, …, or `deleted`. */
  disabledReason: string | null;
  /** The stored SpaceConfig overlay, or null. */
  overlay: Record<string, unknown> | null;
  /** Changes whenever the overlay does (the settings digest). */
  overlayKey: string;
  /** Channel name → version id. */
  channels: Record<string, string>;
}

export type HostTarget =
  | { kind: 'none' }
  /**
   * A previous managed name of a renamed space: answer 307 to the current hostname — when the space is
   * one anybody may know about (`open`); a team/private or deleted space's old name reveals nothing.
   */
  | { kind: 'moved'; hostname: string; open: boolean }
  /** A site: serve `versionId` if set, else the version `channel` points at. */
  | { kind: 'site'; space: SiteSpace; channel: string; versionId: string | null };

interface Entry {
  target: HostTarget;
  spaceId: string | null;
  at: number;
}

/** How long a cached answer is trusted without an invalidation (other processes' writes). */
export const DIRECTORY_TTL_MS = 2000;

/**
 * Host → space resolution for the site edge, cached in memory. Writes in this process invalidate
 * entries at once (`invalidate(spaceId)`); writes from other processes are picked up within
 * DIRECTORY_TTL_MS.
 *
 * Hostnames: `<name>.<base>` → channel `live`; `<channel>--<name>.<base>` → that channel;
 * `<versionId>--<name>.<base>` → that version (`ver_…` or, DNS-safe, `ver-…`).
 */
export class SiteDirectory {
  private readonly entries = new Map<string, Entry>();
  /** Loads in flight by hostname, shared by the requests that wait for them. */
  private readonly loading = new Map<string, Promise<HostTarget>>();
  /** Bumped by every invalidation: a load that started before one does not store its answer. */
  private generation = 0;
  private readonly suffix: string;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly config: Config,
    private readonly clock: Clock,
  ) {
    this.suffix = `.${config.baseDomain}`;
  }

  /** The label of a managed hostname (`a--b` in `a--b.localhost`), or null if not under the base domain. */
  labelOf(hostname: string): string | null {
    if (!hostname.endsWith(this.suffix)) return null;
    const label = hostname.slice(0, -this.suffix.length);
    if (!label || label.includes('.')) return null;
    return label;
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
    const label = this.labelOf(hostname);
    if (!label) return { target: { kind: 'none' }, spaceId: null };
    const { prefix, name } = splitSiteLabel(label);
    const host = await this.db
      .selectFrom('space_hostnames')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    if (!host) return { target: { kind: 'none' }, spaceId: null };
    const row = await this.db
      .selectFrom('spaces')
      .selectAll()
      .where('id', '=', host.space_id)
      .executeTakeFirst();
    if (!row) return { target: { kind: 'none' }, spaceId: null };
    if (host.current !== 1) {
      // Renamed: keep the channel/version prefix, point at the current name. No chains: always current.
      const current = `${prefix ? `${prefix}--` : ''}${row.public_name}${this.suffix}`;
      const open = !row.deleted_at && (row.anonymous === 1 || row.access === 'public');
      return { target: { kind: 'moved', hostname: current, open }, spaceId: row.id };
    }
    const channels = await this.db
      .selectFrom('channels')
      .select(['name', 'version_id'])
      .where('space_id', '=', row.id)
      .execute();
    const space: SiteSpace = {
      id: row.id,
      tenantId: row.tenant_id,
      teamId: row.team_id,
      publicName: row.public_name,
      anonymous: row.anonymous === 1,
      access: row.access as SiteSpace['access'],
      noindex: row.noindex === 1,
      // An expired anonymous space shows its expired page forever, even after the purge.
      disabledReason: row.disabled_reason ?? (row.deleted_at ? 'deleted' : null),
      overlay: row.config ? JSON.parse(row.config) : null,
      overlayKey: row.settings_digest,
      channels: Object.fromEntries(channels.map((c) => [c.name, c.version_id])),
    };
    let channel = 'live';
    let versionId: string | null = null;
    if (prefix) {
      if (/^ver[_-][0-9a-z]{26}$/.test(prefix)) versionId = `ver_${prefix.slice(4)}`;
      else channel = prefix;
    }
    return { target: { kind: 'site', space, channel, versionId }, spaceId: row.id };
  }
}
