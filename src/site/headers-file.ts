/**
 * `_headers`: blocks of a matcher at column 0 followed by indented `Name: value` or `! Name` lines.
 *
 *   /assets/*
 *     Cache-Control: public, max-age=31536000, immutable
 *     ! X-Robots-Tag
 *
 * Values are checked here, at finalize, so a response never carries a header the platform must own.
 */

import { AUTHOR_VALUE_FIX, authorValueProblem, isBlankValue } from './field.ts';
import { captureNames, compilePattern, compileTemplate, type PathPattern, PatternError } from './match.ts';
import type { Diag } from './redirects-file.ts';
import type { HeaderOp, HeaderRule } from './rule-set.ts';
import type { CompileDiagnostic } from './types.ts';

/** Optional whitespace around a value (RFC 9110 §5.5): SP and HTAB, nothing wider. */
const OWS_AROUND = /^[ \t]+|[ \t]+$/g;

export const MAX_HEADER_LINE = 2000;
export const MAX_HEADER_BLOCKS = 100;

/** Headers the platform owns: framing, hop-by-hop, caching-layer control and server identity. */
const FORBIDDEN = new Set(
  [
    'Accept-Ranges',
    'Age',
    'Allow',
    'Alt-Svc',
    'Connection',
    'Content-Encoding',
    'Content-Length',
    'Content-Range',
    'Date',
    'Location',
    'Server',
    'Strict-Transport-Security',
    'Trailer',
    'Transfer-Encoding',
    'Upgrade',
    'Keep-Alive',
    'Proxy-Authenticate',
    'Proxy-Authorization',
    'Proxy-Connection',
    'Te',
    'CDN-Cache-Control',
    'Surrogate-Control',
    'Surrogate-Key',
    'Edge-Control',
    'X-Sendfile',
  ].map((n) => n.toLowerCase()),
);

function isForbidden(lower: string): boolean {
  return (
    FORBIDDEN.has(lower) ||
    lower.endsWith('-cdn-cache-control') ||
    lower.startsWith('x-accel-') ||
    lower.startsWith('x-lighttpd-')
  );
}

/** `x-frame-options` → `X-Frame-Options`. */
export function canonicalHeaderName(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w))
    .join('-');
}

/**
 * Check one set/remove operation; returns it compiled, or null after reporting why not. Problems
 * with the value go to `valueDiag` (config entries point at their `value` field).
 */
export function buildHeaderOp(
  rawName: string,
  value: string | null,
  pattern: PathPattern,
  diag: Diag,
  valueDiag: Diag = diag,
): HeaderOp | null {
  if (!/^[A-Za-z0-9-]+$/.test(rawName) || !/^[A-Za-z0-9]/.test(rawName)) {
    diag('header_name_invalid', `\`${rawName}\` is not a header name (letters, digits and \`-\`).`);
    return null;
  }
  const name = canonicalHeaderName(rawName);
  const lower = name.toLowerCase();
  if (lower === 'basic-auth') {
    diag('header_basic_auth_unsupported', 'Basic-Auth in `_headers` is not supported.', {
      fix: 'Protect the space with `access` (team or private) or a password credential instead.',
    });
    return null;
  }
  if (isForbidden(lower)) {
    diag('header_forbidden', `\`${name}\` is managed by the platform and cannot be set or removed.`, {
      details: { name },
    });
    return null;
  }
  if (value === null) return { name, remove: true };
  // Checked here, in the grammar the wire writers enforce, so no value reaches them that they refuse.
  if (isBlankValue(value)) {
    valueDiag('header_value_empty', `\`${name}\` has no value.`, {
      fix: `Write a value, or \`! ${name}\` to remove the header.`,
    });
    return null;
  }
  const problem = authorValueProblem(value);
  if (problem) {
    valueDiag('header_value_invalid', `The value of \`${name}\` ${problem}.`, { fix: AUTHOR_VALUE_FIX });
    return null;
  }
  if (value.length > 8192) {
    valueDiag('header_value_invalid', `The value of \`${name}\` is longer than 8,192 characters.`);
    return null;
  }
  if (lower === 'set-cookie') {
    const attrs = value.split(';').slice(1);
    if (attrs.some((a) => /^\s*domain\s*=/i.test(a))) {
      valueDiag(
        'header_set_cookie_domain',
        'A `Set-Cookie` here may not name a `Domain`: the cookie would reach other hosts than this site.',
        { fix: 'Drop the Domain attribute; the cookie is then bound to the site’s own hostname.' },
      );
      return null;
    }
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+=/.test(value.trim())) {
      valueDiag('header_value_invalid', '`Set-Cookie` needs `name=value`.');
      return null;
    }
  }
  if (lower === 'cache-control') {
    diag(
      'header_cache_control_platform_managed',
      '`Cache-Control` overrides the platform’s caching policy for these paths; it is sent verbatim.',
      { severity: 'warning', fix: 'Remove it unless you need a policy other than the default.' },
    );
  }
  return { name, value: compileTemplate(value.replace(OWS_AROUND, ''), captureNames(pattern)) };
}

