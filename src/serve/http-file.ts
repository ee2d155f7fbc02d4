import { mediaType } from '../site/compress.ts';
import type { ManifestEntry } from '../site/types.ts';
import type { Injection } from './inject.ts';

/**
 * The HTTP of serving a file, as pure functions: Cache-Control policy, Content-Type charset, strong
 * ETags, Accept-Encoding negotiation, If-None-Match, single byte ranges, and laying a routing
 * decision's headers over a file's. The responder (respond.ts) puts them on the wire.
 */

export const CACHE_HTML = 'public, max-age=0, must-revalidate';
export const CACHE_REVALIDATE = 'public, max-age=0, must-revalidate';
export const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';
/** The only methods a static file answers; everything else (OPTIONS included) gets 405. */
export const ALLOW_STATIC = 'GET, HEAD';

export type Variant = 'identity' | 'br' | 'gzip';

/** Extra response headers decided by routing (`_headers`, config `headers`, cache bypass). */
export type ExtraHeaders =
  | Readonly<Record<string, string | readonly string[]>>
  | ReadonlyArray<readonly [string, string]>;

export interface ServeFileOptions {
  entry: ManifestEntry;
  /** The version's creation time: the file's Last-Modified. */
  lastModified: Date;
  /**
   * Response status. 200 enables conditional requests and ranges; any other status (a custom 404
   * page, a `{path,status}` fallback) is served whole, without 304/206.
   */
  status?: number;
  /**
   * Headers from the routing decision; `Cache-Control` here replaces the default policy. The merged
   * result is memoised per object, so pass a fresh object rather than mutating one already used.
   */
  headers?: ExtraHeaders | null;
  /** Snippets to inject into HTML (ignored for other types). */
  injection?: Injection | null;
}

/** Headers an extra-header set may never touch: they frame the body or belong to the validators. */
const PROTECTED = new Set([
  'content-length',
  'content-encoding',
  'content-range',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'accept-ranges',
  'etag',
  'last-modified',
  'trailer',
  'upgrade',
]);

const HASHED_NAME = /[.-]([0-9a-f]{8,}|[A-Za-z0-9_]{8,})\.[A-Za-z0-9]+$/;
const HEX = /^[0-9a-f]+$/;

/**
 * Whether a path looks content-hashed (`app.3f9a2b1c.js`, `index-BWq3k9Xy.js`): a `.` or `-` then a
 * token of 8+ characters before the extension that is lowercase hex or mixes letters and digits.
 * Such URLs change whenever their content does, so they can be cached for a year.
 */
export function looksHashed(path: string): boolean {
  const slash = path.lastIndexOf('/');
  const base = slash === -1 ? path : path.slice(slash + 1);
  const m = HASHED_NAME.exec(base);
  if (!m) return false;
  const token = m[1];
  if (HEX.test(token)) return /[0-9]/.test(token) || token.length >= 12;
  return /[0-9]/.test(token) && /[A-Za-z]/.test(token);
}

export function isHtmlType(contentType: string): boolean {
  const t = mediaType(contentType);
  return t === 'text/html' || t === 'application/xhtml+xml';
}

/** The default Cache-Control for a file: HTML revalidates, hashed assets are immutable, the rest revalidates. */
export function defaultCacheControl(path: string, contentType: string): string {
  if (isHtmlType(contentType)) return CACHE_HTML;
  return looksHashed(path) ? CACHE_IMMUTABLE : CACHE_REVALIDATE;
}

const TEXTUAL_APPLICATION = new Set([
  'application/javascript',
  'application/json',
  'application/ld+json',
  'application/manifest+json',
  'application/xml',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/geo+json',
  'application/x-javascript',
  'application/ecmascript',
  'application/toml',
  'application/yaml',
  'image/svg+xml',
]);

/** Adds `charset=utf-8` to text types that don't name a charset. */
export function withCharset(contentType: string): string {
  if (/;\s*charset=/i.test(contentType)) return contentType;
  const t = mediaType(contentType);
  if (t.startsWith('text/') || TEXTUAL_APPLICATION.has(t) || t.endsWith('+json') || t.endsWith('+xml')) {
    return `${contentType}; charset=utf-8`;
  }
  return contentType;
}

/** The strong validator of one variant of an entry. */
export function etagOf(entry: ManifestEntry, variant: Variant): string {
  if (variant === 'br') return `"${entry.sha256}.br"`;
  if (variant === 'gzip') return `"${entry.sha256}.gz"`;
  return `"${entry.sha256}"`;
}

