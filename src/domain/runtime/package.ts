import { createHash } from 'node:crypto';
import type { CompileDiagnostic } from '../../site/types.ts';
import type { WorkerClaims } from '../../site/worker-routes.ts';
import type { BlobIndex } from '../publishing/blob-index.ts';
import type { VersionFileRow } from '../publishing/model.ts';
import { bundleWorker } from './bundle.ts';
import { detectEntry, type EntryKind } from './detect.ts';

/** The folder of database migrations in a runtime project (kept private like the worker's sources). */
export const MIGRATIONS_DIR = 'migrations/';
/** The compatibility date of a version that declares none (workerd's behaviour flags as of then). */
export const DEFAULT_COMPATIBILITY_DATE = '2025-09-01';
/** A source file larger than this is not bundled (the bundle's own cap is 8 MiB). */
const MAX_SOURCE_BYTES = 16 * 1024 * 1024;

/** The `runtime` key of a version's settings file, as validated. */
export interface RuntimeConfig {
  kind: 'functions' | 'capsule';
  entry?: string;
  database?: boolean;
  compatibilityDate?: string;
  capabilities?: string[];
}

/** A functions version, packaged: its bundle is stored (not yet recorded) in the blob store. */
export interface PackagedRuntime {
  kind: 'functions';
  entry: string;
  entryKind: EntryKind;
  bundle: { sha256: string; size: number };
  compatibilityDate: string;
  capabilities: string[];
  routes: string[];
  /** What the engine needs: the claimed routes and the sources that are never served. */
  claims: WorkerClaims;
}

/**
 * Finalize's runtime step for `runtime.kind: "functions"`: detect the entry, bundle it from the
 * version's own files into one ES module, store the bundle as a blob. Problems are diagnostics (an
 * error blocks the version); null when there is nothing to run.
 */
export async function packageFunctions(
  runtime: RuntimeConfig,
  rows: readonly VersionFileRow[],
  rowAt: (path: string) => VersionFileRow | undefined,
  index: BlobIndex,
  diagnostics: CompileDiagnostic[],
): Promise<PackagedRuntime | null> {
  const paths = rows.map((r) => r.path);
  const entry = detectEntry(runtime.entry, paths, diagnostics);
  if (!entry) return null;
  const bundle = await bundleWorker(
    entry,
    {
      has: (p) => rowAt(p) !== undefined,
      read: async (p) => {
        const row = rowAt(p)!;
        if (row.size > MAX_SOURCE_BYTES) throw new Error(`${p} is larger than ${MAX_SOURCE_BYTES} bytes`);
        // The source bytes (a template's rendering is for visitors, not for the bundler).
        return index.read(row.source_sha256, row.source_size);
      },
    },
    diagnostics,
  );
  if (!bundle) return null;
  const stored = await index.putBuffer(bundle.code);
  const sha = createHash('sha256').update(bundle.code).digest('hex');
  if (sha !== stored.sha256) throw new Error('bundle digest mismatch');
  const priv = new Set(entry.private);
  // `spaces db migrate` reads ./migrations beside the handler: the database's SQL is never served.
  priv.add(MIGRATIONS_DIR);
  for (const p of bundle.inputs)
    if (!entry.private.some((x) => x.endsWith('/') && p.startsWith(x))) priv.add(p);
  return {
    kind: 'functions',
    entry: entry.entry,
    entryKind: entry.kind,
    bundle: stored,
    compatibilityDate: runtime.compatibilityDate ?? DEFAULT_COMPATIBILITY_DATE,
    capabilities: [...new Set(runtime.capabilities ?? [])].sort(),
    routes: entry.routes,
    claims: { routes: entry.routes, private: [...priv].sort() },
  };
}
