/** Tables of the foundation: tenants, people, credentials, teams. Times are ISO-8601 UTC strings. */
export interface FoundationTables {
  meta: { key: string; value: string };
  tenants: { id: string; name: string; created_at: string };
  users: {
    id: string;
    tenant_id: string;
    email: string;
    name: string;
    password_hash: string | null;
    /** 1 for the instance owner (may create users). */
    is_admin: number;
    created_at: string;
    updated_at: string;
  };
  sessions: {
    id: string;
    user_id: string;
    token_hash: string;
    created_at: string;
    expires_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
    user_agent: string | null;
  };
  api_keys: {
    id: string;
    user_id: string;
    team_id: string;
    tenant_id: string;
    name: string;
    preset: string;
    /** JSON array of scopes. */
    scopes: string;
    token_hash: string;
    /** Last four characters, shown in listings. */
    hint: string;
    /** A key bound to one space acts on that space only; null: on the whole team. */
    space_id: string | null;
    created_at: string;
    expires_at: string | null;
    last_used_at: string | null;
    revoked_at: string | null;
  };
  teams: {
    id: string;
    tenant_id: string;
    name: string;
    slug: string;
    plan: string;
    partner_enabled_at: string | null;
    default_data_location: string;
    default_space_access: string;
    logo: string | null;
    metadata: string | null;
    billing_customer_id: string | null;
    system_space_id: string | null;
    presentation: string | null;
    created_at: string;
    updated_at: string;
  };
  team_members: { team_id: string; user_id: string; role: string; created_at: string; updated_at: string };
  team_invitations: {
    id: string;
    team_id: string;
    email: string;
    role: string;
    invited_by: string;
    status: string;
    created_at: string;
    expires_at: string;
    responded_at: string | null;
  };
}
