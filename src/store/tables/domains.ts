/** A team's custom domains: inventory, binding to a space, DNS verification state. */
export interface DomainTables {
  domains: {
    id: string;
    tenant_id: string;
    team_id: string;
    /** The hostname in A-labels (`www.xn--bcher-kva.example`), lower case, no trailing dot. */
    hostname: string;
    /** The space it is bound to, or null (in the inventory only). */
    space_id: string | null;
    /** `standard` serves the space; `redirect` answers with `redirect_status` to `redirect_target`. */
    role: string;
    redirect_target: string | null;
    redirect_status: number | null;
    /** `pending`, `verified`, `verification_failed` or `control_lost`. */
    status: string;
    /** The value of the ownership TXT record this team must publish. */
    verification_token: string;
    /** What the last check saw, as JSON (records and their states), or null before the first. */
    last_check: string | null;
    checked_at: string | null;
    /** When the check job looks again; null when nothing is due. */
    next_check_at: string | null;
    /** Failed checks in a row (the back-off grows with it). */
    check_failures: number;
    verified_at: string | null;
    created_by: string | null;
    created_at: string;
    updated_at: string;
  };
  /** Certificates for custom hostnames, issued by an ACME CA; private keys sealed with the secret key. */
  certificates: {
    hostname: string;
    /** `pending` (not issued yet), `issued`, or `failed` (retried with back-off). */
    status: string;
    cert_pem: string | null;
    /** The private key, sealed with the server's secret key (AES-256-GCM, the hostname as AAD). */
    key_sealed: string | null;
    not_before: string | null;
    not_after: string | null;
    /** Two thirds into the certificate's lifetime: from then on the renewal job replaces it. */
    renew_after: string | null;
    last_error: string | null;
    attempts: number;
    next_attempt_at: string | null;
    created_at: string;
    updated_at: string;
  };
  /** HTTP-01 answers while an order is open, readable by every instance the CA may reach. */
  acme_challenges: {
    token: string;
    key_authorization: string;
    hostname: string;
    expires_at: string;
  };
  /** A team's custom-domain settings; no row means the defaults. */
  team_domain_settings: {
    team_id: string;
    /** 1: the team may add wildcard domains (`*.example.com`). */
    wildcard_enabled: number;
    updated_at: string;
  };
}
