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
      .select([
        'h.current',
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
      ])
      .where('h.name', '=', name)
      .executeTakeFirst();
    if (!r) return null;
    return {
      current: r.current === 1,
      space: {
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
      },
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
