import type { Services } from '../services.ts';
import type { RequestContext } from './request-context.ts';

/**
 * The visitor token the edge hands a site's own backend (behaviour §3.4): every request it forwards
 * through a proxy rewrite or to the version's functions carries `X-Service-Authorization: Bearer
 * <token>`, minted for this visitor (and handed to its requests of the next 5 seconds): issuer (the
 * server's public URL), audience (the space id), the site host, purpose `backend`, claim version,
 * who the visitor is and the grant that let them in, and a short expiry. A header of that name sent by the visitor never reaches the backend: the edge's own
 * replaces it (proxy.ts drops the inbound one; the functions runtime overrides it).
 */

export const VISITOR_TOKEN_HEADER = 'x-service-authorization';
export const BACKEND_PURPOSE = 'backend';
/** Short: the token covers one forwarded request, not a session. */
export const BACKEND_TOKEN_TTL_S = 60;

/** Who the visitor is, as the token's `sub` says it: an account, the grant that let them in, or `public`. */
export function visitorSubject(ctx: RequestContext): { subject: string; grantId?: string; email?: string } {
  const grant = ctx.grant;
  const visitor = ctx.gate?.visitor;
  const email = visitor?.emailVerified && visitor.email ? visitor.email : undefined;
  if (visitor?.userId)
    return { subject: visitor.userId, ...(grant ? { grantId: grant.id } : {}), ...(email ? { email } : {}) };
  if (grant && grant.audience.type !== 'public')
    return { subject: grant.id, grantId: grant.id, ...(email ? { email } : {}) };
  return { subject: 'public', ...(grant ? { grantId: grant.id } : {}) };
}

/**
 * How long a minted token is handed to further requests of the same visitor (same space, host, subject,
 * grant, role and e-mail): signing is most of a function request's own cost, and a token a backend
 * holds is good for its 60 s anyway, so reusing it for 5 s gives a backend nothing it did not have.
 */
export const BACKEND_TOKEN_REUSE_MS = 5_000;
const MAX_REUSED = 1024;
const reused = new WeakMap<Services, Map<string, { header: string; at: number }>>();

/** `Bearer <token>` for the request the edge is about to forward. */
export function backendAuthorization(services: Services, ctx: RequestContext): string {
  const who = visitorSubject(ctx);
  const now = services.clock.now().getTime();
  const key = `${ctx.space.id}|${ctx.hostname}|${who.subject}|${who.grantId ?? ''}|${ctx.grant?.role ?? ''}|${who.email ?? ''}`;
  let cache = reused.get(services);
  if (!cache) {
    cache = new Map();
    reused.set(services, cache);
  }
  const hit = cache.get(key);
  if (hit && now - hit.at >= 0 && now - hit.at < BACKEND_TOKEN_REUSE_MS) return hit.header;
  const { token } = services.visitorTokens.mint(
    {
      spaceId: ctx.space.id,
      host: ctx.hostname,
      purpose: BACKEND_PURPOSE,
      subject: who.subject,
      ...(ctx.grant ? { role: ctx.grant.role } : {}),
      ...(who.grantId ? { grantId: who.grantId } : {}),
      ...(who.email ? { email: who.email } : {}),
      ttlSeconds: BACKEND_TOKEN_TTL_S,
    },
    now,
  );
  if (cache.size >= MAX_REUSED) cache.clear();
  const header = `Bearer ${token}`;
  cache.set(key, { header, at: now });
  return header;
}
