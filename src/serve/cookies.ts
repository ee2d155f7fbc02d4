/**
 * Small cookie helpers for the site edge (RFC 6265). Cookies the service sets on site hostnames are
 * named with {@link SERVICE_COOKIE_PREFIX}, so they can be told apart from the site's own cookies
 * (and kept away from proxied upstreams).
 */
export const SERVICE_COOKIE_PREFIX = '__spaces';
/** The host-bound (`__Host-`) form of the service's cookies (visitor sessions over HTTPS). */
export const SERVICE_HOST_COOKIE_PREFIX = '__Host-spaces';

/** A cookie name the service owns, in either form: never sent to, nor set by, an upstream. */
export function isServiceCookieName(name: string): boolean {
  return name.startsWith(SERVICE_COOKIE_PREFIX) || name.startsWith(SERVICE_HOST_COOKIE_PREFIX);
}

/** Parses a `Cookie` header; the first occurrence of a name wins, values are percent-decoded when valid. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (!name || out.has(name)) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // Keep the raw value: a malformed escape is the site's business, not a reason to fail.
    }
    out.set(name, value);
  }
  return out;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export interface CookieOptions {
  maxAge?: number;
  expires?: Date;
  path?: string;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
}

/** Serializes a host-only cookie (no `Domain` attribute: it never reaches sibling hostnames). */
export function serializeCookie(name: string, value: string, opts: CookieOptions = {}): string {
  if (!TOKEN.test(name)) throw new Error(`invalid cookie name: ${name}`);
  let out = `${name}=${encodeURIComponent(value)}`;
  if (opts.maxAge !== undefined) out += `; Max-Age=${Math.floor(opts.maxAge)}`;
  if (opts.expires) out += `; Expires=${opts.expires.toUTCString()}`;
  out += `; Path=${opts.path ?? '/'}`;
  if (opts.httpOnly) out += '; HttpOnly';
  if (opts.secure) out += '; Secure';
  if (opts.sameSite) out += `; SameSite=${opts.sameSite}`;
  return out;
}

/** The `Cookie` header without the service's own cookies (for forwarding to an upstream). */
export function withoutServiceCookies(header: string | undefined): string | undefined {
  if (!header) return header;
  const kept = header
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p && !isServiceCookieName(p));
  return kept.length ? kept.join('; ') : undefined;
}
