import type { RepoContext } from '../index.ts';

/** A space as the site edge and the access routes see it (deleted ones included: the edge says so). */
export interface SiteSpaceRow {
  id: string;
  tenantId: string;
  teamId: string | null;
  publicName: string;
  anonymous: boolean;
  access: string;
  noindex: boolean;
  disabledReason: string | null;
  deleted: boolean;
  createdBy: string | null;
  /** The stored SpaceConfig overlay as JSON, or null. */
  config: string | null;
  settingsDigest: string;
}

/** A verified custom domain bound to a space: serve it (`standard`) or redirect (`redirect`). */
export interface CustomHostRow {
  role: 'standard' | 'redirect';
  redirectTarget: string | null;
  redirectStatus: number | null;
  space: SiteSpaceRow;
}

const SPACE_COLUMNS = [
  's.id',
  's.tenant_id',
  's.team_id',
  's.public_name',
  's.anonymous',
  's.access',
  's.noindex',
  's.disabled_reason',
  's.deleted_at',
  's.created_by',
  's.config',
  's.settings_digest',
] as const;

type SpaceColumns = {
  id: string;
  tenant_id: string;
  team_id: string | null;
  public_name: string;
  anonymous: number;
  access: string;
  noindex: number;
  disabled_reason: string | null;
  deleted_at: string | null;
  created_by: string | null;
  config: string | null;
  settings_digest: string;
};

function spaceOf(r: SpaceColumns): SiteSpaceRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    teamId: r.team_id,
    publicName: r.public_name,
    anonymous: r.anonymous === 1,
    access: r.access,
    noindex: r.noindex === 1,
    disabledReason: r.disabled_reason,
    deleted: r.deleted_at !== null,
    createdBy: r.created_by,
    config: r.config,
    settingsDigest: r.settings_digest,
  };
}

/** A managed hostname label and the space it belongs to; `current: false` for a renamed space's old name. */
export interface SiteHostRow {
  current: boolean;
  space: SiteSpaceRow;
}

/**
 * The serving read model of hostnames: which space a managed label names, and where the space's
 * channels point. Read by the hosts resolver (the edge and the access routes); written by the spaces
 * and publishing areas.
 */
export class SiteHostRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** The space a label (`<name>`) names, current or former; null when no space ever had it. */
  async byName(name: string): Promise<SiteHostRow | null> {
    const r = await this.ctx.exec
      .selectFrom('space_hostnames as h')
      .innerJoin('spaces as s', 's.id', 'h.space_id')
      .select(['h.current', ...SPACE_COLUMNS])
      .where('h.name', '=', name)
      .executeTakeFirst();
    if (!r) return null;
    return { current: r.current === 1, space: spaceOf(r) };
  }

  /**
   * `byName` and the space's `channelVersions` in one query (one row per channel): what the edge
   * asks for every site host it has not seen, so a cold cache costs one round trip, not two.
   */
  async byNameWithChannels(
    name: string,
  ): Promise<(SiteHostRow & { channels: Record<string, string> }) | null> {
    const rows = await this.ctx.exec
      .selectFrom('space_hostnames as h')
      .innerJoin('spaces as s', 's.id', 'h.space_id')
      .leftJoin('channels as c', 'c.space_id', 's.id')
      .select(['h.current', ...SPACE_COLUMNS, 'c.name as channel', 'c.version_id as channel_version'])
      .where('h.name', '=', name)
      .execute();
    const r = rows[0];
    if (!r) return null;
    const channels: Record<string, string> = {};
    for (const x of rows)
      if (x.channel !== null && x.channel_version !== null) channels[x.channel] = x.channel_version;
    return { current: r.current === 1, space: spaceOf(r), channels };
  }

  /**
   * The space a verified custom domain is bound to: the hostname itself, else a wildcard of its
   * parent (`*.example.com` for `a.example.com`). Null for any other hostname.
   */
  async byCustomDomain(hostname: string): Promise<CustomHostRow | null> {
    const dot = hostname.indexOf('.');
    const names = dot > 0 ? [hostname, `*.${hostname.slice(dot + 1)}`] : [hostname];
    const rows = await this.ctx.exec
      .selectFrom('domains as d')
      .innerJoin('spaces as s', 's.id', 'd.space_id')
      .select(['d.hostname', 'd.role', 'd.redirect_target', 'd.redirect_status', ...SPACE_COLUMNS])
      .where('d.hostname', 'in', names)
      .where('d.status', '=', 'verified')
      .execute();
    const r = rows.find((x) => x.hostname === hostname) ?? rows[0];
    if (!r) return null;
    return {
      role: r.role === 'redirect' ? 'redirect' : 'standard',
      redirectTarget: r.redirect_target,
      redirectStatus: r.redirect_status,
      space: spaceOf(r),
    };
  }

  /** Channel name → version id, for every channel of a space. */
  async channelVersions(spaceId: string): Promise<Record<string, string>> {
    const rows = await this.ctx.exec
      .selectFrom('channels')
      .select(['name', 'version_id'])
      .where('space_id', '=', spaceId)
      .execute();
    const out: Record<string, string> = {};
    for (const r of rows) out[r.name] = r.version_id;
    return out;
  }
}
