import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken } from '../domain/auth/credentials.ts';
import { ApiError } from '../errors/problem.ts';
import type { Services } from '../services.ts';

const WWW_AUTH = 'Bearer realm="spaces"';

/**
 * The one authorization step every route runs before validation: Content-Type check, credential →
 * principal, accepted credential kind, then the operation's scope. Sessions hold every scope; space
 * keys are bound to one space, which the route itself checks.
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
    const token = bearerToken(request.headers.authorization);
    if (!token) {
      if (auth.optional) return;
      throw new ApiError(
        'unauthorized',
        'This operation needs a credential: send Authorization: Bearer <token>.',
        {
          headers: { 'www-authenticate': WWW_AUTH },
        },
      );
    }
    const principal = await services.credentials.resolve(token);
    const kind = principal.kind === 'space_key' ? 'space_key' : 'general';
    if (!auth.accept.includes(kind)) {
      throw new ApiError(
        'forbidden',
        kind === 'space_key'
          ? 'A space key only works on its own space’s publishing endpoints; sign in or use an API key for this.'
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
          headers: { 'www-authenticate': `${WWW_AUTH}, error="insufficient_scope", scope="${auth.scope}"` },
        },
      );
    }
    request.principal = principal;
  };
}

/** The principal of a route that requires one (its auth is not optional). */
export function principalOf(request: FastifyRequest) {
  if (!request.principal) throw new ApiError('unauthorized', 'This operation needs a credential.');
  return request.principal;
}
