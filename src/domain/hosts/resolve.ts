import type { SiteHostRepository, SiteSpaceRow } from '../../store/repos/serving/site-hosts.ts';
import { prefixTarget, siteHostname, siteLabelOf, splitSiteLabel } from './names.ts';

/** What the edge and the access routes need to know about a space a hostname names. */
export interface HostSpace {
  id: string;
  tenantId: string;
  teamId: string | null;
  publicName: string;
  anonymous: boolean;
  access: 'private' | 'team' | 'public';
  noindex: boolean;
  /** Non-null when serving is off: `anonymous_expired`, `abuse_takedown`, …, or `deleted`. */
  disabledReason: string | null;
  /** Deleted (its hostnames are never given to another space). */
  deleted: boolean;
  createdBy: string | null;
  /** The stored SpaceConfig overlay, or null. */
  overlay: Record<string, unknown> | null;
  /** Changes whenever the overlay does (the settings digest). */
  overlayKey: string;
}

/** A space a current hostname serves, with where its channels point. */
export interface SiteSpace extends HostSpace {
  /** Channel name → version id. */
  channels: Record<string, string>;
}

export type HostTarget =
  | { kind: 'none' }
  /**
   * A previous managed name of a renamed space: answer 307 to the current hostname — when the space is
   * one anybody may know about (`open`); a team/private or deleted space's old name reveals nothing.
   */
  | { kind: 'moved'; hostname: string; open: boolean; space: HostSpace }
  /**
   * A redirect domain: every request goes to `hostname` with `status`, path and query kept.
   */
  | { kind: 'redirect'; hostname: string; status: number; space: HostSpace }
  /**
   * A site: serve `versionId` if set, else the version `channel` points at. `custom`: reached through
   * a verified custom domain (always the `live` channel).
   */
  | { kind: 'site'; space: SiteSpace; channel: string; versionId: string | null; custom?: boolean };

function hostSpaceOf(row: SiteSpaceRow): HostSpace {
  return {
    id: row.id,
    tenantId: row.tenantId,
    teamId: row.teamId,
    publicName: row.publicName,
    anonymous: row.anonymous,
    access: row.access as HostSpace['access'],
    noindex: row.noindex,
    // An expired anonymous space shows its expired page forever, even after the purge.
    disabledReason: row.disabledReason ?? (row.deleted ? 'deleted' : null),
    deleted: row.deleted,
    createdBy: row.createdBy,
    overlay: row.config ? JSON.parse(row.config) : null,
    overlayKey: row.settingsDigest,
  };
}

/**
 * The one hosts resolver: hostname → target. `<name>.<base>` → the space's `live` channel;
 * `<channel>--<name>.<base>` → that channel; `<versionId>--<name>.<base>` → that version; a renamed
 * space's old name → `moved` to its current hostname (same prefix; never a chain). Hostnames are
 * lowercase, without port. Uncached: the edge keeps answers in its directory (serve/directory.ts).
 */
export class HostsResolver {
  constructor(
    private readonly hosts: SiteHostRepository,
    private readonly baseDomain: string,
  ) {}

  /** The label of a managed hostname (`a--b` in `a--b.localhost`), or null if not under the base domain. */
  labelOf(hostname: string): string | null {
    return siteLabelOf(hostname, this.baseDomain);
  }

  async resolve(hostname: string): Promise<HostTarget> {
    const label = this.labelOf(hostname);
    if (!label) return this.resolveCustom(hostname);
    const { prefix, name } = splitSiteLabel(label);
    const host = await this.hosts.byNameWithChannels(name);
    if (!host) return { kind: 'none' };
    const row = host.space;
    const space = hostSpaceOf(row);
    if (!host.current) {
      // Renamed: keep the channel/version prefix, point at the current name. No chains: always current.
      const open = !row.deleted && (row.anonymous || row.access === 'public');
      return { kind: 'moved', hostname: siteHostname(prefix, row.publicName, this.baseDomain), open, space };
    }
    const { channel, versionId } = prefixTarget(prefix);
    return { kind: 'site', space: { ...space, channels: host.channels }, channel, versionId };
  }

  /** A verified custom domain: the bound space's `live` channel, or its redirect. */
  private async resolveCustom(hostname: string): Promise<HostTarget> {
    const custom = await this.hosts.byCustomDomain(hostname);
    if (!custom) return { kind: 'none' };
    const space = hostSpaceOf(custom.space);
    if (custom.role === 'redirect' && custom.redirectTarget) {
      return {
        kind: 'redirect',
        hostname: custom.redirectTarget,
        status: custom.redirectStatus ?? 308,
        space,
      };
    }
    const channels = await this.hosts.channelVersions(custom.space.id);
    return { kind: 'site', space: { ...space, channels }, channel: 'live', versionId: null, custom: true };
  }
}
