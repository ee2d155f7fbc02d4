import { Type } from '@sinclair/typebox';
import { SCOPES } from '../domain/auth/scopes.ts';
import { DataEnvelope, DateTime, Nullable, PageEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';

const ScopeName = Type.Union(SCOPES.map((s) => Type.Literal(s)));
const ClientType = Type.Union([Type.Literal('confidential'), Type.Literal('public')]);
const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  minItems: 1,
  maxItems: 10,
});

/** A team's registered OAuth client. */
export const OAuthApp = defineSchema(
  'OAuthApp',
  Type.Object(
    {
      id: Type.String(),
      clientId: Type.String({ description: 'The `client_id` of the OAuth flows (equal to `id`).' }),
      teamId: Type.String(),
      name: Type.String(),
      type: ClientType,
      redirectUris: Type.Array(Type.String()),
      scopes: Type.Array(ScopeName),
      secretHint: Nullable(Type.String({ description: 'Last 4 characters of the client secret.' })),
      createdAt: DateTime,
      updatedAt: DateTime,
    },
    { additionalProperties: false },
  ),
);

/** Create and rotate-secret responses: the app plus its secret, shown this once. */
export const OAuthAppWithSecret = defineSchema(
  'OAuthAppWithSecret',
  Type.Object(
    {
      ...OAuthApp.properties,
      clientSecret: Nullable(Type.String({ description: 'Shown once; null for public clients.' })),
    },
    { additionalProperties: false },
  ),
);

export const OAuthAppResponse = defineSchema('OAuthAppResponse', DataEnvelope(OAuthApp));
export const OAuthAppSecretResponse = defineSchema(
  'OAuthAppSecretResponse',
  DataEnvelope(OAuthAppWithSecret),
);
export const OAuthAppListResponse = defineSchema('OAuthAppListResponse', PageEnvelope(OAuthApp));

export const CreateOAuthAppBody = defineSchema(
  'CreateOAuthAppBody',
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 100 }),
      type: ClientType,
      redirectUris: Type.Optional(RedirectUris),
      scopes: Type.Array(ScopeName, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    },
    { additionalProperties: false },
  ),
);

export const UpdateOAuthAppBody = defineSchema(
  'UpdateOAuthAppBody',
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      redirectUris: Type.Optional(RedirectUris),
      scopes: Type.Optional(
        Type.Array(ScopeName, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
      ),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
);

/** Token, device, revocation and introspection parameters: checked by the handler (OAuth errors). */
export const OAuthParams = defineSchema(
  'OAuthParams',
  Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        'OAuth 2.0 parameters as application/x-www-form-urlencoded (or JSON). Errors follow RFC 6749 §5.2.',
    },
  ),
);

export const OAuthTokenResponse = defineSchema(
  'OAuthTokenResponse',
  Type.Object({
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    scope: Type.String(),
    refresh_token: Type.Optional(Type.String()),
  }),
);

export const OAuthDeviceResponse = defineSchema(
  'OAuthDeviceResponse',
  Type.Object({
    device_code: Type.String(),
    user_code: Type.String(),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String(),
    expires_in: Type.Integer(),
    interval: Type.Integer(),
  }),
);

/** RFC 6749 §5.2: the error body of the token, device, revocation and introspection endpoints. */
export const OAuthErrorResponse = defineSchema(
  'OAuthError',
  Type.Object(
    {
      error: Type.String({
        description:
          '`invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`, `authorization_pending`, `slow_down`, `access_denied`, `expired_token`, or `rate_limited`',
      }),
      error_description: Type.Optional(Type.String()),
      error_uri: Type.Optional(Type.String({ format: 'uri' })),
    },
    { additionalProperties: true },
  ),
);

/** RFC 8414: OAuth 2.0 authorization server metadata. */
export const OAuthServerMetadata = defineSchema(
  'OAuthServerMetadata',
  Type.Object(
    {
      issuer: Type.String({ format: 'uri' }),
      authorization_endpoint: Type.String({ format: 'uri' }),
      token_endpoint: Type.String({ format: 'uri' }),
      device_authorization_endpoint: Type.Optional(Type.String({ format: 'uri' })),
      revocation_endpoint: Type.Optional(Type.String({ format: 'uri' })),
      introspection_endpoint: Type.Optional(Type.String({ format: 'uri' })),
      scopes_supported: Type.Array(Type.String()),
      response_types_supported: Type.Array(Type.String()),
      response_modes_supported: Type.Optional(Type.Array(Type.String())),
      grant_types_supported: Type.Array(Type.String()),
      token_endpoint_auth_methods_supported: Type.Array(Type.String()),
      revocation_endpoint_auth_methods_supported: Type.Optional(Type.Array(Type.String())),
      introspection_endpoint_auth_methods_supported: Type.Optional(Type.Array(Type.String())),
      code_challenge_methods_supported: Type.Array(Type.String()),
      authorization_response_iss_parameter_supported: Type.Optional(Type.Boolean()),
      service_documentation: Type.Optional(Type.String({ format: 'uri' })),
    },
    { additionalProperties: true },
  ),
);

/** RFC 9728: OAuth 2.0 protected resource metadata (what an MCP client reads after a 401). */
export const ProtectedResourceMetadata = defineSchema(
  'ProtectedResourceMetadata',
  Type.Object(
    {
      resource: Type.String({ format: 'uri' }),
      authorization_servers: Type.Array(Type.String({ format: 'uri' })),
      scopes_supported: Type.Array(Type.String()),
      bearer_methods_supported: Type.Array(Type.String()),
      resource_name: Type.Optional(Type.String()),
      resource_documentation: Type.Optional(Type.String({ format: 'uri' })),
    },
    { additionalProperties: true },
  ),
);

/** RFC 7662: token introspection (`active: false` alone for anything not the client's live token). */
export const OAuthIntrospection = defineSchema(
  'OAuthIntrospection',
  Type.Object(
    {
      active: Type.Boolean(),
      scope: Type.Optional(Type.String()),
      client_id: Type.Optional(Type.String()),
      token_type: Type.Optional(Type.String()),
      exp: Type.Optional(Type.Integer()),
      iat: Type.Optional(Type.Integer()),
      sub: Type.Optional(Type.String()),
      username: Type.Optional(Type.String()),
      team_ids: Type.Optional(Type.Array(Type.String())),
    },
    { additionalProperties: true },
  ),
);
