import { ApiError } from '../../errors/problem.ts';
import { SettingsFile } from '../../schemas/space-config.ts';
import { escapePointer } from '../../schemas/validation.ts';
import type { CompileDiagnostic } from '../../site/types.ts';
import { configAccessProblem } from '../access/config.ts';
import { bad, checkConfigRules, validateShape } from './settings-overlay.ts';

/**
 * Keys the settings file accepts whose behaviour this server does not have yet. The file stays valid
 * (it may be shared with servers that do), and each such key is named in an info diagnostic.
 */
const NO_EFFECT_YET: Record<string, string> = {
  name: '`name` has no effect yet: the space keeps its slug (`spaces spaces rename` changes it).',
  runtime: '`runtime.kind: "capsule"` has no effect yet: no code runs; the files are served as they are.',
  build:
    '`build` has no effect on a publish of built files: builds read it (`spaces build`, `git push` to the space, `POST /v1/spaces/{spaceId}/builds`).',
};

/** A failure's diagnostic code: the specific one behaviour §17 names for the key, or `config_invalid`. */
function codeOf(pointer: string, keyword: unknown): string {
  const p = pointer.split('/').slice(2); // below the file's prefix
  const tooLong = keyword === 'maxLength';
  switch (p[0]) {
    case 'name':
      return tooLong ? 'config_name_too_long' : 'config_invalid';
    case 'meta':
      return tooLong ? 'config_meta_too_long' : 'config_invalid';
    case 'runtime':
      return p[1] === 'kind' ? 'config_runtime_invalid_kind' : 'config_invalid';
    case 'inject':
      return tooLong ? 'inject_snippet_too_large' : 'inject_invalid';
    case 'crons':
      if (p.length === 1) return keyword === 'maxItems' ? 'config_cron_too_many' : 'config_invalid';
      if (p[2] === 'path') return 'config_cron_invalid_path';
      if (p[2] === 'schedule') return 'config_cron_invalid_schedule';
      if (keyword === 'unique') return 'config_cron_duplicate_path';
      return 'config_invalid';
    default:
      return 'config_invalid';
  }
}

/** Minute, hour, day of month, month, day of week (0 and 7 are Sunday). */
const CRON_RANGES: Array<[number, number]> = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];

/** The numbers of a five-field crontab schedule stay inside their field's range (the schema checks the form). */
function checkCrontab(schedule: string, pointer: string): void {
  const fields = schedule.split(' ');
  if (fields.length !== 5) return; // a named schedule (`daily`, `2h`, …)
  fields.forEach((field, i) => {
    const [lo, hi] = CRON_RANGES[i]!;
    for (const part of field.split(',')) {
      const [range, step] = part.split('/');
      const numbers = range === '*' ? [] : range!.split('-').map(Number);
      if (numbers.some((n) => n < lo || n > hi) || (numbers.length === 2 && numbers[0]! > numbers[1]!)) {
        bad(pointer, `${pointer}: "${field}" is outside ${lo}–${hi} in field ${i + 1}.`, 'cron_range');
      }
      if (step !== undefined && Number(step) < 1)
        bad(pointer, `${pointer}: a step is at least 1.`, 'cron_step');
    }
  });
}

/** A cron's key: its path lowercased, runs of other characters made one `-` (`/api/digest` → `api-digest`). */
export function cronKey(path: string): string {
  return path
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function checkFileRules(file: SettingsFile, prefix: string): void {
  const at = (...parts: Array<string | number>) =>
    prefix + parts.map((x) => `/${escapePointer(String(x))}`).join('');
  const keys = new Map<string, number>();
  file.crons?.forEach((cron, i) => {
    checkCrontab(cron.schedule, at('crons', i, 'schedule'));
    const key = cronKey(cron.path);
    const first = keys.get(key);
    if (first !== undefined) {
      throw new ApiError(
        'validation_error',
        `${at('crons', i)} has the same key "${key}" as ${at('crons', first)}; each cron path needs its own.`,
        { pointer: at('crons', i), details: { keyword: 'unique' } },
      );
    }
    keys.set(key, i);
  });
  const access = file.access;
  if (typeof access === 'object' && access.public.every((glob) => glob.startsWith('!'))) {
    bad(
      at('access', 'public'),
      `${at('access', 'public')} needs a glob that is not a negation.`,
      'negations_only',
    );
  }
  // The rest of the glob grammar the access engine compiles (src/domain/access/paths.ts).
  const problem = configAccessProblem(access);
  if (problem) {
    const index = Number(problem.pointer.split('/').pop());
    bad(at('access', 'public', index), `${at('access', 'public', index)}: ${problem.reason}.`, 'pattern');
  }
}

/**
 * Validates a version's settings file: its schema (every overlay key and the file's own), the overlay's
 * rules, then the file's own (cron ranges and keys, access globs). Answers the config to store (without
 * `$schema`, an editor's hint) and diagnostics: one error when the file is refused — with the code
 * behaviour §17 names where there is one — or an info for each key that has no effect yet.
 */
export function validateSettingsFile(
  value: unknown,
  prefix = '/spaces.json',
): { config: Record<string, unknown> | null; diagnostics: CompileDiagnostic[] } {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'functions' in value) {
    return {
      config: null,
      diagnostics: [
        {
          code: 'config_functions_key_removed',
          severity: 'error',
          message: `${prefix}/functions: the top-level \`functions\` key was removed; declare code with \`runtime\` ({"kind": "functions", "entry": "…"}).`,
          details: { pointer: `${prefix}/functions` },
        },
      ],
    };
  }
  let file: SettingsFile;
  try {
    file = checkConfigRules(validateShape<SettingsFile>(SettingsFile, value, prefix), prefix);
    checkFileRules(file, prefix);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const pointer = err.extras.pointer ?? prefix;
    const details = (err.extras.details ?? {}) as Record<string, unknown>;
    return {
      config: null,
      diagnostics: [
        {
          code: codeOf(pointer, details.keyword),
          severity: 'error',
          message: err.detail,
          details: { pointer, ...details },
        },
      ],
    };
  }
  const { $schema: _hint, ...config } = file;
  const diagnostics: CompileDiagnostic[] = Object.keys(NO_EFFECT_YET)
    .filter((key) => key in config && !(key === 'runtime' && config.runtime?.kind === 'functions'))
    .map((key) => ({
      code: 'config_key_no_effect',
      severity: 'info',
      message: NO_EFFECT_YET[key]!,
      details: { pointer: `${prefix}/${key}` },
    }));
  return { config, diagnostics };
}