export function compileHeaderSource(source: string, diag: Diag): PathPattern | null {
  try {
    return compilePattern(source, { splatWholeSegmentOnly: true });
  } catch (e) {
    if (!(e instanceof PatternError)) throw e;
    diag('header_matcher_invalid', `The matcher \`${source}\` is not valid: ${e.message}.`, {
      fix: 'Use a path like `/assets/*` or a URL like `https://*.example.com/*`.',
    });
    return null;
  }
}

export interface ParsedHeaders {
  rules: HeaderRule[];
  diagnostics: CompileDiagnostic[];
}

export function parseHeadersFile(text: string): ParsedHeaders {
  const rules: HeaderRule[] = [];
  const diagnostics: CompileDiagnostic[] = [];
  let current: HeaderRule | null = null;
  /** A block whose matcher was rejected: its lines are skipped quietly (one diagnostic is enough). */
  let skipping = false;
  let blocks = 0;
  /** The previous line set a header: an indented line without `Name:` next is a folded value. */
  let afterHeader = false;
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let idx = 0; idx < lines.length; idx++) {
    const line = lines[idx];
    const where = `_headers:${idx + 1}`;
    const diag: Diag = (code, message, extra) =>
      diagnostics.push({ code, severity: 'error', message, path: where, ...extra });
    if (line.length > MAX_HEADER_LINE) {
      diag('header_line_too_long', `The line is ${line.length} characters; the limit is ${MAX_HEADER_LINE}.`);
      continue;
    }
    // Only SP and HTAB are trimmed: a wider trim would hide a U+2028 or NBSP at the end of a value.
    const trimmed = line.replace(OWS_AROUND, '');
    if (trimmed === '' || trimmed.startsWith('#')) {
      afterHeader = false;
      continue;
    }
    const indented = line[0] === ' ' || line[0] === '\t';
    if (!indented) {
      afterHeader = false;
      blocks++;
      if (blocks > MAX_HEADER_BLOCKS) {
        diag('header_blocks_over_limit', `\`_headers\` has more than ${MAX_HEADER_BLOCKS} blocks.`, {
          details: { limit: MAX_HEADER_BLOCKS },
          fix: 'Merge blocks with a wider matcher such as `/assets/*`.',
        });
        return { rules, diagnostics };
      }
      const pattern = compileHeaderSource(trimmed, diag);
      current = pattern ? { ref: where, source: pattern, ops: [] } : null;
      skipping = pattern === null;
      if (current) rules.push(current);
      continue;
    }
    if (!current) {
      if (!skipping) {
        diag('header_syntax_invalid', 'A header line must follow a matcher line (a path at column 0).');
      }
      continue;
    }
    let op: HeaderOp | null;
    if (trimmed.startsWith('!')) {
      op = buildHeaderOp(trimmed.slice(1).trim(), null, current.source, diag);
      afterHeader = false;
    } else {
      const colon = trimmed.indexOf(':');
      if (colon <= 0) {
        if (afterHeader) {
          diag(
            'header_syntax_invalid',
            'A header value cannot continue on the next line (obs-fold): this line has no `Name:`.',
            { fix: 'Write the whole value on the header’s own line.' },
          );
        } else diag('header_syntax_invalid', 'A header line is `Name: value` or `! Name`.');
        afterHeader = false;
        continue;
      }
      op = buildHeaderOp(trimmed.slice(0, colon).trim(), trimmed.slice(colon + 1), current.source, diag);
      afterHeader = true;
    }
    if (op) current.ops.push(op);
  }
  return { rules: rules.filter((r) => r.ops.length > 0), diagnostics };
}
