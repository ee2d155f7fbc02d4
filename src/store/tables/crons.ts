/** The crons area's tables (issue 26; migration 0040). */
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
}
