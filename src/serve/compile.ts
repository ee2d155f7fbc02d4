// Temporary stand-in; replaced by the serve branch at merge.
import type { CompileDiagnostic, ManifestEntry } from './types.ts';

export function compileSite(_input: {
  files: ManifestEntry[];
  redirectsText?: string | null;
  headersText?: string | null;
  config?: Record<string, unknown> | null;
  vars?: Record<string, string>;
}): { rules: unknown; diagnostics: CompileDiagnostic[]; ok: boolean } {
  return { rules: {}, diagnostics: [], ok: true };
}
