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
    /** After a claim: null (no continuation), `available` (exchangeable once) or `used`. */
    continuation: 'available' | 'used' | null;
    /** Who allowed the continuation when claiming; the exchanged key is theirs. */
    continuation_user_id: string | null;
    /** The API key the voucher was exchanged for. */
    continuation_key_id: string | null;
  };
}
