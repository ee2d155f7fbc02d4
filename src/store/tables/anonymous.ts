/** Keys of anonymous spaces (`sfc_`), stored as sha256. */
export interface AnonymousTables {
  space_keys: {
    id: string;
    space_id: string;
    token_hash: string;
    /** Client IP that created the space (for the per-IP cap of live unclaimed spaces). */
    created_ip: string | null;
    created_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
  };
}
