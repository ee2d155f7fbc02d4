/**
 * Source patterns for redirects, rewrites and header rules, compiled to plain data and matched
 * segment by segment. No regular expressions are built from user input, so no pattern can backtrack
 * catastrophically: a path match is linear in the number of segments, a wildcard match is the classic
 * two-pointer glob (one backtrack point), bounded by pattern × input length.
 */
import {
  encodeCapture,
  encodeFragment,
  encodePath,
  encodeQueryValue,
  encodeSegment,
  hasDotSegment,
} from './path.ts';

/** One path segment of a pattern: a literal or a `:name` placeholder. */
export type PatternSegment = { lit: string } | { cap: string };

/** One label group of a host pattern. */
export type HostLabel = { lit: string } | { cap: string } | { glob: string };

export interface HostPattern {
  /** Leading `*` label: matches one or more labels. */
  leadingWildcard: boolean;
  labels: HostLabel[];
}

export interface PathPattern {
  host: HostPattern | null;
  segments: PatternSegment[];
  /** Set when the pattern ends in `*`: the literal text before the `*` in the last segment. */
  splat: { prefix: string } | null;
}

export type Captures = Record<string, string>;

/** The part of a URL destination a capture lands in; it decides how the captured value is encoded. */
export type CapturePosition = 'host' | 'path' | 'query' | 'fragment';

/** A capture reference; `at` and `splat` are set by {@link positionCaptures} for URL destinations. */
export interface CaptureRef {
  cap: string;
  at?: CapturePosition;
  /** The source's path splat in the path: it keeps its `/` separators. */
  splat?: true;
}

/** A destination or header value split at its capture references. */
export type Template = Array<string | CaptureRef>;

/** A URL destination with every capture marked with its position. */
export interface DestinationTemplate {
  template: Template;
  /** The author wrote a query (a `?` before any `#`): the request's own query is then not forwarded. */
  hasQuery: boolean;
}

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export class PatternError extends Error {}

function parseHostPattern(host: string): HostPattern {
  if (host.length === 0 || host.length > 253) throw new PatternError('the host pattern is empty or too long');
  if (/[:@[\]]/.test(host.replace(/(^|\.):[A-Za-z][A-Za-z0-9_]*(?=\.|$)/g, '$1x'))) {
    throw new PatternError('host patterns take no port, credentials or IP literals');
  }
  const raw = host.toLowerCase().split('.');
  let leadingWildcard = false;
  if (raw[0] === '*') {
    leadingWildcard = true;
    raw.shift();
  }
  if (raw.length === 0) throw new PatternError('the host pattern needs at least one label after `*`');
  const labels: HostLabel[] = raw.map((label) => {
    if (label === '') throw new PatternError('the host pattern has an empty label');
    if (label.startsWith(':')) {
      const name = label.slice(1);
      if (!NAME.test(name)) throw new PatternError(`\`${label}\` is not a valid placeholder`);
      return { cap: name };
    }
    if (!/^[a-z0-9*-]+$/.test(label)) throw new PatternError(`\`${label}\` is not a valid host label`);
    return label.includes('*') ? { glob: label } : { lit: label };
  });
  return { leadingWildcard, labels };
}

export interface PatternOptions {
  /** `_headers` matchers allow `*` only as a whole last segment, not inside one. */
  splatWholeSegmentOnly?: boolean;
}

/**
 * Compile a source: an absolute path (`/blog/:slug/*`) or an http(s) URL whose host may use `*`
 * and `:name` labels (`https://:lang.example.com/*`).
 */
