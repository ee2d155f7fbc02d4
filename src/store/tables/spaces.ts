/** Spaces, their hostnames (never re-issued), channels and long-running operations. */
export interface SpaceTables {
  spaces: {
    id: string;
    tenant_id: string;
    team_id: string | null;
    principal_type: string | null;
    principal_id: string | null;
    anonymous: number;
    slug: string;
    public_name: string;
    title: string;
    status: string;
    access: string;
    data_location: string;
    noindex: number;
    /** SpaceConfig overlay as canonical JSON, or null. */
    config: string | null;
    settings_digest: string;
    disabled_at: string | null;
    disabled_reason: string | null;
    claim_expires_at: string | null;
    claimed_at: string | null;
    purge_after: string | null;
    expiry_extended_to: string | null;
    /** Git remote object as JSON, or null. */
    git: string | null;
    created_by: string | null;
    created_at: string;
    updated_at: string;
    deleted_at: string | null;
    /** The custom domain `liveUrl` names (kept by the domains area), or null: the managed hostname. */
    primary_domain?: string | null;
  };
  space_hostnames: {
    /** A managed hostname label (the public name); unique forever, never given to another space. */
    name: string;
    space_id: string;
    current: number;
    created_at: string;
    retired_at: string | null;
  };
  channels: {
    space_id: string;
    name: string;
    version_id: string;
    updated_at: string;
  };
  channel_history: {
    id: string;
    space_id: string;
    channel: string;
    version_id: string;
    previous_version_id: string | null;
    actor: string | null;
    reason: string;
    created_at: string;
  };
  operations: {
    id: string;
    tenant_id: string;
    space_id: string | null;
    kind: string;
    status: string;
    /** JSON array of {type, id}. */
    resources: string;
    /** JSON {total, completed, failed} or null. */
    progress: string | null;
    /** JSON array of Diagnostic entries or null. */
    diagnostics: string | null;
    created_at: string;
    updated_at: string;
    finished_at: string | null;
  };
}
