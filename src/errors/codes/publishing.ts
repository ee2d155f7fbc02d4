import type { CodeTable } from '../catalog.ts';

/** Publishing: versions, uploads, channels, one-call publish, archives, idempotency, variables. */
export const publishingCodes = {
  unsupported_publish_media_type: {
    status: 415,
    summary: 'POST /v1/publish reads JSON with inline files, multipart/form-data, a zip or a .tar.gz.',
  },
  invalid_publish_payload: { status: 400, summary: 'The publish body or its `payload` field is not valid.' },
  invalid_publish_archive: {
    status: 400,
    summary: 'The archive is not a readable zip or tar.gz, or holds an entry that is not a plain file.',
  },
  invalid_publish_path: { status: 400, summary: 'A file path in the publish is not allowed.' },
  publish_path_collision: { status: 400, summary: 'Two files of the publish land on the same path.' },
  path_too_long: { status: 400, summary: 'A file path is longer than 1,024 bytes.' },
  path_case_collision: {
    status: 400,
    summary: 'Two paths differ only in letter case; they would collide on case-insensitive systems.',
  },
  invalid_version_path: {
    status: 400,
    summary: 'A manifest path is not relative, normalised, free of `..`, control characters and backslashes.',
  },
  publish_archive_too_large: { status: 413, summary: 'The archive is larger than the server accepts.' },
  publish_archive_expanded_size_exceeded: {
    status: 413,
    summary: 'The archive expands to more bytes than the server accepts.',
  },
  publish_archive_file_count_exceeded: { status: 413, summary: 'The archive holds too many files.' },
  publish_archive_compression_ratio_exceeded: {
    status: 413,
    summary: 'An archive entry expands far more than real content does (a decompression bomb).',
  },
  publish_inline_limit_exceeded: {
    status: 413,
    summary: 'Inline JSON files are for small sites; use multipart, an archive or the versions flow.',
  },
  invalid_idempotency_key: { status: 400, summary: 'An Idempotency-Key is 1..255 visible characters.' },
  idempotency_key_reused: {
    status: 409,
    summary: 'The Idempotency-Key was used before with a different request body.',
  },
  idempotency_conflict_in_progress: {
    status: 409,
    summary: 'The first request with this Idempotency-Key is still running; retry shortly to get its result.',
  },
  manifest_body_too_large: { status: 413, summary: 'The manifest body is larger than the server accepts.' },
  manifest_duplicate_path: { status: 400, summary: 'The manifest lists the same path twice.' },
  manifest_too_many_files: { status: 413, summary: 'The manifest lists more files than a version may hold.' },
  upload_hash_mismatch: { status: 400, summary: 'The uploaded bytes do not hash to the declared sha256.' },
  upload_size_mismatch: { status: 400, summary: 'The uploaded bytes are not the declared size.' },
  upload_path_not_declared: { status: 400, summary: 'The upload names a path the version’s manifest lacks.' },
  version_files_missing: {
    status: 409,
    summary: 'Some declared files were never uploaded; `details.paths` lists them.',
  },
  version_not_found: { status: 404, summary: 'No such version in this space.' },
  version_not_ready: {
    status: 409,
    summary: 'The version is not ready (still uploading, failed or deleted).',
  },
  version_not_finalizable: {
    status: 409,
    summary: 'Only a version that is still uploading can be finalized.',
  },
  version_expired: { status: 410, summary: 'The version was not finalized within 24 hours and expired.' },
  version_no_publishable_files: {
    status: 400,
    summary: 'The version has no file a visitor could be served.',
  },
  version_file_count_exceeded: { status: 413, summary: 'The version holds more files than allowed.' },
  version_total_bytes_exceeded: {
    status: 413,
    summary: 'The version’s files add up to more bytes than allowed.',
  },
  version_file_too_large: { status: 413, summary: 'A file is larger than the per-file limit.' },
  version_in_use: {
    status: 409,
    summary: 'A channel points at the version; promote another one first. `details.channels` lists them.',
  },
  version_already_live: { status: 409, summary: 'The channel already points at this version.' },
  version_failed: { status: 422, summary: 'The version failed to finalize; see its diagnostics.' },
  channel_pointer_moved: {
    status: 409,
    summary: 'The channel moved since you read it (`expectedVersionId` is stale); read it again.',
  },
  channel_name_reserved: {
    status: 400,
    summary: 'Channel names `v<digits>` and `ver-…` are reserved for version addresses.',
  },
  channel_not_retirable: {
    status: 409,
    summary: 'The live channel can’t be retired or deleted; promote another version to it instead.',
  },
  channel_unsupported: {
    status: 400,
    summary: 'Channel names are 1..32 lowercase letters, digits and dashes.',
  },
  blob_gate_token_invalid: {
    status: 403,
    summary: 'The upload or download token is forged, altered or expired.',
  },
  secret_variable_in_template: {
    status: 422,
    summary: 'A template names a secret variable; only non-secret variables are rendered into files.',
  },
  template_variable_unresolved: {
    status: 422,
    summary: 'A template names a variable the space does not have.',
  },
  template_not_in_version: { status: 422, summary: 'A file listed in `templates` is not in the version.' },
  template_file_too_large: { status: 413, summary: 'A template file is larger than 16 KB.' },
  variable_not_found: { status: 404, summary: 'The space has no variable of that name.' },
  config_invalid: { status: 422, summary: 'The version’s spaces.json(c) is not valid; see diagnostics.' },
  config_file_too_large: { status: 413, summary: 'spaces.json(c) is larger than 256 KB.' },
} satisfies CodeTable;
