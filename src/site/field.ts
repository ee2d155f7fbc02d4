/**
 * HTTP field syntax (RFC 9110 §5.1, §5.5): the one grammar every header name and value passes
 * before it can reach a response — whether an author wrote it (`_headers`, config `headers`, redirect
 * destinations), a visitor's URL supplied part of it (captures, return paths) or an upstream sent it.
 *
 * Header strings are written one byte per UTF-16 code unit (latin1), by node:http and by the fast
 * lane alike. A code unit above U+00FF has no such byte: `Buffer.from(…, 'latin1')` keeps its low
 * byte, so U+010D U+010A would go out as CR LF. The grammar is therefore checked on the string, code
 * unit by code unit, before anything is written.
 */
import { domainToASCII } from 'node:url';
import type { Captures, Template } from './match.ts';

/** field-name = token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Anything but field-vchar (VCHAR and obs-text 0x80–0xFF), SP and HTAB. */
const NOT_FIELD_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

export function isFieldName(name: string): boolean {
  return TOKEN.test(name);
}

/** Whether every code unit of `value` is a byte a field value may carry (no CR, LF, NUL, > U+00FF). */
export function isFieldValue(value: string): boolean {
  return !NOT_FIELD_CHAR.test(value);
}

/** Whether a flat `[name, value, …]` list can be written as it is. */
export function isFieldList(headers: readonly string[]): boolean {
  for (let i = 0; i < headers.length; i += 2) {
    if (!TOKEN.test(headers[i]!) || NOT_FIELD_CHAR.test(headers[i + 1]!)) return false;
  }
  return true;
}

/**
 * What an author may write in a header value, stricter than the wire grammar: printable ASCII,
 * SP/HTAB inside, and Latin-1 letters and signs (U+00A0–U+00FF, sent as their one obs-text byte).
 * C1 controls (U+0080–U+009F) are control characters here, not text.
 */
const NOT_AUTHOR_CHAR = /[^\t\x20-\x7e\xa0-\xff]/;

function codePointLabel(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** An empty value, or only SP/HTAB: refused from authors (as Netlify and Cloudflare do). */
export function isBlankValue(value: string): boolean {
  return /^[ \t]*$/.test(value);
}

/**
 * Why an author's header value cannot be served, as the end of a sentence ("… contains a NUL
 * character."), or null. Characters beyond Latin-1 are refused rather than re-encoded: a header has
 * no charset, and any guess (UTF-8 bytes read as Latin-1 by the browser) would serve something the
 * author did not write.
 */
export function authorValueProblem(value: string): string | null {
  const m = NOT_AUTHOR_CHAR.exec(value);
  if (!m) return null;
  const cp = value.codePointAt(m.index)!;
  if (cp === 0x0d || cp === 0x0a) return 'contains a line break (a value is one line)';
  if (cp === 0) return 'contains a NUL character';
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return `contains the control character ${codePointLabel(cp)}`;
  if (cp === 0x2028 || cp === 0x2029) return `contains a Unicode line separator (${codePointLabel(cp)})`;
  const shown = cp >= 0xd800 && cp <= 0xdfff ? '' : ` \`${String.fromCodePoint(cp)}\``;
  return `contains${shown} (${codePointLabel(cp)}), which is beyond Latin-1: a header value carries one byte per character`;
}

export const AUTHOR_VALUE_FIX =
  "Write the value in ASCII (Latin-1 letters are allowed): percent-encode URLs, and use an RFC 8187 parameter (`filename*=UTF-8''…`) for other text.";

/** Bytes a URL keeps as they are in a `Location`: visible ASCII. */
const URL_SAFE = /^[\x21-\x7e]*$/;

function percentEncode(ch: string): string {
  let out = '';
  for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/**
 * A URL as a `Location` field value: every character that is not visible ASCII (controls, spaces,
 * anything non-ASCII) is percent-encoded as UTF-8, as browsers do with the URLs they send. A URL
 * that is already plain ASCII — every URL the rules build — comes back as it is.
 */
export function locationValue(url: string): string {
  if (URL_SAFE.test(url)) return url;
  let out = '';
  for (const ch of url) out += ch.length === 1 && ch >= '\x21' && ch <= '\x7e' ? ch : percentEncode(ch);
  return out;
}

/**
 * A destination URL in the ASCII form browsers send for it: an internationalised host in punycode,
 * everything else non-ASCII percent-encoded as UTF-8. Null when a host label has no ASCII form.
 */
export function asciiUrl(url: string): string | null {
  if (URL_SAFE.test(url)) return url;
  const m = /^(https?:\/\/)([^/?#]*)([\s\S]*)$/i.exec(url);
  if (!m) return locationValue(url);
  const labels = m[2]!.split('.');
  for (let i = 0; i < labels.length; i++) {
    if (/^[\x00-\x7f]*$/.test(labels[i]!)) continue;
    const ascii = domainToASCII(labels[i]!);
    if (!ascii) return null;
    labels[i] = ascii;
  }
  return `${m[1]}${labels.join('.')}${locationValue(m[3]!)}`;
}

/** Capture characters a header value keeps as they are: RFC 3986 unreserved. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * A captured piece of the request URL as it goes into a header value: percent-encoded UTF-8 except
 * the unreserved characters (and `/` in a splat). The delimiters of header syntax — `,` between list
 * members, `;` and `=` of parameters, quotes — are encoded too, so a visitor's URL can neither add
 * bytes a header refuses nor a parameter such as a cookie's `Domain`.
 */
export function encodeHeaderCapture(value: string, keepSlash: boolean): string {
  let out = '';
  for (const ch of value) {
    out += UNRESERVED.test(ch) || (keepSlash && ch === '/') ? ch : percentEncode(ch);
  }
  return out;
}

/** A header value template filled with the request's captures (see {@link encodeHeaderCapture}). */
export function fillHeaderValue(t: Template, caps: Captures): string {
  let out = '';
  for (const part of t) {
    if (typeof part === 'string') out += part;
    else out += encodeHeaderCapture(caps[part.cap] ?? '', part.cap === 'splat');
  }
  return out;
}
