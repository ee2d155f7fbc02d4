import mime from 'mime-types';
import type { LayeredVersion, VersionFileRow } from '../../store/repos/publishing/version-files.ts';
import type { VersionRow } from '../../store/repos/publishing/versions.ts';
import type { SpaceRow } from '../spaces/service.ts';

/** Publishing's vocabulary, shared by its collaborators (versions, uploads, finalize, channels). */

export type { VersionFileRow, VersionRow };

export interface DeclaredFile {
  path: string;
  sha256: string;
  size: number;
}

export interface UploadTarget {
  path: string;
  sha256: string;
  size: number;
  method: 'PUT';
  url: string;
  expiresAt: string;
}

export type ActivationOutcome = 'activated' | 'pending' | 'not_activated' | 'unchanged';

/** What both publish flows answer with (the spec's receipt), before presentation. */
export interface PublishResult {
  space: SpaceRow;
  version: VersionRow;
  noop: boolean;
  targets: UploadTarget[];
  outcome: ActivationOutcome;
}

export interface CreateVersionInput {
  files: Array<{ path: string; sha256: string; size: number }>;
  target?: 'production' | 'preview';
  message?: string | null;
  source?: Record<string, unknown> | null;
}

/** Which codes a manifest breach answers with: the versions flow and one-call publish differ. */
export type ManifestFlavour = 'versions' | 'publish';

/** Unfinalized versions expire after this long. */
export const UPLOAD_WINDOW_MS = 24 * 3600_000;
/** Upload URLs stay valid this long (never past the version's own expiry). */
export const UPLOAD_TOKEN_TTL_MS = 3600_000;
/**
 * A stored blob a new version relies on is touched (`blobs.used_at`) when its row is older than this;
 * the sweep's grace period must be at least twice as long (see `BlobIndex.known`).
 */
export const BLOB_TOUCH_INTERVAL_MS = 10 * 60_000;
/** Files larger than this are served uncompressed rather than held in memory to compress. */
export const MAX_COMPRESS_BYTES = 32 * 1024 * 1024;
/** A compression group closes at this many files or bytes, whichever comes first. */
export const COMPRESS_GROUP_FILES = 256;
export const COMPRESS_GROUP_BYTES = 2 * 1024 * 1024;

/** The channel a finalized version of a target moves. */
export function channelOfTarget(target: string): 'live' | 'preview' {
  return target === 'preview' ? 'preview' : 'live';
}

export function contentTypeOf(p: string): string {
  const t = mime.lookup(p);
  if (!t) return 'application/octet-stream';
  return mime.contentType(t) || t;
}

/** A version whose file list is asked for. */
export type ListedVersion = LayeredVersion & { status: string };

/**
 * Deleted and expired versions list no files (a deleted base keeps its rows only for the layers
 * built on it).
 */
export const gone = (v: ListedVersion) => v.status === 'deleted' || v.status === 'expired';

/** Path order as JavaScript compares strings (UTF-16 code units), the same on every database. */
export const byPathOrder = (a: { path: string }, b: { path: string }) =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : 0;

/** A principal's name in `created_by` and channel history. */
export const actorOf = (p: { userId: string | null; credentialId: string }) => p.userId ?? p.credentialId;
