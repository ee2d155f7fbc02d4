import type { FastifyInstance } from 'fastify';
import { addRoute } from '../route.ts';

/**
 * `GET /.well-known/jwks.json`: the public keys visitor tokens are signed with (Ed25519, RFC 8037), so
 * a site's backend checks a token offline (see docs/guides/sharing-and-access.md and
 * src/domain/visitor-tokens/tokens.ts).
 */
export function visitorTokenRoutes(app: FastifyInstance): void {
  const { visitorTokens } = app.services;

  addRoute(app, {
    method: 'GET',
    url: '/.well-known/jwks.json',
    operationId: 'getVisitorTokenKeys',
    summary: 'Public keys of visitor tokens (JWKS)',
    description:
      'The Ed25519 keys (`kty: OKP`, `crv: Ed25519`, `alg: EdDSA`) that sign visitor tokens. A backend caches this document and checks a token offline: signature by `kid`, then issuer, audience (the space id), host, purpose and claim version, with 5 s of clock skew.',
    tags: ['Access'],
    auth: null,
    responses: { 200: 'A JWK Set (RFC 7517)' },
    handler: async (_req, reply) =>
      reply
        .header('cache-control', 'public, max-age=300')
        .type('application/jwk-set+json')
        .send(visitorTokens.jwks()),
  });
}
