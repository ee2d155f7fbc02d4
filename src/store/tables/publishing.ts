/** Versions and their manifests, stored blobs, space variables and idempotency records. */
export interface PublishingTables {
  versions: {
    id: string;
    space_id: string;
    /** 1, 2, 3… per space: `v12` addresses the twelfth version. */
    number: number;
    /** uploading | ready | failed | canceled | expired | deleted */
    status: string;
    /** production | preview */
    target: string;
    message: string | null;
    /** JSON source metadata or null. */
    source: string | null;
    file_count: number;
    total_bytes: number;
    /** sha256 over the declared manifest (sorted path, sha256, size): equal digests = identical content. */
    manifest_digest: string;
    /** JSON CompiledRules from compileSite, set at finalize. */
    rules: string | null;
    /** JSON array of CompileDiagnostic, set at finalize. */
    diagnostics: string | null;
    /** JSON SpaceConfig read from the version's spaces.json(c), or null. */
    config: string | null;
    created_by: string | null;
    created_at: string;
    finalized_at: string | null;
    expires_at: string | null;
    deleted_at: string | null;
    /**
     * The flat version this one's file list is layered on (its `version_files` rows then hold only
     * added, changed and removed paths), or null when the rows list every file.
     */
    base_id: string | null;
  };
  version_files: {
    version_id: string;
    path: string;
    /** What the client declared (and uploaded). */
    source_sha256: string;
    source_size: number;
    /** What is served: the declared blob, or the rendered blob for templates. */
    sha256: string;
    size: number;
    content_type: string | null;
    /** JSON ManifestEntry['encodings'] or null. */
    encodings: string | null;
    /** 1 on a layered version's row for a base path it removes (every other column is meaningless). */
    removed: number;
  };
  blobs: {
    sha256: string;
    size: number;
    /** JSON {br?, gzip?} once variants were computed for this content, '{}' when not worth it. */
    variants: string | null;
    created_at: string;
    /**
     * When the blob was last stored or relied on by a new version (ISO). The sweep deletes a row only
     * while this is older than its cutoff.
     */
    used_at: string;
  };
  /** Bytes of small blobs kept in the database instead of the blob store (`src/blobs/inline.ts`). */
  blob_data: {
    sha256: string;
    data: Buffer;
    created_at: string;
  };
  variables: {
    space_id: string;
    name: string;
    secret: number;
    /** Plain value, or for secrets `v1:<iv>:<tag>:<ciphertext>` (AES-256-GCM, base64). */
    value: string;
    created_at: string;
    updated_at: string;
  };
  idempotency_keys: {
    /** `<tenant>:<credential>:<key>`, hashed. */
    scope_key: string;
    body_hash: string;
    /** running | done */
    state: string;
    status_code: number | null;
    response: string | null;
    created_at: string;
  };
}
