/**
 * Request-path normalisation, done exactly once per request. The router, the firewall and the file
 * lookup all see the same string, so no guard can be bypassed by an encoding the next stage decodes
 * differently.
 *
 * The result is a decoded, NFC-normalised path that starts with exactly one `/`, has no empty, `.` or
 * `..` segments, and keeps a trailing `/` when the request had one (the trailing slash is meaningful
 * for directory resolution). Anything ambiguous is refused instead of guessed at.
 */

export type PathRejection =
  | 'not_absolute'
  | 'bad_percent_encoding'
  | 'nul_byte'
  | 'control_character'
  | 'invalid_utf8'
  | 'encoded_separator'
  | 'backslash'
  | 'escapes_root'
  | 'too_long';

export type NormalisedPath = { ok: true; path: string } | { ok: false; reason: PathRejection };

/** Longest raw path we look at; the manifest limits file paths to 1,024 bytes, so this is generous. */
export const MAX_RAW_PATH = 8192;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

/**
 * Normalise the path part of a request target (no query, no fragment). Percent-escapes are decoded
 * once: `%252e` becomes the literal three characters `%2e`, never `.`.
 */
/** Already-canonical ASCII paths (the common case) skip decoding entirely. */
const PLAIN = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;
const DOT_OR_EMPTY_SEGMENT = /\/\/|\/\.\.?(?:\/|$)/;

export function normalisePath(raw: string): NormalisedPath {
  if (raw.length > MAX_RAW_PATH) return { ok: false, reason: 'too_long' };
  if (PLAIN.test(raw) && !DOT_OR_EMPTY_SEGMENT.test(raw)) return { ok: true, path: raw };
  if (raw.charCodeAt(0) !== 0x2f) return { ok: false, reason: 'not_absolute' };
  const src = Buffer.from(raw, 'utf8');
  const out = Buffer.allocUnsafe(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    let b = src[i];
    if (b === 0x25) {
      const h = i + 2 < src.length ? hexValue(src[i + 1]) : -1;
      const l = i + 2 < src.length ? hexValue(src[i + 2]) : -1;
      if (h < 0 || l < 0) return { ok: false, reason: 'bad_percent_encoding' };
      b = h * 16 + l;
      i += 2;
      // An encoded separator would be a segment boundary to one reader and not to another.
      if (b === 0x2f || b === 0x5c) return { ok: false, reason: 'encoded_separator' };
    } else if (b === 0x5c) {
      return { ok: false, reason: 'backslash' };
    }
    if (b === 0) return { ok: false, reason: 'nul_byte' };
    if (b < 0x20 || b === 0x7f) return { ok: false, reason: 'control_character' };
    out[n++] = b;
  }
  let decoded: string;
  try {
    // Fatal decoding refuses invalid sequences, surrogates and overlong forms such as %c0%ae.
    decoded = utf8.decode(out.subarray(0, n));
  } catch {
    return { ok: false, reason: 'invalid_utf8' };
  }
  decoded = decoded.normalize('NFC');
  // C1 controls and the Unicode line separators have no place in a path either.
  if (/[\u0080-\u009f\u2028\u2029]/.test(decoded)) return { ok: false, reason: 'control_character' };
  const parts = decoded.split('/');
  const stack: string[] = [];
  let trailing = false;
  for (let i = 1; i < parts.length; i++) {
    const seg = parts[i];
    const last = i === parts.length - 1;
    if (seg === '' || seg === '.') {
      if (last) trailing = true;
      continue;
    }
    if (seg === '..') {
      if (stack.length === 0) return { ok: false, reason: 'escapes_root' };
      stack.pop();
      if (last) trailing = true;
      continue;
    }
    stack.push(seg);
    trailing = false;
  }
  if (stack.length === 0) return { ok: true, path: '/' };
  return { ok: true, path: `/${stack.join('/')}${trailing ? '/' : ''}` };
}

/**
 * Characters each part of a URL may carry as they are; everything else is percent-encoded (UTF-8).
 * A path segment takes RFC 3986 `pchar` minus `%`; a path also `/`. A query value drops what
 * `application/x-www-form-urlencoded` gives meaning to (`&`, `=`, `+`, `;`) and `?`, so it can never
 * start another parameter. A fragment takes `pchar`, `/` and `?`. `#` and `%` are always encoded.
 */
const SEGMENT_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/;
const PATH_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;
const QUERY_VALUE_CHAR = /[A-Za-z0-9\-._~!$'()*,/:@]/;
const FRAGMENT_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@/?]/;

function percentEncode(value: string, keep: RegExp): string {
  let out = '';
  for (const ch of value) {
    if (keep.test(ch)) out += ch;
    else {
      for (const byte of Buffer.from(ch, 'utf8'))
        out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

/** Percent-encode a decoded path for a `Location` header or an upstream URL; `/` stays a separator. */
export function encodePath(path: string): string {
  return percentEncode(path, PATH_CHAR);
}

/** Percent-encode a value as one path segment: `/`, `?` and `#` included. */
export function encodeSegment(value: string): string {
  return percentEncode(value, SEGMENT_CHAR);
}

/** Percent-encode a value as a query parameter name or value. */
export function encodeQueryValue(value: string): string {
  return percentEncode(value, QUERY_VALUE_CHAR);
}

/** Percent-encode a value for a fragment. */
export function encodeFragment(value: string): string {
  return percentEncode(value, FRAGMENT_CHAR);
}

/** Encode one captured value for a header value; splats keep their `/`. */
export function encodeCapture(value: string, keepSlash: boolean): string {
  return keepSlash ? encodePath(value) : encodeSegment(value);
}

/** `.` or `..` as a URL parser reads a segment (`%2e` is a dot to it too). */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/** Does the (encoded) path hold a `.` or `..` segment, which a URL parser would resolve away? */
export function hasDotSegment(path: string): boolean {
  return DOT_SEGMENT.test(path);
}

/**
 * Make sure a same-site location can never be read as protocol-relative (`//host`) or as a
 * backslash-authority (`/\host`) by a browser: leading runs of `/` and `\` collapse to one `/`.
 */
export function sameSiteLocation(location: string): string {
  if (!location.startsWith('/')) return `/${location.replace(/^[\\/]+/, '')}`;
  return location.replace(/^[\\/]+/, '/');
}

/** The manifest key (no leading slash) for a normalised path without trailing slash. */
export function manifestKey(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 0x2f) start++;
  while (end > start && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(start, end);
}
