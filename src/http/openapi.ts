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
      responses[status] =
        typeof s === 'string'
          ? { description: s }
          : { description: 'Success', content: { 'application/json': { schema: ref(s) } } };
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
      if (r.auth.scope) op['x-required-scope'] = r.auth.scope;
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
