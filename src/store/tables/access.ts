/** Site access: grants, their credentials, visitor-session epochs (see migration 0027). */
export interface AccessTables {
  access_grants: {
    id: string;
    space_id: string;
    /** `public|team|person|link|password|machine|external`. */
    audience_type: string;
    /** JSON of the audience (`{ type, … }`). */
    audience: string;
    /** JSON array of path globs (`!` excludes). */
    paths: string;
    role: string;
    /** `live|all-versions|version:<id>|branch:<name>`. */
    target: string;
    /** JSON of the constraints (without `maxUses`, which is `max_uses`). */
    constraints: string;
    max_uses: number | null;
    uses: number;
    /** The share link / password / machine credential this grant belongs to. */
    credential_id: string | null;
    note: string | null;
    created_by: string | null;
    created_at: string;
    updated_at: string;
    revoked_at: string | null;
  };
  access_credentials: {
    id: string;
    space_id: string;
    /** `link|password|machine`. */
    kind: string;
    grant_id: string;
    name: string | null;
    /** SHA-256 (hex) of a link or machine token; the Argon2id PHC string of a password. */
    secret_hash: string;
    /** A share link's token, sealed (its URL is shown again); null for the others. */
    token_sealed: string | null;
    /** A share link's landing path. */
    landing: string | null;
    /** Bumped by rotation: visitor sessions of an older generation end. */
    generation: number;
    created_by: string | null;
    created_at: string;
    updated_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
  };
  access_epochs: {
    space_id: string;
    epoch: number;
    updated_at: string;
  };
}