export function compilePattern(source: string, opts: PatternOptions = {}): PathPattern {
  let host: HostPattern | null = null;
  let path = source;
  const url = /^https?:\/\/([^/?#]+)(\/[^?#]*)?$/i.exec(source);
  if (url) {
    host = parseHostPattern(url[1]);
    path = url[2] ?? '/';
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(source) || source.startsWith('//')) {
    throw new PatternError('a source is an absolute path or an http(s) URL');
  }
  if (!path.startsWith('/')) throw new PatternError('a source path starts with `/`');
  if (/[?#\s\\]/.test(path))
    throw new PatternError('a source path has no query, fragment, space or backslash');
  let decoded: string;
  try {
    decoded = decodeURIComponent(path).normalize('NFC');
  } catch {
    throw new PatternError('the source path has bad percent-encoding');
  }
  const parts = decoded.split('/').filter((p) => p !== '');
  const segments: PatternSegment[] = [];
  let splat: { prefix: string } | null = null;
  const names = new Set<string>();
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === '.' || part === '..') throw new PatternError('a source path has no `.` or `..` segments');
    const star = part.indexOf('*');
    if (star >= 0) {
      if (star !== part.length - 1 || i !== parts.length - 1) {
        throw new PatternError('`*` may appear once, at the end of the pattern');
      }
      const prefix = part.slice(0, -1);
      if (prefix.startsWith(':')) throw new PatternError('a segment cannot hold both a placeholder and `*`');
      if (opts.splatWholeSegmentOnly && prefix !== '') {
        throw new PatternError('`*` in a path must be a whole segment');
      }
      splat = { prefix };
      if (names.has('splat')) throw new PatternError('`:splat` is already a placeholder in this pattern');
      names.add('splat');
      continue;
    }
    if (part.startsWith(':')) {
      const name = part.slice(1);
      if (!NAME.test(name)) throw new PatternError(`\`${part}\` is not a valid placeholder (letter first)`);
      if (names.has(name)) throw new PatternError(`placeholder \`${part}\` appears twice`);
      names.add(name);
      segments.push({ cap: name });
    } else {
      segments.push({ lit: part });
    }
  }
  if (host) {
    for (const l of host.labels) {
      if ('cap' in l) {
        if (names.has(l.cap)) throw new PatternError(`placeholder \`:${l.cap}\` appears twice`);
        names.add(l.cap);
      }
    }
  }
  return { host, segments, splat };
}

/** Names a pattern captures (placeholders, `splat`). */
export function captureNames(p: PathPattern): string[] {
  const names: string[] = [];
  if (p.host) for (const l of p.host.labels) if ('cap' in l) names.push(l.cap);
  for (const s of p.segments) if ('cap' in s) names.push(s.cap);
  if (p.splat) names.push('splat');
  return names;
}

/** A static pattern is an exact path without host, placeholders or splat. */
export function isStatic(p: PathPattern): boolean {
  return !p.host && !p.splat && p.segments.every((s) => 'lit' in s);
}

/** The exact path of a static pattern, without trailing slash (`/` for the root). */
export function staticPath(p: PathPattern): string {
  return `/${p.segments.map((s) => ('lit' in s ? s.lit : '')).join('/')}`;
}

/** Split a normalised path into segments, ignoring a trailing slash. */
export function pathSegments(path: string): string[] {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 0x2f) start++;
  while (end > start && path.charCodeAt(end - 1) === 0x2f) end--;
  return start === end ? [] : path.slice(start, end).split('/');
}

/** Shell-style `*` wildcard over a whole string; linear in practice, never exponential. */
export function wildcardMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === '*') {
      starP = p++;
      starT = t;
    } else if (p < pattern.length && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

function matchHost(hp: HostPattern, host: string, caps: Captures): boolean {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  const fixed = hp.labels.length;
  if (hp.leadingWildcard ? labels.length <= fixed : labels.length !== fixed) return false;
  const offset = labels.length - fixed;
  for (let i = 0; i < fixed; i++) {
    const pl = hp.labels[i];
    const l = labels[offset + i];
    if ('lit' in pl) {
      if (pl.lit !== l) return false;
    } else if ('cap' in pl) {
      // Host captures can land in header values: only plain DNS label characters qualify.
      if (!/^[a-z0-9-]+$/.test(l)) return false;
      caps[pl.cap] = l;
    } else if (!wildcardMatch(pl.glob, l)) return false;
  }
  return true;
}

/**
 * Match a normalised path (and host) against a pattern. A trailing slash on the request is ignored
 * for matching; a splat keeps it in its capture. Returns the captures or null.
 */
export function matchPattern(
  p: PathPattern,
  path: string,
  host: string | null,
  segments?: readonly string[],
): Captures | null {
  const n = p.segments.length;
  const segs = segments ?? pathSegments(path);
  // Cheapest rejection first: most rules fail on the segment count or the first literal.
  if (p.splat ? segs.length < n : segs.length !== n) return null;
  if (n > 0) {
    const first = p.segments[0];
    if ('lit' in first && first.lit !== segs[0]) return null;
  }
  const caps: Captures = {};
  if (p.host) {
    if (!host || !matchHost(p.host, host.replace(/:\d+$/, ''), caps)) return null;
  }
  for (let i = 0; i < n; i++) {
    const ps = p.segments[i];
    if ('lit' in ps) {
      if (ps.lit !== segs[i]) return null;
    } else caps[ps.cap] = segs[i];
  }
  if (p.splat) {
    const rest = segs.slice(n).join('/');
    if (!rest.startsWith(p.splat.prefix)) {
      // `/news/*` also matches `/news` itself: an empty rest and an empty prefix.
      return null;
    }
    const tail = rest.slice(p.splat.prefix.length);
    caps.splat = tail !== '' && path.endsWith('/') && path !== '/' ? `${tail}/` : tail;
  }
  return caps;
}

/**
 * Split a destination or header value at `:name` references to known captures. Unknown `:words`
 * (ports, `mailto:`) stay literal.
 */
export function compileTemplate(text: string, names: readonly string[]): Template {
  const known = new Set(names);
  const out: Template = [];
  let lit = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === ':') {
      const m = /^[A-Za-z][A-Za-z0-9_]*/.exec(text.slice(i + 1, i + 65));
      if (m && known.has(m[0])) {
        if (lit) out.push(lit);
        lit = '';
        out.push({ cap: m[0] });
        i += 1 + m[0].length;
        continue;
      }
    }
    lit += text[i++];
  }
  if (lit) out.push(lit);
  return out;
}

