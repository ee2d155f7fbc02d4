/** The crons and runtime logs tables (issue 26; migrations 0040, 0041). */
export interface CronTables {
  /**
   * The crons of each space's live version (behaviour §4.8), replaced whenever `live` moves: one row
   * per (space, key). What a cron last did stays with its key across publishes and rollbacks.
   */
  space_crons: {
    space_id: string;
    /** The path lowercased, other characters as `-` (`/api/digest` → `api-digest`). */
    key: string;
    path: string;
    /** Stored verbatim from the settings file. */
    schedule: string;
    /** The live version that declared it (null once it no longer does: the row is kept for its history). */
    version_id: string | null;
    /** When the next scheduled run is due (null: not scheduled, the live version no longer has it). */
    next_run_at: string | null;
    last_run_at: string | null;
    /** HTTP status of the last run (null: it got no answer). */
    last_run_status: number | null;
    /** `schedule` or `manual`. */
    last_run_trigger: string | null;
    last_run_ms: number | null;
    last_failure_at: string | null;
    last_failure_status: number | null;
    last_failure_message: string | null;
    last_failure_trigger: string | null;
    created_at: string;
    updated_at: string;
  };
  /** Console output and uncaught exceptions of functions, one row per line (behaviour §9, runtime logs). */
  runtime_logs: {
    /** `rlg_…`: sorts by time. */
    id: string;
    space_id: string;
    version_id: string;
    /** The edge's id of the request (`x-request-id`), null for events that were no request. */
    request_id: string | null;
    at: string;
    /** `log`, `info`, `debug`, `warn`, `error`. */
    level: string;
    /** What answered: the route module's pattern (`/api/:id`) or the single entry (`handler.ts`). */
    handler: string | null;
    method: string | null;
    /** Path and query of the request (up to 1,024 characters). */
    path: string | null;
    status: number | null;
    /** workerd's outcome of the request: `ok`, `exception`, `canceled`, … */
    outcome: string | null;
    message: string;
  };
}
