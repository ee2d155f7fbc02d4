import type { TSchema } from '@sinclair/typebox';
import { SCOPE_DESCRIPTIONS } from '../domain/auth/scopes.ts';
import { allSchemas, schemaName } from '../schemas/registry.ts';
import type { RouteSpec } from './route.ts';

export const API_VERSION = '0.0.3';

function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema));
}

function ref(schema: TSchema): Record<string, unknown> {
  const name = schemaName(schema);
  return name ? { $ref: `#/components/schemas/${name}` } : plain(schema);
}

/** `/v1/teams/:teamId` → `/v1/teams/{teamId}`; a trailing `*` becomes the parameter its schema names. */
export function toOpenApiPath(url: string, params?: TSchema): string {
  // A trailing wildcard is one parameter that may contain `/`; its schema's `title` names it.
  const wildcard = (params?.properties as Record<string, TSchema> | undefined)?.['*']?.title ?? 'path';
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/\*$/, `/{${wildcard}}`);
}

const PROBLEM_DESCRIPTIONS: Record<string, string> = {
  '400': 'Invalid input (`validation_error` with a `pointer`)',
  '401': 'No credential, or one that is unknown, expired or revoked (`WWW-Authenticate: Bearer`)',
  '403': 'The credential may not do this (kind, scope or role)',
  '404': 'Not found, or outside the credential’s reach',
  '409': 'Conflict with the current state',
  '412': 'Precondition failed (a compare-and-swap lost)',
  '413': 'Body too large',
  '415': 'Unsupported Content-Type',
  '422': 'Understood but refused',
  '429': 'Rate limited (`Retry-After`)',
};

/** The 4xx statuses an operation can answer: implied by its shape, plus what the route lists. */
export function problemStatuses(r: RouteSpec): string[] {
  const out = new Set<number>(r.problems ?? []);
  const inputs =
    Object.keys((r.params?.properties as object | undefined) ?? {}).length > 0 ||
    Object.keys((r.querystring?.properties as object | undefined) ?? {}).length > 0 ||
    r.body !== undefined;
  if (inputs) out.add(400);
  if (r.auth) {
    out.add(401);
    out.add(403);
  }
  if (r.params && Object.keys(r.params.properties as object).length > 0) out.add(404);
  if (r.body) {
    out.add(413);
    out.add(415);
  }
  return [...out].sort((a, b) => a - b).map(String);
}

/** The OpenAPI 3.1 document, generated from the same route specs that register the routes. */
export function buildOpenApi(routes: RouteSpec[], publicUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    if (r.hidden) continue;
    const path = toOpenApiPath(r.url, r.params);
    paths[path] ??= {};
    const parameters: unknown[] = [];
    for (const [where, obj] of [
      ['path', r.params],
      ['query', r.querystring],
    ] as const) {
      if (!obj) continue;
      const props = (obj as unknown as { properties: Record<string, TSchema>; required?: string[] })
        .properties;
      for (const [name, s] of Object.entries(props)) {
        parameters.push({
          name: name === '*' ? (s.title ?? 'path') : name,
          in: where,
          required: where === 'path' || (obj.required ?? []).includes(name),
          schema: plain(s),
          ...(s.description ? { description: s.description } : {}),
        });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, s] of Object.entries(r.responses)) {
      const error = Number(status) >= 400;
      responses[status] =
        typeof s === 'string'
          ? { description: s }
          : {
              description: error ? (s.description ?? schemaName(s) ?? 'Error') : 'Success',
              content: { 'application/json': { schema: ref(s) } },
            };
    }
    for (const status of problemStatuses(r)) {
      if (responses[status]) continue;
      responses[status] = {
        description: PROBLEM_DESCRIPTIONS[status] ?? 'Problem document (RFC 9457)',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    }
    responses.default = {
      description: 'Problem document (RFC 9457)',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
    const op: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      tags: r.tags,
      parameters,
      responses,
    };
    if (r.description) op.description = r.description;
    if (r.deprecated) op.deprecated = true;
    if (r.body) {
      const types = r.bodyContentTypes ?? ['application/json'];
      op.requestBody = {
        required: !r.bodyOptional,
        content: Object.fromEntries(types.map((t) => [t, { schema: ref(r.body!) }])),
      };
    }
    if (r.auth) {
      const security: Record<string, string[]>[] = [];
      if (r.auth.accept.includes('general')) {
        security.push({ bearer: [] });
        security.push({ oauth2: r.auth.scope ? [r.auth.scope] : [] });
      }
      if (r.auth.accept.includes('space_key') || r.auth.accept.includes('claimed_space_key'))
        security.push({ spaceKey: [] });
      if (r.auth.optional) security.push({});
      op.security = security;
      // Every operation that takes a credential names its scope; `null` when none is needed, and
      // operations only a signed-in person may call say so.
      op['x-required-scope'] = r.auth.scope ?? null;
      if (r.auth.personOnly) op['x-person-only'] = true;
      else if (!r.auth.accept.includes('general')) op['x-space-key-only'] = true;
    } else {
      op.security = [];
    }
    paths[path]![r.method.toLowerCase()] = op;
  }
  const schemas: Record<string, unknown> = {};
  for (const [name, s] of allSchemas()) schemas[name] = plain(s);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Spaces API',
      version: API_VERSION,
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Publish immutable versions of sites, move channels between them, serve them on their own hostnames.',
    },
    servers: [{ url: publicUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A session (`sfs_`), an API key (`sfa_`), an OAuth access token or a machine credential (`sfm_`). An API key bound to one space (`spaceId`) works only on the operations that also take `spaceKey`, for that space.',
        },
        spaceKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The key of an unclaimed anonymous space (`sfc_`); after a claim with continuation allowed, the voucher `POST /v1/claim/exchange` takes.',
        },
        oauth2: {
          type: 'oauth2',
          flows: {
            authorizationCode: {
              authorizationUrl: `${publicUrl}/v1/auth/oauth2/authorize`,
              tokenUrl: `${publicUrl}/v1/auth/oauth2/token`,
              refreshUrl: `${publicUrl}/v1/auth/oauth2/token`,
              scopes: SCOPE_DESCRIPTIONS,
            },
            clientCredentials: {
              tokenUrl: `${publicUrl}/v1/auth/oauth2/token`,
              scopes: Object.fromEntries(
                Object.entries(SCOPE_DESCRIPTIONS).filter(([k]) => k !== 'offline_access'),
              ),
            },
          },
        },
      },
    },
  };
}
