/** Builds of spaces and their log lines (see migration 0017). */
export interface BuildTables {
  builds: {
    id: string;
    tenant_id: string;
    space_id: string;
    /** `waiting_for_source`, `uploading_source`, `queued`, `running`, `succeeded`, `failed`, `canceled`, `skipped`. */
    status: string;
    /** `upload` (a source archive the caller sends) or `git` (a repository URL at a ref). */
    source_type: string;
    git_url: string | null;
    git_ref: string | null;
    /** The branch the output is published for (null: production). */
    branch: string | null;
    commit_sha: string | null;
    /** The channel the output went to (`live`, `br-<slug>`), once known. */
    channel: string | null;
    /** JSON: each resolved setting with its value and where it came from. */
    settings: string | null;
    error_code: string | null;
    error_message: string | null;
    version_id: string | null;
    retry_of: string | null;
    /** 1 once a cancel was asked for while running: the runner stops the process group. */
    cancel_requested: number;
    log_bytes: number;
    /** JSON: the principal that started the build (what its publish acts as). */
    created_by: string;
    created_at: string;
    updated_at: string;
    started_at: string | null;
    finished_at: string | null;
  };
  build_logs: {
    id: string;
    build_id: string;
    /** `stdout`, `stderr` or `system`. */
    stream: string;
    line: string;
    created_at: string;
  };
  /** One per space: where its builds come from (migration 0019). */
  repository_connections: {
    space_id: string;
    tenant_id: string;
    /** `generic` (a clone URL and an optional token); git-host apps later. */
    provider: string;
    clone_url: string;
    /** `owner/name` at a git host (null for `generic`). */
    repository: string | null;
    installation_id: string | null;
    /** The HTTPS token, sealed with the server's secret key (`v1:…`); never returned. */
    credential_sealed: string | null;
    default_branch: string | null;
    production_branch: string | null;
    app_root: string | null;
    auto_deploy_production: number;
    auto_deploy_previews: number;
    /** JSON of the build settings saved on the connection ("apply best", PATCH); migration 0024. */
    build_settings: string | null;
    created_at: string;
    updated_at: string;
  };
  /** Each state a build entered, in id order (migration 0019). */
  build_status_changes: {
    id: string;
    build_id: string;
    status: string;
    created_at: string;
  };
}
