/** The event log (outbox) and its per-tenant counters (see migration 0021). */
export interface EventTables {
  events: {
    /** `evt_…`, time-sortable. */
    id: string;
    /** The team the event belongs to (for an anonymous space: the space id, see docs/guides/activity.md). */
    tenant_id: string;
    /** Per tenant, from 1, strictly increasing in commit order. */
    sequence: number;
    space_id: string | null;
    actor_type: string;
    actor_id: string | null;
    /** A catalogue code, e.g. `version.ready`. */
    code: string;
    message: string;
    /** JSON object. */
    details: string;
    created_at: string;
  };
  event_sequences: { tenant_id: string; last_sequence: number };
}