/**
 * Picks the encoding among what exists (RFC 9110 §12.5.3): highest q wins, ties prefer br, then gzip,
 * then identity. `identity` is acceptable unless refused with `identity;q=0` or `*;q=0`. When nothing
 * is acceptable the identity is sent anyway rather than a 406.
 */
export function negotiateEncoding(
  header: string | undefined,
  available: { br?: unknown; gzip?: unknown } | undefined,
): Variant {
  if (!header || !available || (!available.br && !available.gzip)) return 'identity';
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [rawName, ...params] = part.split(';');
    let name = rawName.trim().toLowerCase();
    if (!name) continue;
    if (name === 'x-gzip') name = 'gzip';
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9](?:\.[0-9]{0,3})?)\s*$/i.exec(p);
      if (m) weight = Math.min(1, Number(m[1]));
      else if (/^\s*q\s*=/i.test(p)) weight = Number.NaN;
    }
    if (Number.isNaN(weight)) continue;
    if (!q.has(name)) q.set(name, weight);
  }
  const star = q.get('*');
  const qOf = (c: string): number => {
    const v = q.get(c);
    if (v !== undefined) return v;
    if (star !== undefined) return star;
    return c === 'identity' ? 0.001 : 0;
  };
  let best: Variant = 'identity';
  let bestQ = qOf('identity');
  if (available.gzip) {
    const g = qOf('gzip');
    if (g > 0 && g >= bestQ) {
      best = 'gzip';
      bestQ = g;
    }
  }
  if (available.br) {
    const b = qOf('br');
    if (b > 0 && b >= bestQ) best = 'br';
  }
  return best;
}

/** `If-None-Match` with the weak comparison RFC 9110 §13.1.2 requires. */
export function ifNoneMatchHits(header: string, etag: string): boolean {
  // The usual case: a browser sends back exactly the one ETag it was given.
  if (header === etag) return true;
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  const re = /(?:W\/)?("[^"]*")/g;
  for (let m = re.exec(trimmed); m !== null; m = re.exec(trimmed)) {
    if (m[1] === opaque) return true;
  }
  return false;
}

export type RangeResult = { start: number; end: number } | 'unsatisfiable' | null;

/**
 * One `bytes=` range (RFC 9110 §14.1.2). `null` means "ignore the header, send 200": syntax errors,
 * other units and multiple ranges (we don't build multipart/byteranges).
 */
export function parseRange(header: string, size: number): RangeResult {
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!m) return null;
  const parts = m[1].split(',').filter((p) => p.trim() !== '');
  if (parts.length !== 1) return null;
  const r = /^\s*(\d*)\s*-\s*(\d*)\s*$/.exec(parts[0]);
  if (!r) return null;
  const [, a, b] = r;
  if (a === '' && b === '') return null;
  if (a === '') {
    const n = Number(b);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  if (b !== '' && Number(b) < start) return null;
  if (start >= size) return 'unsatisfiable';
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  return { start, end };
}

export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

export function normalizeExtra(h: ExtraHeaders): string[] | null {
  const out: string[] = [];
  if (Array.isArray(h)) {
    for (const [name, value] of h as ReadonlyArray<readonly [string, string]>) {
      if (!PROTECTED.has(name.toLowerCase())) out.push(name, value);
    }
  } else {
    for (const [name, value] of Object.entries(h as Record<string, string | readonly string[]>)) {
      if (PROTECTED.has(name.toLowerCase())) continue;
      if (typeof value === 'string') out.push(name, value);
      else for (const one of value) out.push(name, one);
    }
  }
  return out.length ? out : null;
}

/**
 * Base headers with the routing decision's headers laid over them: a name the extras set replaces
 * the base value (so `_headers` `Cache-Control` wins), except `Vary`, which is combined.
 */
export function merge(base: string[], extra: string[] | null): string[] {
  if (!extra) return base.slice();
  const names = new Set<string>();
  for (let i = 0; i < extra.length; i += 2) names.add(extra[i].toLowerCase());
  const out: string[] = [];
  let vary: string | null = null;
  for (let i = 0; i < base.length; i += 2) {
    const lower = base[i].toLowerCase();
    if (lower === 'vary' && names.has('vary')) {
      vary = base[i + 1];
      continue;
    }
    if (!names.has(lower)) out.push(base[i], base[i + 1]);
  }
  for (let i = 0; i < extra.length; i += 2) {
    if (vary && extra[i].toLowerCase() === 'vary') {
      out.push('Vary', `${vary}, ${extra[i + 1]}`);
      vary = null;
    } else out.push(extra[i], extra[i + 1]);
  }
  return out;
}
