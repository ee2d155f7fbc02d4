/** Tables of the OAuth 2.0 authorization server. Times are ISO-8601 UTC strings; JSON as text. */
export interface OAuthTables {
  oauth_apps: {
    /** Also the app's `client_id`. */
    id: string;
    tenant_id: string;
    team_id: string;
    name: string;
    /** `confidential` | `public` */
    client_type: string;
    /** JSON array of exact redirect URI strings. */
    redirect_uris: string;
    /** JSON array of scopes the app may ask for. */
    scopes: string;
    /** sha256 of the client secret (`sfcs_…`); null for public clients. */
    secret_hash: string | null;
    secret_hint: string | null;
    created_by: string | null;
    created_at: string;
    updated_at: string;
  };
  oauth_codes: {
    id: string;
    code_hash: string;
    client_id: string;
    tenant_id: string;
    user_id: string;
    redirect_uri: string;
    scopes: string;
    code_challenge: string;
    /** The grant (token family) the code starts; tokens it produces carry the same id. */
    grant_id: string;
    created_at: string;
    expires_at: string;
    used_at: string | null;
  };
  oauth_tokens: {
    id: string;
    /** `access` | `refresh` */
    kind: string;
    token_hash: string;
    client_id: string;
    tenant_id: string;
    /** Null for client-credentials tokens (no person). */
    user_id: string | null;
    /** JSON array of team ids, or null for every team of the user. */
    team_ids: string | null;
    scopes: string;
    grant_id: string;
    created_at: string;
    expires_at: string;
    /** Refresh tokens: set when exchanged for a new one; a second use revokes the family. */
    rotated_at: string | null;
    revoked_at: string | null;
    last_used_at: string | null;
  };
  oauth_device_codes: {
    id: string;
    device_code_hash: string;
    /** Normalised (upper case, no dash). */
    user_code: string;
    client_id: string;
    scopes: string;
    /** `pending` | `approved` | `denied` | `consumed` */
    status: string;
    user_id: string | null;
    tenant_id: string | null;
    interval_seconds: number;
    last_polled_at: string | null;
    created_at: string;
    expires_at: string;
  };
}
