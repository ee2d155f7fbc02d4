/**
 * `_redirects`: one rule per line, compiled at finalize (never parsed per request).
 *
 *   source [name=:cap …] destination [status[!]] [cache=shared] [Cond=a,b …]
 *
 * The rule builder here is shared with config `redirects` / `rewrites` so both obey the same checks.
 */

import { asciiUrl } from './field.ts';
import {
  captureNames,
  compileDestination,
  compilePattern,
  destinationPath,
  fillDestination,
  isStatic,
  type PathPattern,
  PatternError,
  staticPath,
} from './match.ts';
import { hasDotSegment } from './path.ts';
import type { QueryMatcher, RouteConditions, RouteKind, RouteRule } from './rule-set.ts';
import type { CompileDiagnostic } from './types.ts';

export const MAX_REDIRECT_LINE = 1000;
export const ROUTE_STATUSES = [200, 301, 302, 303, 307, 308, 404] as const;
export const REDIRECT_STATUSES = [301, 302, 303, 307, 308] as const;

export type Diag = (code: string, message: string, extra?: Partial<CompileDiagnostic>) => void;

export interface TemplateVars {
  /** Non-secret variables; expanded into destinations. */
  vars?: Record<string, string>;
  /** Names of secret variables: referencing one is an error, never an expansion. */
  secretNames?: readonly string[];
}

