import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Requests this server sends to its own site edge — crons (behaviour §4.8) — carry a secret only this
 * process knows. Such a request passes the site's access control (a private site's crons run) and
 * keeps `x-service-cron`; on any other request `x-service-cron` is removed before anything of the
 * site sees it (a visitor can't pose as the scheduler). The secret header itself never reaches the
 * site: it is removed from the request either way.
 */

export const PLATFORM_HEADER = 'x-spaces-platform-request';
export const CRON_HEADER = 'x-service-cron';

const SECRET = Buffer.from(randomBytes(32).toString('hex'));
const admitted = new WeakSet<IncomingMessage>();

/** The header a platform request sends (this process's own requests to its edge only). */
export function platformRequestHeaders(): Record<string, string> {
  return { [PLATFORM_HEADER]: SECRET.toString() };
}

function withoutHeaders(raw: string[], names: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (names.includes(raw[i]!.toLowerCase())) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/**
 * Decides, once per request, whether it is this server's own (true) and removes the headers a
 * visitor may not send. Costs two property lookups when neither header is there.
 */
export function admitPlatformRequest(req: IncomingMessage): boolean {
  if (admitted.has(req)) return true;
  const h = req.headers;
  const claim = h[PLATFORM_HEADER];
  if (claim === undefined && h[CRON_HEADER] === undefined) return false;
  const given = typeof claim === 'string' ? Buffer.from(claim) : null;
  const ok = given !== null && given.length === SECRET.length && timingSafeEqual(given, SECRET);
  delete h[PLATFORM_HEADER];
  if (!ok) delete h[CRON_HEADER];
  req.rawHeaders = withoutHeaders(req.rawHeaders, ok ? [PLATFORM_HEADER] : [PLATFORM_HEADER, CRON_HEADER]);
  if (ok) admitted.add(req);
  return ok;
}

/** A request {@link admitPlatformRequest} let in as this server's own. */
export function isPlatformRequest(req: IncomingMessage): boolean {
  return admitted.has(req);
}
