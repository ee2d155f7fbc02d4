import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed, host-bound tokens the edge uses for visitor access:
 * - `handoff`: minted by the API after it checked the signed-in person may see the space; carried
 *   once in a redirect to `https://<site>/__service/access?token=…` (short-lived);
 * - `access`: the site's own host-only cookie set from a valid handoff;
 * - `door`: the cookie the `/__/<space key>` door of an anonymous space sets for its publisher;
 * - `door-handoff`: the short handoff the open-link broker answers (open-link.ts), turned into `door`;
 * - `visitor`: a visitor session a share link or password started (`visitor-session.ts`).
 * Format: `<purpose>.<spaceId>.<subject>.<expiry ms>.<hmac>`; subject is a user id or `-`.
 */
export type SiteTokenPurpose = 'handoff' | 'access' | 'door' | 'door-handoff' | 'visitor';

export const ACCESS_COOKIE = '__spaces_access';
export const DOOR_COOKIE = '__spaces_door';
/** The door cookie over HTTPS: host-bound (`__Host-`: Secure, Path=/, no Domain). */
export const DOOR_COOKIE_SECURE = '__Host-spaces-door';
export const HANDOFF_TTL_MS = 60_000;
export const ACCESS_TTL_MS = 12 * 3600_000;
export const DOOR_TTL_MS = 7 * 24 * 3600_000;

function mac(secret: Buffer, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

export function signSiteToken(
  secret: Buffer,
  purpose: SiteTokenPurpose,
  host: string,
  spaceId: string,
  subject: string,
  expiresAt: number,
): string {
  const body = `${purpose}.${spaceId}.${subject}.${expiresAt}`;
  return `${body}.${mac(secret, `${body}|${host.toLowerCase()}`)}`;
}

export interface VerifiedSiteToken {
  spaceId: string;
  subject: string;
  expiresAt: number;
}

export function verifySiteToken(
  secret: Buffer,
  purpose: SiteTokenPurpose,
  host: string,
  token: string | undefined,
  now: number,
): VerifiedSiteToken | null {
  if (!token || token.length > 512) return null;
  const parts = token.split('.');
  if (parts.length !== 5 || parts[0] !== purpose) return null;
  const [, spaceId, subject, exp, sig] = parts as [string, string, string, string, string];
  if (!/^\d{1,16}$/.test(exp)) return null;
  const expected = Buffer.from(mac(secret, `${parts.slice(0, 4).join('.')}|${host.toLowerCase()}`));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  const expiresAt = Number(exp);
  if (expiresAt <= now) return null;
  return { spaceId, subject, expiresAt };
}
