/** The durable job queue (src/jobs/queue.ts). Times are ISO-8601 UTC strings, compared as text. */
export type JobStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'superseded';

export interface JobsTables {
  jobs: {
    id: string;
    /** Which handler runs it, e.g. `space.expire`. */
    kind: string;
    /** JSON document handed to the handler. */
    payload: string;
    status: JobStatus;
    /** Dedupe key: at most one `pending` job per (kind, key). Null: no dedupe. */
    dedupe_key: string | null;
    /** Not claimed before this time. */
    run_at: string;
    /** Claims so far (a re-claim after a lost lease counts too). */
    attempts: number;
    max_attempts: number;
    /** Worker id holding the lease while `running`. */
    locked_by: string | null;
    /** The lease: another worker may re-claim a `running` job after this time. */
    locked_until: string | null;
    /** Recurring jobs (schedules): the next run is enqueued this long after each run ends. */
    every_ms: number | null;
    last_error: string | null;
    created_at: string;
    updated_at: string;
    started_at: string | null;
    finished_at: string | null;
  };
}
