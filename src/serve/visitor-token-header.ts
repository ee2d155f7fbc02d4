import type { Services } from '../services.ts';
import type { RequestContext } from './request-context.ts';

/**
 * The visitor token the edge hands a site's own backend (behaviour §3.4): every request it forwards
 * through a proxy rewrite or to the version's functions carries `X-Service-Authorization: Bearer
 * <token>`, minted for this request — issuer (the server's public URL), audience (the space id), the
 * site host, purpose `backend`, claim version, who the visitor is and the grant that let them in, and
 * a short expiry. A header of that name sent by the visitor never reaches the backend: the edge's own
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

/** `Bearer <token>` for the request the edge is about to forward. */
export function backendAuthorization(services: Services, ctx: RequestContext): string {
  const who = visitorSubject(ctx);
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
    services.clock.now().getTime(),
  );
  return `Bearer ${token}`;
}
