/**
 * Contracts between publishing (which writes versions) and the site edge (which serves them).
 * A version's files are a manifest of paths to content-addressed blobs; the precomputed compressed
 * variants are blobs too.
 */

/** One file of a version. `path` has no leading slash and is NFC-normalised (`css/app.css`). */
export interface ManifestEntry {
  path: string;
  sha256: string;
  size: number;
  contentType: string;
  /** Precomputed variants, stored as blobs of their own (never compressed per request). */
  encodings?: { br?: { sha256: string; size: number }; gzip?: { sha256: string; size: number } };
}

/** A finalize-time diagnostic (spec: Diagnostic entry). `path` like `_redirects:12`. */
export interface CompileDiagnostic {
  code: string;
  severity: 'info' | 'warning' | 'error';
  message: string;
  path?: string | null;
  details?: Record<string, unknown> | null;
  fix?: string | null;
}
