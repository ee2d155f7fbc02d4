/** People of a space and access requests (issue 25; migration 0033). */
export interface PeopleTables {
  space_people: {
    id: string;
    space_id: string;
    /** Lower case. */
    email: string;
    name: string | null;
    /** `invited` (link not used yet), `active` (signed in once), `removed`. */
    status: string;
    /** SHA-256 (hex) of the sign-in link's token; null once removed. */
    token_hash: string | null;
    token_expires_at: string | null;
    invited_by: string | null;
    last_sent_at: string | null;
    accepted_at: string | null;
    created_at: string;
    updated_at: string;
  };
  access_requests: {
    id: string;
    space_id: string;
    email: string;
    name: string | null;
    message: string | null;
    /** The path the visitor was refused on. */
    path: string;
    /** `unverified` (inbox not proven yet), `pending`, `approved`, `denied`. */
    status: string;
    verify_token_hash: string | null;
    verify_expires_at: string | null;
    /** The person an approval made. */
    person_id: string | null;
    resolved_by: string | null;
    created_at: string;
    verified_at: string | null;
    resolved_at: string | null;
  };
}
