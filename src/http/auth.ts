import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken } from '../domain/auth/credentials.ts';
import { ApiError } from '../errors/problem.ts';
import type { Services } from '../services.ts';
import { checkCookieCsrf, cookieSessionToken } from './session-cookie.ts';

/**
 * The one authorization step every route runs before validation: Content-Type check, credential →
 * principal, accepted credential kind, then the operation's scope. Sessions hold every scope; space
 * keys are bound to one space, which the route itself checks.
 *
 * The credential is `Authorization: Bearer …`; without one, the dashboard's session cookie
 * (`spaces_session`, see session-cookie.ts) stands in, and a state-changing request it authenticates
 * must pass the CSRF check.
 */
export function makeAuthenticate(services: Services) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    request.principal = null;
    const spec = request.routeOptions.config.spec;
    if (!spec) return;

    if (spec.body && request.body !== undefined && request.headers['content-type']) {
      const type = request.headers['content-type'].split(';')[0]!.trim().toLowerCase();
      const accepted = spec.bodyContentTypes ?? ['application/json'];
      if (!accepted.includes(type)) {
        throw new ApiError(
          'unsupported_media_type',
          `This endpoint reads ${accepted.join(', ')}, not ${type}.`,
          {
            details: { accepted },
          },
        );
      }
    }

    const auth = spec.auth;
    if (!auth) return;
    let token = bearerToken(request.headers.authorization);
    let viaCookie = false;
    if (!token && !request.headers.authorization && !auth.accept.includes('claimed_space_key')) {
      token = cookieSessionToken(request);
      viaCookie = token !== null;
    }
    if (!token) {
      if (auth.optional) return;
      throw new ApiError(
        'unauthorized',
        'This operation needs a credential: send Authorization: Bearer <token>.',
        { facts: { challenge: {} } },
      );
    }
    if (auth.accept.includes('claimed_space_key')) {
      // The one route that takes a claimed space's key (which every other route refuses).
      request.principal = await services.anonymous.resolveClaimedKey(token);
      return;
    }
    let principal: Awaited<ReturnType<typeof services.credentials.resolve>>;
    try {
      principal = await services.credentials.resolve(token);
    } catch (err) {
      // A stale cookie on an operation that works without a credential is no credential.
      if (viaCookie && auth.optional) return;
      throw err;
    }
    // Space-bound credentials pass only where a route takes a space key: their space's own endpoints.
    const kind = principal.kind === 'space_key' || principal.spaceId !== null ? 'space_key' : 'general';
    if (!auth.accept.includes(kind)) {
      throw new ApiError(
        'forbidden',
        principal.kind === 'space_key'
          ? 'A space key only works on its own space’s publishing endpoints; sign in or use an API key for this.'
          : kind === 'space_key'
            ? 'This key is bound to one space and works only on that space’s endpoints (read and publish).'
            : 'This operation takes only a space key.',
        { details: { credentialKind: principal.kind, accepted: auth.accept } },
      );
    }
    if (
      auth.scope &&
      principal.kind !== 'session' &&
      principal.kind !== 'space_key' &&
      !principal.scopes.has(auth.scope)
    ) {
      throw new ApiError(
        'forbidden',
        `This operation needs the scope ${auth.scope}, which the credential lacks.`,
        {
          details: { requiredScope: auth.scope, grantedScopes: [...principal.scopes] },
          facts: { challenge: { error: 'insufficient_scope', scope: auth.scope } },
        },
      );
    }
    if (viaCookie) checkCookieCsrf(request, services, principal);
    request.principal = principal;
  };
}

/** The principal of a route that requires one (its auth is not optional). */
export function principalOf(request: FastifyRequest) {
  if (!request.principal) throw new ApiError('unauthorized', 'This operation needs a credential.');
  return request.principal;
}