const VAR_REF = /\{\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Expand `{{ vars.NAME }}`; unknown or secret names are reported and the rule is dropped. */
export function expandVars(text: string, tv: TemplateVars, diag: Diag): string | null {
  let ok = true;
  const out = text.replace(VAR_REF, (_m, name: string) => {
    if (tv.secretNames?.includes(name)) {
      diag('secret_variable_in_template', `\`${name}\` is a secret variable; secrets never go into rules.`, {
        details: { name },
        fix: 'Make the variable non-secret, or write the value into the rule.',
      });
      ok = false;
      return '';
    }
    const v = tv.vars && Object.hasOwn(tv.vars, name) ? tv.vars[name] : undefined;
    if (v === undefined) {
      diag('template_variable_unresolved', `The variable \`${name}\` is not defined for this space.`, {
        details: { name },
        fix: `Define ${name} with \`spaces vars set ${name} …\`, or remove the reference.`,
      });
      ok = false;
      return '';
    }
    return v;
  });
  return ok ? out : null;
}

export interface RuleSpec {
  ref: string;
  source: string;
  destination: string | undefined;
  status: number;
  force: boolean;
  query: QueryMatcher[] | null;
  conditions: RouteConditions | null;
  cacheShared: boolean;
  /** Config rewrites with `notFound: true` force kind notFound. */
  notFound?: boolean;
  /** Config `redirects` only allow 3xx; config `rewrites` only 200/404. */
  origin: '_redirects' | 'redirects' | 'rewrites';
}

const ABSOLUTE_URL = /^https?:\/\/[^/\\]/i;

function trimSlash(p: string): string {
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

/** Build one rule; reports problems and returns null when the rule cannot be served. */
export function buildRouteRule(spec: RuleSpec, tv: TemplateVars, diag: Diag): RouteRule | null {
  let source: PathPattern;
  try {
    source = compilePattern(spec.source);
  } catch (e) {
    if (!(e instanceof PatternError)) throw e;
    diag('redirect_source_invalid', `The source \`${spec.source}\` is not valid: ${e.message}.`, {
      fix: 'Use an absolute path like `/old/*` or an https:// URL on one of the space’s hostnames.',
    });
    return null;
  }
  if (spec.destination === undefined || spec.destination.trim() === '') {
    diag('redirect_destination_missing', `The rule for \`${spec.source}\` has no destination.`, {
      fix: 'Write the destination path or URL after the source.',
    });
    return null;
  }
  if (!(ROUTE_STATUSES as readonly number[]).includes(spec.status)) {
    diag('redirect_status_invalid', `Status ${spec.status} is not allowed for a rule.`, {
      details: { status: spec.status, allowed: [...ROUTE_STATUSES] },
      fix: 'Use 200, 301, 302, 303, 307, 308 or 404.',
    });
    return null;
  }
  const expanded = expandVars(spec.destination, tv, diag);
  if (expanded === null) return null;
  const dest = expanded.trim();
  if (/[\u0000-\u001f\u007f-\u009f\s\\]/.test(dest)) {
    diag(
      'redirect_destination_invalid',
      'The destination contains whitespace, a backslash or a control character.',
    );
    return null;
  }
  const absolute = ABSOLUTE_URL.test(dest);
  const isPath = dest.startsWith('/') && !dest.startsWith('//');
  if (!absolute && !isPath) {
    const code = spec.status === 200 ? 'redirect_rewrite_target_relative' : 'redirect_destination_invalid';
    diag(code, `The destination \`${dest}\` must be an absolute path (\`/…\`) or an http(s) URL.`, {
      fix: dest.startsWith('//')
        ? 'Write the scheme out: `https://host/…`.'
        : `Start the destination with \`/\`, e.g. \`/${dest.replace(/^\.?\/*/, '')}\`.`,
    });
    return null;
  }
  let kind: RouteKind;
  if (spec.notFound || spec.status === 404) {
    if (absolute) {
      diag(
        'redirect_not_found_absolute',
        'A 404 rule serves a file of this space; its destination is a path.',
        {
          fix: 'Use a path such as `/404.html`.',
        },
      );
      return null;
    }
    kind = 'notFound';
  } else if (spec.status === 200) kind = absolute ? 'proxy' : 'rewrite';
  else kind = 'redirect';
  if (spec.origin === 'redirects' && kind !== 'redirect') {
    diag(
      'redirect_status_invalid',
      'Config `redirects` take 301, 302, 303, 307 or 308; use `rewrites` for 200.',
    );
    return null;
  }
  if (spec.cacheShared && kind !== 'proxy') {
    diag('redirect_cache_invalid', '`cache=shared` only applies to proxy rules (200 to an http(s) URL).');
    return null;
  }
  const names = captureNames(source);
  for (const q of spec.query ?? []) if (q.cap) names.push(q.cap);
  if (new Set(names).size !== names.length) {
    diag('redirect_source_invalid', 'A capture name is used twice in the source and its query.');
    return null;
  }
  // A redirect's destination becomes a `Location` field: non-ASCII goes out as browsers send it.
  const ascii = asciiUrl(dest);
  if (ascii === null) {
    diag('redirect_destination_invalid', `The host of \`${dest}\` is not a valid domain name.`);
    return null;
  }
  if (hasDotSegment(destinationPath(ascii))) {
    diag('redirect_destination_invalid', `The destination \`${dest}\` has a \`.\` or \`..\` segment.`, {
      fix: 'Write the path it stands for, without `.` and `..` segments.',
    });
    return null;
  }
  const { template: destination, hasQuery } = compileDestination(ascii, names, source.splat !== null);
  if (absolute) {
    try {
      const sample = fillDestination(destination, Object.fromEntries(names.map((n) => [n, 'x'])));
      const url = new URL(sample ?? '');
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
      if (url.username || url.password) {
        diag('redirect_destination_invalid', 'Destination URLs carry no credentials.');
        return null;
      }
    } catch {
      diag('redirect_destination_invalid', `The destination \`${dest}\` is not a valid URL.`);
      return null;
    }
  }
  const staticKey = isStatic(source) ? staticPath(source) : null;
  if (
    isPath &&
    staticKey !== null &&
    !spec.query?.length &&
    trimSlash(destinationPath(dest)) === staticKey &&
    kind !== 'notFound'
  ) {
    diag('redirect_self_loop', `The rule sends \`${spec.source}\` to itself.`, {
      fix:
        kind === 'redirect'
          ? 'Sources match with and without a trailing slash; remove the rule, or point it elsewhere.'
          : 'Remove the rule: the path already serves itself.',
    });
    return null;
  }
  return {
    ref: spec.ref,
    kind,
    status: spec.status,
    force: spec.force,
    source,
    staticKey,
    query: spec.query && spec.query.length > 0 ? spec.query : null,
    destination,
    destinationHasQuery: hasQuery,
    conditions: spec.conditions,
    cacheShared: spec.cacheShared,
  };
}

const QUERY_TOKEN = /^([A-Za-z][A-Za-z0-9_-]*)=(.*)$/;
const CAP_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
const CONDITION_KEY = /^([A-Za-z][A-Za-z0-9_-]*)=(.*)$/;
const KNOWN_CONDITIONS = ['Country', 'Language', 'Cookie', 'Agent'] as const;

function parseConditions(tokens: string[], diag: Diag): { conditions: RouteConditions | null; ok: boolean } {
  const c: RouteConditions = {};
  let ok = true;
  for (const tok of tokens) {
    const m = CONDITION_KEY.exec(tok);
    if (!m) {
      diag(
        'redirect_syntax_invalid',
        `Unexpected \`${tok}\` after the status; conditions look like \`Country=us,de\`.`,
      );
      ok = false;
      continue;
    }
    const [, key, raw] = m;
    const values = raw.split(',').map((v) => v.trim());
    if (key.toLowerCase() === 'role') {
      diag(
        'redirect_role_unsupported',
        'Role-based rules are not supported; use space access settings instead.',
        {
          fix: 'Remove `Role=…`; restrict the space with `access` (team or private) instead.',
        },
      );
      ok = false;
      continue;
    }
    if (!(KNOWN_CONDITIONS as readonly string[]).includes(key)) {
      const near = KNOWN_CONDITIONS.find((k) => k.toLowerCase() === key.toLowerCase());
      diag('redirect_condition_unsupported', `The condition \`${key}\` is not supported.`, {
        details: { condition: key, supported: [...KNOWN_CONDITIONS] },
        fix: near ? `Write it as \`${near}=\`.` : 'Use Country, Language, Cookie or Agent.',
      });
      ok = false;
      continue;
    }
    if (values.some((v) => v === '')) {
      diag('redirect_condition_invalid', `\`${key}=\` needs at least one value and no empty ones.`);
      ok = false;
      continue;
    }
    switch (key) {
      case 'Country':
        if (!values.every((v) => /^[A-Za-z]{2}$/.test(v))) {
          diag(
            'redirect_condition_invalid',
            'Country values are ISO 3166-1 alpha-2 codes such as `us` or `de`.',
          );
          ok = false;
        } else c.country = values.map((v) => v.toUpperCase());
        break;
      case 'Language':
        if (!values.every((v) => /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(v))) {
          diag('redirect_condition_invalid', 'Language values are language tags such as `en` or `pt-BR`.');
          ok = false;
        } else c.language = values.map((v) => v.toLowerCase());
        break;
      case 'Cookie':
        if (!values.every((v) => /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(v))) {
          diag('redirect_condition_invalid', 'Cookie values are cookie names.');
          ok = false;
        } else c.cookie = values;
        break;
      case 'Agent':
        if (values.length !== 1 || !/^(true|yes|1)$/i.test(values[0])) {
          diag('redirect_condition_invalid', '`Agent=` takes `true`, `yes` or `1`.');
          ok = false;
        } else c.agent = true;
        break;
    }
  }
  return { conditions: Object.keys(c).length > 0 ? c : null, ok };
}

export interface ParsedRedirects {
  rules: RouteRule[];
  diagnostics: CompileDiagnostic[];
}

/** Parse and compile a `_redirects` file. Every problem becomes a diagnostic on its line. */
export function parseRedirectsFile(text: string, tv: TemplateVars = {}): ParsedRedirects {
  const rules: RouteRule[] = [];
  const diagnostics: CompileDiagnostic[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((line, idx) => {
    const where = `_redirects:${idx + 1}`;
    const diag: Diag = (code, message, extra) =>
      diagnostics.push({ code, severity: 'error', message, path: where, ...extra });
    if (line.length > MAX_REDIRECT_LINE) {
      diag(
        'redirect_line_too_long',
        `The line is ${line.length} characters; the limit is ${MAX_REDIRECT_LINE}.`,
      );
      return;
    }
    // `{{ vars.NAME }}` may be written with spaces; close them up so it stays one token.
    const compact = line.replace(VAR_REF, (_m, name: string) => `{{vars.${name}}}`);
    const all = compact
      .trim()
      .split(/\s+/)
      .filter((t) => t !== '');
    const hash = all.findIndex((t) => t.startsWith('#'));
    const tokens = hash >= 0 ? all.slice(0, hash) : all;
    if (tokens.length === 0) return;
    const source = tokens[0];
    let i = 1;
    const query: QueryMatcher[] = [];
    let ok = true;
    while (i < tokens.length && !tokens[i].startsWith('/') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(tokens[i])) {
      const m = QUERY_TOKEN.exec(tokens[i]);
      if (!m) break;
      const [, name, value] = m;
      if (value.startsWith(':')) {
        const cap = value.slice(1);
        if (!CAP_NAME.test(cap)) {
          diag(
            'redirect_query_invalid',
            `\`${tokens[i]}\`: a query capture is \`name=:capture\`, letter first.`,
          );
          ok = false;
        } else query.push({ name, cap });
      } else query.push({ name, value: decodeQueryValue(value) });
      if (query.some((q, k) => k < query.length - 1 && q.name === name)) {
        diag('redirect_query_invalid', `The query parameter \`${name}\` is matched twice.`);
        ok = false;
      }
      i++;
    }
    let destination: string | undefined = tokens[i];
    if (destination !== undefined && /^\d+!?$/.test(destination)) destination = undefined;
    else i++;
    let status = 302;
    let force = false;
    if (i < tokens.length && /^\d+!?$/.test(tokens[i])) {
      force = tokens[i].endsWith('!');
      status = Number.parseInt(tokens[i], 10);
      i++;
    } else if (i < tokens.length && tokens[i] === '!') {
      force = true;
      i++;
    }
    let cacheShared = false;
    if (i < tokens.length && /^cache=/i.test(tokens[i])) {
      if (tokens[i].toLowerCase() !== 'cache=shared') {
        diag('redirect_cache_invalid', '`cache=` takes `shared`.');
        ok = false;
      }
      cacheShared = true;
      i++;
    }
    const cond = parseConditions(tokens.slice(i), diag);
    if (!ok || !cond.ok) return;
    const rule = buildRouteRule(
      {
        ref: where,
        source,
        destination,
        status,
        force,
        query,
        conditions: cond.conditions,
        cacheShared,
        origin: '_redirects',
      },
      tv,
      diag,
    );
    if (rule) rules.push(rule);
  });
  return { rules, diagnostics };
}

function decodeQueryValue(v: string): string {
  try {
    return decodeURIComponent(v.replace(/\+/g, ' '));
  } catch {
    return v;
  }
}
