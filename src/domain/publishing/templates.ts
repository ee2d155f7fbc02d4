import type { CompileDiagnostic } from '../../site/types.ts';

const VAR = /\{\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export const MAX_TEMPLATE_BYTES = 16 * 1024;

/**
 * Renders `{{ vars.NAME }}` with the space's non-secret variables. A secret or unknown name is an
 * error diagnostic with `path` `file:line`; nothing is rendered then.
 */
export function renderTemplate(
  file: string,
  text: string,
  vars: ReadonlyMap<string, { value: string | null; secret: boolean }>,
): { text: string; diagnostics: CompileDiagnostic[] } {
  const diagnostics: CompileDiagnostic[] = [];
  const lines = text.split('\n');
  const out = lines.map((line, i) =>
    line.replace(VAR, (whole, name: string) => {
      const v = vars.get(name);
      if (!v) {
        diagnostics.push({
          code: 'template_variable_unresolved',
          severity: 'error',
          message: `${file} uses {{ vars.${name} }}, but the space has no variable ${name}.`,
          path: `${file}:${i + 1}`,
          details: { name },
          fix: `Set it: PUT /v1/spaces/{spaceId}/variables/${name}`,
        });
        return whole;
      }
      if (v.secret || v.value === null) {
        diagnostics.push({
          code: 'secret_variable_in_template',
          severity: 'error',
          message: `${file} uses the secret variable ${name}; secrets are never written into files.`,
          path: `${file}:${i + 1}`,
          details: { name },
        });
        return whole;
      }
      return v.value;
    }),
  );
  return { text: out.join('\n'), diagnostics };
}
