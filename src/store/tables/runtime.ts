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
  /**
   * A single-use console URL of a space database (migration 0043): the URL's token is exchanged once
   * (before `open_until`) for a session the console page holds (until `session_until`).
   */
  space_db_consoles: {
    id: string;
    space_id: string;
    /** The account that asked for the URL. */
    created_by: string;
    /** sha256 hex of the URL's token. */
    token_hash: string;
    /** sha256 hex of the session secret, once the token was exchanged (null: not yet). */
    session_hash: string | null;
    created_at: string;
    open_until: string;
    session_until: string | null;
  };
  /**
   * Which instance owns a space's database (migration 0043): the owner serves every call on it, the
   * others forward to `address`; its lease is renewed while it lives. The owner also keeps the latest
   * snapshot of the file in the blob store, from which a new owner restores.
   */
  space_db_owners: {
    space_id: string;
    instance_id: string;
    /** The owner's internal base URL (`http://host:port`), where the others forward calls. */
    address: string;
    lease_until: string;
    snapshot_sha256: string | null;
    snapshot_size: number | null;
    /** Counts snapshots: a copy whose generation is lower than this one is stale. */
    snapshot_generation: number;
    snapshot_at: string | null;
  };
}
