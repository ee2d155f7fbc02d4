import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import ipaddr from 'ipaddr.js';
import { ApiError } from '../../errors/problem.ts';
import {
  NAMED_MATCH_KEYS,
  SCALAR_MATCH_KEYS,
  SpaceConfig,
  type TrafficRuleMatch,
  type TrafficRuleValue,
} from '../../schemas/space-config.ts';
import { escapePointer, validate } from '../../schemas/validation.ts';
import { authorValueProblem, isBlankValue } from '../../site/field.ts';
import { destinationPath } from '../../site/match.ts';
import { hasDotSegment } from '../../site/path.ts';
import { compileWildcard, WildcardError } from './wildcard.ts';

/** The overlay, serialised as JSON, may not exceed the size of a settings file (behaviour §4.1). */
export const MAX_CONFIG_BYTES = 256 * 1024;
/** Status a `block` firewall rule answers with when it names none. */
export const DEFAULT_BLOCK_STATUS = 403;

/**
 * Headers a header rule may neither set nor remove: hop-by-hop and framing headers (the server owns
 * the connection and the body encoding) and the headers the `_headers` file may not touch either
 * (behaviour §4.6), so config and file rules obey one list. `Proxy-*` is matched by prefix.
 */
export const FORBIDDEN_HEADERS = new Set(
  [
    'connection',
    'keep-alive',
    'transfer-encoding',
    'content-length',
    'te',
    'trailer',
    'upgrade',
    'host',
    'content-encoding',
    'accept-ranges',
    'age',
    'allow',
    'alt-svc',
    'content-range',
    'date',
    'location',
    'server',
    'set-cookie',
    'strict-transport-security',
    'cdn-cache-control',
    'surrogate-control',
    'basic-auth',
  ].map((h) => h.toLowerCase()),
);
/** `Proxy-*`, and vendor spellings of CDN-Cache-Control (`Vercel-CDN-Cache-Control`, …). */
function forbiddenHeader(lower: string): boolean {
  return FORBIDDEN_HEADERS.has(lower) || lower.startsWith('proxy-') || lower.endsWith('-cdn-cache-control');
}

/** Header names as the `_headers` file accepts them: letters, digits and `-` (behaviour §4.6). */
const HEADER_NAME = /^[A-Za-z0-9-]+$/;
/** Cookie names: RFC 6265 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ABSOLUTE_URL = /^https?:\/\//i;
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f\s]/u;

export function bad(pointer: string, detail: string, rule: string): never {
  throw new ApiError('validation_error', detail, { pointer, details: { rule } });
}

/**
 * Validates a SpaceConfig overlay and returns it normalised (defaults filled in, data source URLs
 * normalised) — the form to store. `value` is not modified. Failures are 400 `validation_error` with
 * an RFC 6901 `pointer` under `pointerPrefix`.
 */
export function validateSpaceConfig(value: unknown, pointerPrefix = '/config'): SpaceConfig {
  return checkConfigRules(validateShape<SpaceConfig>(SpaceConfig, value, pointerPrefix), pointerPrefix);
}

/**
 * Size and schema: a normalised copy of `value` (Ajv fills defaults in place, and the caller's object
 * must stay as it was), or a `validation_error` pointing under `pointerPrefix`.
 */
export function validateShape<T>(schema: TSchema, value: unknown, pointerPrefix: string): T {
  const text = JSON.stringify(value);
  if (text !== undefined && Buffer.byteLength(text, 'utf8') > MAX_CONFIG_BYTES) {
    bad(
      pointerPrefix,
      `${pointerPrefix || 'The config'} may be at most ${MAX_CONFIG_BYTES} bytes as JSON.`,
      'size',
    );
  }
  const copy: unknown = text === undefined ? value : JSON.parse(text);
  return validate<T>(schema, copy, 'body', pointerPrefix);
}

/**
 * The rules JSON Schema cannot state, over a config that passed its schema (the overlay, or the
 * settings file that holds the same keys); normalises it in place and returns it.
 */
