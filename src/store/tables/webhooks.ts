/** Signed webhooks of teams and their deliveries (see migration 0022). */
export interface WebhookTables {
  webhooks: {
    id: string;
    tenant_id: string;
    team_id: string;
    url: string;
    description: string | null;
    /** JSON array of filters: `*`, an exact code (`version.ready`) or `resource.*`. */
    events: string;
    /** `active`, `failing` (8+ consecutive failures, still delivered) or `disabled` (32+, or by hand). */
    status: string;
    consecutive_failures: number;
    /** The signing secret (`whsec_…`), sealed with the server's secret key. */
    secret_sealed: string;
    /** During a rotation's overlap: the previous secret, sealed; it signs too until the expiry. */
    previous_secret_sealed: string | null;
    previous_secret_expires_at: string | null;
    /** `failures` (32 consecutive) when deliveries disabled it; null otherwise. */
    disabled_reason: string | null;
    created_by: string | null;
    created_at: string;
    updated_at: string;
  };
  webhook_deliveries: {
    id: string;
    webhook_id: string;
    team_id: string;
    event_id: string;
    event_code: string;
    /** JSON: the event as it is sent (the body's `event`). */
    event: string;
    /** `pending`, `succeeded`, `failed` (last attempt failed, another is due) or `exhausted`. */
    state: string;
    attempts: number;
    next_attempt_at: string | null;
    last_attempt_at: string | null;
    last_status_code: number | null;
    last_error: string | null;
    /** The first bytes of the last response body (at most 1 KiB, text). */
    response_excerpt: string | null;
    duration_ms: number | null;
    /** The delivery this one repeats (`redeliver`). */
    redelivery_of: string | null;
    created_at: string;
    updated_at: string;
  };
}
