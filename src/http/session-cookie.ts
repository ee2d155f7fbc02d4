/**
 * The browser session of the dashboard: the `spaces_session` cookie (HttpOnly, SameSite=Lax, Secure
 * on HTTPS, no Domain attribute: the API host only, never a site's hostname) holding a session token,
 * beside `spaces_xsrf`, a token scripts of the API host's origin can read and must send back in
 * `X-CSRF-Token` on every request that changes state. The token is an HMAC of the session's id, so
 * it can't be forged without the session, and a cross-site page can neither read it nor set it.
 *
 * `Sec-Fetch-Site` is checked first: a browser that says the request came from another site (or a
 * sibling subdomain, such as a site hosted here) is refused whatever the token.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_TTL_MS } from '../domain/accounts/service.ts';
import type { Principal } from '../domain/auth/principal.ts';
import { ApiError } from '../errors/problem.ts';
import type { Services } from '../services.ts';
import { cookie, csrfFor, csrfOk, parseCookies, SESSION_COOKIE, sessionBinding } from './oauth-pages.ts';

export const XSRF_COOKIE = 'spaces_xsrf';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session token of the cookie, or null (only `sfs_` tokens: the cookie never carries a key). */
export function cookieSessionToken(req: FastifyRequest): string | null {
  const v = parseCookies(req.headers.cookie)[SESSION_COOKIE];
  return v?.startsWith('sfs_') ? v : null;
}

/** The `spaces_xsrf` cookie: like the session's, but readable by the dashboard's scripts. */
function xsrfCookie(services: Services, value: string, maxAgeS: number): string {
  return cookie(services, XSRF_COOKIE, value, maxAgeS).replace('; HttpOnly', '');
}

export function csrfTokenOf(services: Services, p: Principal): string {
  return csrfFor(services, `dash:${sessionBinding(p)}`);
}

/** Sets both cookies of a browser session. */
export function setSessionCookies(
  reply: FastifyReply,
  services: Services,
  token: string,
  p: Principal,
): void {
  const maxAge = Math.floor(SESSION_TTL_MS / 1000);
  reply.header('set-cookie', [
    cookie(services, SESSION_COOKIE, token, maxAge),
    xsrfCookie(services, csrfTokenOf(services, p), maxAge),
  ]);
}

/** Sets the CSRF cookie alone, when the session came from another sign-in page that did not set it. */
export function ensureXsrfCookie(
  req: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  p: Principal,
): void {
  const want = csrfTokenOf(services, p);
  if (parseCookies(req.headers.cookie)[XSRF_COOKIE] !== want)
    reply.header('set-cookie', xsrfCookie(services, want, Math.floor(SESSION_TTL_MS / 1000)));
}

export function clearSessionCookies(reply: FastifyReply, services: Services): void {
  reply.header('set-cookie', [cookie(services, SESSION_COOKIE, '', 0), xsrfCookie(services, '', 0)]);
}

/**
 * Refuses a state-changing request the cookie authenticated unless it came from the API host's own
 * pages: `Sec-Fetch-Site` (when the browser sends it) must be `same-origin`, and `X-CSRF-Token` must
 * be the session's token.
 */
export function checkCookieCsrf(req: FastifyRequest, services: Services, p: Principal): void {
  if (SAFE_METHODS.has(req.method)) return;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') {
    throw new ApiError(
      'csrf_failed',
      `This request came from another site (Sec-Fetch-Site: ${String(site)}); the session cookie only works for the dashboard’s own requests.`,
      { details: { secFetchSite: String(site) } },
    );
  }
  if (!csrfOk(services, `dash:${sessionBinding(p)}`, req.headers[CSRF_HEADER])) {
    throw new ApiError(
      'csrf_failed',
      'A request authenticated by the session cookie must send the X-CSRF-Token header with the value of the spaces_xsrf cookie.',
    );
  }
}
