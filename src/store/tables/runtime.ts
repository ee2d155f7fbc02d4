/** The runtime area's tables (issue 26; migration 0032). */
export interface RuntimeTables {
  /** What a ready version with `runtime.kind: "functions"` runs: one row per such version. */
  version_runtimes: {
    version_id: string;
    space_id: string;
    /** `functions`. */
    kind: string;
    /** The detected or declared entry (`_worker.js`, `handler.ts`, `functions/`). */
    entry: string;
    /** How the entry was found: `adapter`, `handler`, `functions`, `declared`. */
    entry_kind: string;
    /** The bundled ES module's digest in the blob store, and its size. */
    bundle_sha256: string;
    bundle_size: number;
    compatibility_date: string;
    /** JSON array of capabilities (`fetch`). */
    capabilities: string;
    /** JSON array of route patterns the worker claims (`/api/hello`, `/users/:id`, `/files/*`). */
    routes: string;
    created_at: string;
  };
}