/** Does the template reference any capture? */
export function templateHasCaptures(t: Template): boolean {
  return t.some((p) => typeof p !== 'string');
}

/**
 * Fill a header-value template. Captured values are percent-encoded as path segments
 * (`encode: true`, splats keep `/`) or inserted raw.
 */
export function fillTemplate(t: Template, caps: Captures, encode: boolean): string {
  let out = '';
  for (const part of t) {
    if (typeof part === 'string') out += part;
    else {
      const v = caps[part.cap] ?? '';
      out += encode ? encodeCapture(v, part.cap === 'splat') : v;
    }
  }
  return out;
}

const SCHEME = /^https?:\/\//i;

/**
 * Mark each capture of a URL destination with the part of the URL it lands in. Only the author's
 * literal text moves from one part to the next (`scheme://` opens the host, then `/` the path, `?`
 * the query, `#` the fragment; a `?` inside the fragment is part of it), never a captured value:
 * values are encoded for their part, so none can open another. `pathSplat`: the source ends in `*`.
 */
export function positionCaptures(t: Template, pathSplat: boolean): DestinationTemplate {
  const template: Template = [];
  let at: CapturePosition = 'path';
  let hasQuery = false;
  for (let i = 0; i < t.length; i++) {
    const part = t[i];
    if (typeof part !== 'string') {
      template.push(
        part.cap === 'splat' && pathSplat && at === 'path'
          ? { cap: part.cap, at, splat: true }
          : { cap: part.cap, at },
      );
      continue;
    }
    template.push(part);
    let k = 0;
    if (i === 0) {
      const scheme = SCHEME.exec(part);
      if (scheme) {
        at = 'host';
        k = scheme[0].length;
      }
    }
    for (; k < part.length && at !== 'fragment'; k++) {
      const c = part[k];
      if (c === '#') at = 'fragment';
      else if (c === '?' && at !== 'query') {
        at = 'query';
        hasQuery = true;
      } else if (c === '/' && at === 'host') at = 'path';
    }
  }
  return { template, hasQuery };
}

/** Split a destination at its capture references and mark their positions. */
export function compileDestination(
  text: string,
  names: readonly string[],
  pathSplat: boolean,
): DestinationTemplate {
  return positionCaptures(compileTemplate(text, names), pathSplat);
}

/** The path of a destination or location: after any `scheme://host`, before any `?` or `#`. */
export function destinationPath(url: string): string {
  return /^(?:https?:\/\/[^/?#]*)?([^?#]*)/i.exec(url)![1];
}

/** A capture in a host: only the characters of a DNS label, so it can't add a label, port or user. */
const HOST_LABEL_CHARS = /^[A-Za-z0-9-]*$/;

/**
 * Fill a destination marked by {@link positionCaptures}. Each value is encoded for its position:
 * - `host`: letters, digits and `-` only, anything else refuses — a capture never moves the
 *   destination to another host (`.evil.com`, `@evil.com`, `//`, a backslash);
 * - `path`: one segment (`/`, `?`, `#` and everything outside RFC 3986 `pchar` encoded); the source's
 *   splat keeps its `/` separators;
 * - `query`: a parameter name or value: unlike in a segment, `&`, `=`, `+` and `;` are encoded
 *   too (`/` is kept);
 * - `fragment`: `#` and everything outside `pchar`, `/`, `?` encoded.
 * `%` is always encoded: a decoded value goes back in exactly once. Null when a value is refused,
 * or when the filled path has a `.` or `..` segment (a URL parser would climb out of the path the
 * author wrote; literal dot segments are refused at compile time, so such a segment is a capture's).
 */
export function fillDestination(t: Template, caps: Captures): string | null {
  let out = '';
  let pathCapture = false;
  for (const part of t) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const v = caps[part.cap] ?? '';
    switch (part.at) {
      case 'host':
        if (!HOST_LABEL_CHARS.test(v)) return null;
        out += v;
        break;
      case 'query':
        out += encodeQueryValue(v);
        break;
      case 'fragment':
        out += encodeFragment(v);
        break;
      default:
        pathCapture = true;
        out += part.splat ? encodePath(v) : encodeSegment(v);
    }
  }
  if (pathCapture && hasDotSegment(destinationPath(out))) return null;
  return out;
}
