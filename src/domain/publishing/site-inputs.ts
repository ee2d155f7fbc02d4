import { type ParseError, parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';
import type { CompileDiagnostic } from '../../site/types.ts';
import type { SpaceRow } from '../spaces/service.ts';
import { validateSettingsFile } from '../spaces/settings-file.ts';
import { MAX_CONFIG_BYTES } from '../spaces/settings-overlay.ts';
import type { BlobIndex } from './blob-index.ts';
import type { VersionFileRow } from './model.ts';
import { MAX_TEMPLATE_BYTES, renderTemplate } from './templates.ts';
import type { VariableService } from './variables.ts';

/** `_redirects` and `_headers` are read whole; larger ones are refused as a diagnostic. */
const MAX_RULES_FILE_BYTES = 4 * 1024 * 1024;

/** What a version's own files say about how it is served, read at finalize. */
export interface SiteInputs {
  diagnostics: CompileDiagnostic[];
  /** The version's `spaces.jsonc`/`spaces.json`, validated (null: none, or invalid). */
  config: Record<string, unknown> | null;
  /** The space's variables, when templates asked for them (empty otherwise). */
  vars: Awaited<ReturnType<VariableService['forTemplates']>>;
  /** Blobs rendered from templates (their rows now serve them). */
  rendered: Array<{ path: string; sha256: string; size: number }>;
  redirectsText: string | null;
  headersText: string | null;
}

/**
 * Reads a version's settings file (spaces.jsonc wins over spaces.json), renders its templates
 * (their rows then serve the rendered bytes, stored and recorded here) and reads its `_redirects`
 * and `_headers`. Problems become diagnostics, never exceptions: finalize decides what blocks.
 */
export async function readSiteInputs(
  space: SpaceRow,
  rowAt: (path: string) => VersionFileRow | undefined,
  index: BlobIndex,
  variables: VariableService,
): Promise<SiteInputs> {
  const diagnostics: CompileDiagnostic[] = [];

  // The version's own settings file (spaces.jsonc wins over spaces.json).
  let config: Record<string, unknown> | null = null;
  const cfgRow = rowAt('spaces.jsonc') ?? rowAt('spaces.json');
  if (cfgRow) {
    if (cfgRow.size > MAX_CONFIG_BYTES) {
      diagnostics.push({
        code: 'config_file_too_large',
        severity: 'error',
        message: `${cfgRow.path} is larger than ${MAX_CONFIG_BYTES} bytes.`,
        path: cfgRow.path,
      });
    } else {
      const text = (await index.read(cfgRow.sha256, cfgRow.size)).toString('utf8');
      const errors: ParseError[] = [];
      const value = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
      if (errors.length) {
        const e = errors[0]!;
        const line = text.slice(0, e.offset).split('\n').length;
        diagnostics.push({
          code: 'config_invalid',
          severity: 'error',
          message: `${cfgRow.path} is not valid JSON: ${printParseErrorCode(e.error)}.`,
          path: `${cfgRow.path}:${line}`,
        });
      } else {
        const file = validateSettingsFile(value, '/spaces.json');
        config = file.config;
        for (const d of file.diagnostics) diagnostics.push({ ...d, path: cfgRow.path });
      }
    }
  }

  // Templates: from the version's config and the space's overlay.
  const overlay = space.config ? (JSON.parse(space.config) as Record<string, unknown>) : null;
  const templateList = new Set<string>();
  for (const src of [config?.templates, overlay?.templates]) {
    if (Array.isArray(src))
      for (const t of src) if (typeof t === 'string') templateList.add(t.replace(/^\/+/, ''));
  }
  const vars = templateList.size ? await variables.forTemplates(space.id) : new Map();
  const rendered: Array<{ path: string; sha256: string; size: number }> = [];
  for (const t of templateList) {
    const row = rowAt(t);
    if (!row) {
      diagnostics.push({
        code: 'template_not_in_version',
        severity: 'error',
        message: `The template "${t}" is not a file of this version.`,
        path: t,
      });
      continue;
    }
    if (row.size > MAX_TEMPLATE_BYTES) {
      diagnostics.push({
        code: 'template_file_too_large',
        severity: 'error',
        message: `The template "${t}" is larger than ${MAX_TEMPLATE_BYTES} bytes.`,
        path: t,
      });
      continue;
    }
    const text = (await index.read(row.sha256, row.size)).toString('utf8');
    const r = renderTemplate(t, text, vars);
    diagnostics.push(...r.diagnostics);
    if (r.diagnostics.length === 0) {
      const blob = await index.putBuffer(Buffer.from(r.text, 'utf8'));
      rendered.push({ path: t, ...blob });
    }
  }
  await index.record(rendered);
  for (const r of rendered) {
    const row = rowAt(r.path)!;
    row.sha256 = r.sha256;
    row.size = r.size;
  }

  const readText = async (name: string) => {
    const row = rowAt(name);
    if (!row) return null;
    if (row.size > MAX_RULES_FILE_BYTES) {
      diagnostics.push({
        code: 'config_file_too_large',
        severity: 'error',
        message: `${name} is larger than ${MAX_RULES_FILE_BYTES} bytes.`,
        path: name,
      });
      return null;
    }
    return (await index.read(row.sha256, row.size)).toString('utf8');
  };
  const redirectsText = await readText('_redirects');
  const headersText = await readText('_headers');

  return { diagnostics, config, vars, rendered, redirectsText, headersText };
}