export function checkConfigRules<T extends SpaceConfig>(config: T, pointerPrefix: string): T {
  const at = (...parts: Array<string | number>) =>
    pointerPrefix + parts.map((p) => `/${escapePointer(String(p))}`).join('');

  config.firewall?.forEach((rule, i) => {
    if (rule.action === 'block') rule.status ??= DEFAULT_BLOCK_STATUS;
    else if (rule.status !== undefined) {
      bad(
        at('firewall', i, 'status'),
        `${at('firewall', i, 'status')} applies to block rules only.`,
        'status_block_only',
      );
    }
    checkMatch(rule.match, at('firewall', i, 'match'));
  });
  config.cache?.bypass?.forEach((rule, i) => {
    checkMatch(rule.match, at('cache', 'bypass', i, 'match'));
  });

  config.redirects?.forEach((rule, i) => {
    checkSource(rule.source, at('redirects', i, 'source'));
    checkDestination(rule.destination, at('redirects', i, 'destination'));
    if (rule.source === rule.destination && !/[*:]/.test(rule.source)) {
      bad(
        at('redirects', i, 'destination'),
        `${at('redirects', i, 'destination')} redirects to itself.`,
        'self_loop',
      );
    }
  });
  config.rewrites?.forEach((rule, i) => {
    checkSource(rule.source, at('rewrites', i, 'source'));
    checkDestination(rule.destination, at('rewrites', i, 'destination'));
    const absolute = ABSOLUTE_URL.test(rule.destination);
    if (rule.cache !== undefined && !absolute) {
      bad(
        at('rewrites', i, 'cache'),
        `${at('rewrites', i, 'cache')} is only allowed when the destination is an absolute URL (a proxy).`,
        'cache_absolute_only',
      );
    }
    if (rule.notFound === true && absolute) {
      bad(
        at('rewrites', i, 'notFound'),
        `${at('rewrites', i, 'notFound')} needs a path destination, not an absolute URL.`,
        'not_found_path_only',
      );
    }
  });
  config.headers?.forEach((rule, i) => {
    checkSource(rule.source, at('headers', i, 'source'));
    rule.headers.forEach((h, j) => {
      checkHeaderName(h.key, at('headers', i, 'headers', j, 'key'));
      if ('value' in h) {
        // The same grammar `_headers` values obey at finalize (and the wire writers enforce).
        const pointer = at('headers', i, 'headers', j, 'value');
        if (isBlankValue(h.value)) bad(pointer, `${pointer} is empty.`, 'header_value_empty');
        const problem = authorValueProblem(h.value);
        if (problem) bad(pointer, `${pointer} ${problem}.`, 'header_value_invalid');
      }
    });
  });

  if (config.dataSources) {
    for (const name of Object.keys(config.dataSources)) {
      const source = config.dataSources[name]!;
      source.url = normalizeDataSourceUrl(source.url, at('dataSources', name, 'url'));
    }
  }
  if (config.defaultDataSource !== undefined) {
    const sources = config.dataSources ?? {};
    if (!Object.hasOwn(sources, config.defaultDataSource)) {
      bad(
        at('defaultDataSource'),
        `${at('defaultDataSource')} names no entry of dataSources.`,
        'default_data_source_unknown',
      );
    }
  }
  return config;
}

// ---- traffic rules ----------------------------------------------------------------------------------

function checkMatch(match: TrafficRuleMatch, pointer: string): void {
  for (const key of SCALAR_MATCH_KEYS) {
    const v = match[key] as TrafficRuleValue | undefined;
    if (v !== undefined) checkValue(key, v, `${pointer}/${key}`);
  }
  for (const key of NAMED_MATCH_KEYS) {
    const named = match[key] as Record<string, TrafficRuleValue> | undefined;
    if (!named) continue;
    for (const [name, v] of Object.entries(named)) {
      const p = `${pointer}/${key}/${escapePointer(name)}`;
      if (key === 'header' && !HEADER_NAME.test(name)) {
        bad(
          p,
          `${p}: "${name}" is not a valid header name (letters, digits and '-').`,
          'header_name_invalid',
        );
      }
      if (key === 'cookie' && !TOKEN.test(name)) {
        bad(p, `${p}: "${name}" is not a valid cookie name.`, 'cookie_name_invalid');
      }
      checkValue(key, v, p);
    }
  }
}

