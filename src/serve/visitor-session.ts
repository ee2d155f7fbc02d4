import type { IncomingMessage } from 'node:http';
import { signSiteToken, verifySiteToken } from './access.ts';
import { parseCookies, serializeCookie } from './cookies.ts';

/**
 * Visitor sessions a share link or a password starts: a signed, host-bound token in a `__Host-`
 * cookie (Secure, Path=/, no Domain: it reaches this hostname only). The token names the space,
 * the credential and its generation (rotation ends older ones) and the space's epoch
 * (`sharing/logout-all` ends older ones). Over plain HTTP to a name that is not `localhost` a
 * browser refuses Secure cookies, so there the cookie drops the prefix and the Secure flag.
 */
export const SESSION_COOKIE_SECURE = '__Host-spaces-session';
export const SESSION_COOKIE_PLAIN = '__spaces_session';
export const VISITOR_SESSION_TTL_MS = 7 * 24 * 3600_000;

export interface VisitorSession {
  spaceId: string;
  /** `person`: a person of the space, from their mailed sign-in link (`credentialId` is the person id). */
  kind: 'link' | 'password' | 'person';
  credentialId: string;
  generation: number;
  epoch: number;
  expiresAt: number;
}

const SESSION_PREFIX = { link: 'l', password: 'p', person: 'e' } as const;

/** Browsers treat `localhost` and its subdomains as secure contexts even over HTTP. */
function secureContext(host: string, https: boolean): boolean {
  return https || host === 'localhost' || host.endsWith('.localhost');
}

export function sessionCookie(
  secret: Buffer,
  host: string,
  https: boolean,
  s: Omit<VisitorSession, 'expiresAt'>,
  now: number,
): string {
  const subject = `${SESSION_PREFIX[s.kind]}:${s.credentialId}:${s.generation}:${s.epoch}`;
  const token = signSiteToken(secret, 'visitor', host, s.spaceId, subject, now + VISITOR_SESSION_TTL_MS);
  const secure = secureContext(host, https);
  return serializeCookie(secure ? SESSION_COOKIE_SECURE : SESSION_COOKIE_PLAIN, token, {
    path: '/',
    httpOnly: true,
    secure,
    sameSite: 'Lax',
    maxAge: VISITOR_SESSION_TTL_MS / 1000,
  });
}

/** Verified tokens by their text (bounded): a session verifies its HMAC once, not per request. */
const verified = new Map<string, VisitorSession | null>();

export function readSession(
  secret: Buffer,
  host: string,
  cookieHeader: string | undefined,
  now: number,
): VisitorSession | null {
  if (!cookieHeader || (!cookieHeader.includes('spaces_session') && !cookieHeader.includes('spaces-session')))
    return null;
  // A client sends the same Cookie header request after request: its verified session is remembered
  // by the whole header, so the header is parsed and the token checked once, not per request.
  const headerKey = `${host}\n${cookieHeader}`;
  let s = verified.get(headerKey);
  if (s !== undefined) return s && s.expiresAt > now ? s : null;
  const cookies = parseCookies(cookieHeader);
  const token = cookies.get(SESSION_COOKIE_SECURE) ?? cookies.get(SESSION_COOKIE_PLAIN);
  if (!token) return null;
  const key = `${host}|${token}`;
  s = verified.get(key);
  if (s === undefined) {
    const t = verifySiteToken(secret, 'visitor', host, token, now);
    const m = t ? /^([lpe]):([0-9a-z_]{1,64}):(\d{1,9}):(\d{1,12})$/.exec(t.subject) : null;
    s =
      t && m
        ? {
            spaceId: t.spaceId,
            kind: m[1] === 'l' ? 'link' : m[1] === 'e' ? 'person' : 'password',
            credentialId: m[2]!,
            generation: Number(m[3]),
            epoch: Number(m[4]),
            expiresAt: t.expiresAt,
          }
        : null;
    if (verified.size >= 10_000) verified.clear();
    verified.set(key, s);
  }
  if (headerKey.length <= 1024) verified.set(headerKey, s);
  return s && s.expiresAt > now ? s : null;
}

/** The machine token a request carries in a header (`X-Spaces-Access-Token` or `Authorization: Bearer`). */
export function machineToken(req: {
  headers: IncomingMessage['headers'] | Record<string, string>;
}): string | null {
  const h = req.headers['x-spaces-access-token'];
  if (typeof h === 'string' && h) return h.trim();
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer smc_')) return auth.slice(7).trim();
  return null;
}