type Attr = (typeof SCALAR_MATCH_KEYS)[number] | (typeof NAMED_MATCH_KEYS)[number];

function checkValue(attr: Attr, v: TrafficRuleValue, pointer: string): void {
  if (typeof v === 'string') {
    checkPlain(attr, v, pointer);
    return;
  }
  if (Array.isArray(v)) {
    for (const [i, s] of v.entries()) checkPlain(attr, s, `${pointer}/${i}`);
    return;
  }
  const { op } = v;
  const needsValues = op === 'in' || op === 'inCidr';
  if (op === 'exists') {
    if (v.value !== undefined)
      bad(`${pointer}/value`, `${pointer}/value is not used with op "exists".`, 'clause_shape');
    if (v.values !== undefined) {
      bad(`${pointer}/values`, `${pointer}/values is not used with op "exists".`, 'clause_shape');
    }
    return;
  }
  if (needsValues) {
    if (v.values === undefined)
      bad(`${pointer}/values`, `${pointer}/values is required with op "${op}".`, 'clause_shape');
    if (v.value !== undefined) {
      bad(`${pointer}/value`, `${pointer}/value is not used with op "${op}"; give values.`, 'clause_shape');
    }
    v.values!.forEach((s, i) => {
      const p = `${pointer}/values/${i}`;
      if (op === 'inCidr') checkCidr(s, p);
      else if (attr === 'ip') checkIpOrCidr(s, p);
    });
    return;
  }
  if (v.value === undefined)
    bad(`${pointer}/value`, `${pointer}/value is required with op "${op}".`, 'clause_shape');
  if (v.values !== undefined) {
    bad(`${pointer}/values`, `${pointer}/values is not used with op "${op}"; give value.`, 'clause_shape');
  }
  const p = `${pointer}/value`;
  const value = v.value!;
  if (op === 'wildcard') {
    if (attr === 'ip' && !/^[0-9A-Fa-f.:*]+$/.test(value)) {
      bad(p, `${p} is not an IP address pattern.`, 'ip_invalid');
    }
    checkWildcard(value, p);
  } else if (attr === 'ip') {
    if (op === 'eq' || op === 'neq') checkIpOrCidr(value, p);
    else if (!/^[0-9A-Fa-f.:]+$/.test(value)) bad(p, `${p} is not part of an IP address.`, 'ip_invalid');
  }
}

/** A bare string: exact, wildcard when it holds `*`, and for `ip` an address or (with `/`) a CIDR range. */
function checkPlain(attr: Attr, s: string, pointer: string): void {
  if (attr === 'ip') checkIpOrCidr(s, pointer);
  else if (s.includes('*')) checkWildcard(s, pointer);
}

function checkWildcard(pattern: string, pointer: string): void {
  try {
    compileWildcard(pattern);
  } catch (e) {
    if (e instanceof WildcardError) bad(pointer, `${pointer}: ${e.message}.`, 'wildcard_invalid');
    throw e;
  }
}

/** Strict IP literal: dotted-decimal IPv4 without leading zeros, or IPv6 (no zone). */
export function isIpLiteral(s: string): boolean {
  if (isIPv4(s)) return true;
  return isIPv6(s) && !s.includes('%');
}

/** `addr/prefix` with prefix in range for the family, no leading zeros. */
export function isCidr(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const addr = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(bits) || !isIpLiteral(addr)) return false;
  const max = isIPv4(addr) ? 32 : 128;
  return Number(bits) <= max && ipaddr.isValidCIDR(s);
}

function checkIpOrCidr(s: string, pointer: string): void {
  if (s.includes('/') ? isCidr(s) : isIpLiteral(s)) return;
  bad(pointer, `${pointer}: "${s}" is not an IP address or CIDR range.`, 'ip_invalid');
}

/** `inCidr` takes ranges; a bare address means the single-address range. */
function checkCidr(s: string, pointer: string): void {
  if (s.includes('/') ? isCidr(s) : isIpLiteral(s)) return;
  bad(pointer, `${pointer}: "${s}" is not a CIDR range.`, 'cidr_invalid');
}

// ---- routing rules ----------------------------------------------------------------------------------

const PLACEHOLDER = /^:[A-Za-z][A-Za-z0-9_]*$/;

/**
 * A rule source: an absolute path, or an http(s) URL whose path follows the same rules. One `*`
 * (the splat) only at the very end; `:name` placeholders are whole segments, letter-first, unique.
 */
function checkSource(source: string, pointer: string): void {
  if (CONTROL_OR_SPACE.test(source) || source.includes('\\')) {
    bad(
      pointer,
      `${pointer} may not contain whitespace, control characters or backslashes.`,
      'source_invalid',
    );
  }
  let path = source;
  if (ABSOLUTE_URL.test(source)) {
    const rest = source.slice(source.indexOf('//') + 2);
    const slash = rest.indexOf('/');
    const host = slash < 0 ? rest : rest.slice(0, slash);
    if (
      !/^(?:[A-Za-z0-9-]+|\*|:[A-Za-z][A-Za-z0-9_]*)(?:\.(?:[A-Za-z0-9-]+|\*|:[A-Za-z][A-Za-z0-9_]*))*$/.test(
        host,
      )
    ) {
      bad(pointer, `${pointer} has an invalid host pattern (no ports or credentials).`, 'source_invalid');
    }
    path = slash < 0 ? '/' : rest.slice(slash);
  } else if (!source.startsWith('/')) {
    bad(
      pointer,
      `${pointer} must be an absolute path (starting with /) or an http(s) URL.`,
      'source_invalid',
    );
  }
  if (/[?#]/.test(path)) bad(pointer, `${pointer} may not carry a query or fragment.`, 'source_invalid');
  const star = path.indexOf('*');
  if (star >= 0 && star !== path.length - 1) {
    bad(pointer, `${pointer}: the splat * may appear once, at the end of the path.`, 'source_invalid');
  }
  const seen = new Set<string>();
  for (const segment of path.split('/')) {
    if (!segment.includes(':')) continue;
    if (!PLACEHOLDER.test(segment)) {
      bad(
        pointer,
        `${pointer}: a placeholder is a whole segment :name (a letter, then letters, digits, _).`,
        'source_invalid',
      );
    }
    if (seen.has(segment))
      bad(pointer, `${pointer}: placeholder ${segment} appears twice.`, 'source_invalid');
    seen.add(segment);
  }
}

/** `{{ vars.NAME }}` in a destination expands at finalize (behaviour §4.4); it is checked as a plain word. */
const TEMPLATE_VAR = /\{\{\s*vars\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}/g;

/**
 * A destination: a path (starting with `/`) or an absolute http(s) URL with a host; `:splat`, `:name`
 * and `{{ vars.NAME }}` may appear inside it.
 */
function checkDestination(raw: string, pointer: string): void {
  const destination = raw.replace(TEMPLATE_VAR, 'var');
  if (CONTROL_OR_SPACE.test(destination) || destination.includes('\\')) {
    bad(
      pointer,
      `${pointer} may not contain whitespace, control characters or backslashes.`,
      'destination_invalid',
    );
  }
  if (destination.startsWith('//')) {
    bad(pointer, `${pointer}: protocol-relative destinations are not allowed.`, 'destination_invalid');
  }
  if (hasDotSegment(destinationPath(destination))) {
    bad(
      pointer,
      `${pointer} has a \`.\` or \`..\` segment; write the path it stands for.`,
      'destination_invalid',
    );
  }
  if (destination.startsWith('/')) return;
  if (/^https?:\/\/[^/?#@]+/i.test(destination)) return;
  bad(
    pointer,
    `${pointer} must be a path starting with / or an absolute http(s) URL.`,
    'destination_invalid',
  );
}

function checkHeaderName(key: string, pointer: string): void {
  if (!HEADER_NAME.test(key)) {
    bad(
      pointer,
      `${pointer}: "${key}" is not a valid header name (letters, digits and '-' only; no CR, LF or NUL).`,
      'header_name_invalid',
    );
  }
  const lower = key.toLowerCase();
  if (forbiddenHeader(lower)) {
    bad(
      pointer,
      `${pointer}: the ${key} header is managed by the server and cannot be set or removed.`,
      'header_forbidden',
    );
  }
}

// ---- data source URLs -------------------------------------------------------------------------------

const HEX = /^[0-9A-Fa-f]{2}$/;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** Kept as they are in paths: sub-delims, `:` and `@`; their percent-encoded forms stay encoded. */
const PATH_LITERAL = /^[!$&'()*+,;=:@]$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function pct(byte: number): string {
  return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * Checks a data source URL against every rule of the spec and returns its normalised form: lowercase
 * `https://`, host lowercased and IDNA-encoded (or a dotted-decimal IPv4 / compressed bracketed IPv6),
 * default port 443 dropped, dot segments resolved, percent-encoding canonical (unreserved characters
 * decoded, everything else encoded with uppercase hex), trailing slashes removed (the root stays `/`).
 * Throws 400 `validation_error` at `pointer` otherwise.
 */
export function normalizeDataSourceUrl(url: string, pointer = ''): string {
  const where = pointer || 'The URL';
  const no = (why: string, rule: string): never => bad(pointer, `${where} ${why}`, rule);
  if (typeof url !== 'string' || url.length < 1 || url.length > 2048) {
    no('must be 1..2048 characters long.', 'url_length');
  }
  // A lone surrogate has no UTF-8 encoding.
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(url))
    no('is not valid UTF-8.', 'url_utf8');
  if (/[\u0000-\u001f\u007f-\u009f]/.test(url)) no('may not contain control characters.', 'url_control');
  if (/[\s\u200b\ufeff]/u.test(url)) {
    no('may not contain whitespace (encode spaces in the path as %20).', 'url_whitespace');
  }
  if (url.includes('\\')) no('may not contain backslashes.', 'url_backslash');
  if (!url.startsWith('https://')) no('must start with https:// (lowercase).', 'url_scheme');
  const rest = url.slice('https://'.length);
  if (rest.includes('#')) no('may not have a fragment.', 'url_fragment');
  if (rest.includes('?')) no('may not have a query.', 'url_query');
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const rawPath = slash < 0 ? '' : rest.slice(slash);
  if (authority.includes('@')) no('may not carry credentials.', 'url_credentials');
  if (authority === '') no('has no host.', 'url_host');

  let host: string;
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) no('has an unterminated IPv6 address.', 'url_host');
    const inner = authority.slice(1, close);
    const after = authority.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) no('has characters after the IPv6 address.', 'url_host');
    if (after !== '') portText = after.slice(1);
    if (!isIPv6(inner) || inner.includes('%')) no('has an invalid IPv6 address.', 'url_host');
    host = `[${ipaddr.IPv6.parse(inner).toRFC5952String()}]`;
  } else {
    const parts = authority.split(':');
    if (parts.length > 2) no('has an invalid host.', 'url_host');
    const rawHost = parts[0]!;
    if (parts.length === 2) portText = parts[1];
    if (rawHost === '') no('has no host.', 'url_host');
    if (rawHost.endsWith('.') || rawHost.endsWith('\u3002') || rawHost.endsWith('\uff0e')) {
      no('may not end its host with a dot.', 'url_trailing_dot');
    }
    if (rawHost.includes('%')) no('may not percent-encode its host.', 'url_host');
    if (/^[0-9.]+$/.test(rawHost)) {
      const octets = rawHost.split('.');
      if (octets.length !== 4 || !octets.every((o) => /^(0|[1-9][0-9]{0,2})$/.test(o) && Number(o) <= 255)) {
        no('has an invalid IPv4 address (use dotted-decimal a.b.c.d).', 'url_host');
      }
      host = rawHost;
    } else {
      const ascii = domainToASCII(rawHost);
      if (!ascii) no('has a host that is not a valid internationalised domain name.', 'url_host');
      if (ascii.endsWith('.')) no('may not end its host with a dot.', 'url_trailing_dot');
      if (ascii.length > 253) no('has a host longer than 253 characters.', 'url_host');
      const labels = ascii.split('.');
      for (const label of labels) {
        if (label.length < 1 || label.length > 63 || !/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/.test(label)) {
          no(`has an invalid host label "${label}" (1..63 letters, digits, inner hyphens).`, 'url_host');
        }
      }
      // A last label that is a number makes the whole host an IPv4 address to URL parsers.
      if (/^(?:[0-9]+|0x[0-9a-f]*)$/.test(labels[labels.length - 1]!)) {
        no('has a host that is neither a domain name nor a dotted-decimal IPv4 address.', 'url_host');
      }
      host = ascii;
    }
  }

  let port = '';
  if (portText !== undefined) {
    if (!/^[0-9]{1,5}$/.test(portText)) no('has an invalid port.', 'url_port');
    const n = Number(portText);
    if (n === 0 || n > 65535) no('has a port outside 1..65535.', 'url_port');
    if (n !== 443) port = `:${n}`;
  }

  const segments = rawPath === '' ? [] : rawPath.slice(1).split('/');
  const out: string[] = [];
  segments.forEach((segment, index) => {
    const normal = normalizeSegment(segment, no);
    const isLast = index === segments.length - 1;
    if (normal === '.') {
      if (isLast) out.push('');
    } else if (normal === '..') {
      out.pop();
      if (isLast) out.push('');
    } else out.push(normal);
  });
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  const result = `https://${host}${port}/${out.join('/')}`;
  if (result.length > 2048) no('is longer than 2048 characters once normalised.', 'url_length');
  return result;
}

function normalizeSegment(segment: string, no: (why: string, rule: string) => never): string {
  let out = '';
  let i = 0;
  const chars = Array.from(segment);
  // Work on code points; `%XX` runs are gathered so multi-byte UTF-8 decodes as a whole.
  while (i < chars.length) {
    const c = chars[i]!;
    if (c === '%') {
      const bytes: number[] = [];
      while (chars[i] === '%') {
        const hex = (chars[i + 1] ?? '') + (chars[i + 2] ?? '');
        if (!HEX.test(hex)) no('has a malformed percent-encoding.', 'url_percent');
        const byte = Number.parseInt(hex, 16);
        if (byte === 0x25) no('may not contain an encoded percent sign (%25).', 'url_encoded_percent');
        if (byte === 0x2f || byte === 0x5c) {
          no('may not contain an encoded slash or backslash (%2F, %5C).', 'url_encoded_slash');
        }
        if (byte < 0x20 || byte === 0x7f) no('may not contain encoded control characters.', 'url_control');
        bytes.push(byte);
        i += 3;
      }
      let text: string;
      try {
        text = utf8.decode(Uint8Array.from(bytes));
      } catch {
        no('has a percent-encoded path that is not valid UTF-8.', 'url_utf8');
      }
      for (const ch of text!) {
        if (/[\u0080-\u009f]/.test(ch)) no('may not contain encoded control characters.', 'url_control');
        if (ch !== ' ' && /[\s\u200b\ufeff]/u.test(ch)) {
          no('may not contain whitespace other than encoded spaces in the path.', 'url_whitespace');
        }
        if (UNRESERVED.test(ch)) out += ch;
        else for (const b of Buffer.from(ch, 'utf8')) out += pct(b);
      }
      continue;
    }
    if (UNRESERVED.test(c) || PATH_LITERAL.test(c)) out += c;
    else for (const b of Buffer.from(c, 'utf8')) out += pct(b);
    i += 1;
  }
  return out;
}
