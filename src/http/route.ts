import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Scope } from '../domain/auth/scopes.ts';
import { decodeFormBody } from './forms.ts';

/** What a route demands of the caller's credential. */
export interface AuthRequirement {
  /**
   * `general`: credentials acting for a person or a team; `space_key`: credentials bound to one space
   * (an anonymous space's key, an API key bound to a space), on that space's own endpoints;
   * `claimed_space_key`: the key of a space claimed since, which only the continuation exchange takes.
   */
  accept: ReadonlyArray<'general' | 'space_key' | 'claimed_space_key'>;
  /** Scope a non-session credential must hold. Sessions hold every scope. */
  scope?: Scope;
  /** When true a request without a credential passes with `request.principal = null`. */
  optional?: boolean;
  /**
   * Only a credential acting for a signed-in person may call it (no scope makes a machine able to):
   * the OpenAPI document says so (`x-person-only`). Documentation; the domain enforces it.
   */
  personOnly?: boolean;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

export interface RouteSpec<B extends TSchema = any, Q extends TObject = any, P extends TObject = any> {
  method: HttpMethod;
  /** Fastify path syntax: `/v1/teams/:teamId`. */
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthRequirement | null;
  body?: B;
  /** Media types the body may come in; JSON when omitted. */
  bodyContentTypes?: string[];
  /** The body may be absent. */
  bodyOptional?: boolean;
  /** Form bodies: fields that carry nested objects as JSON strings. */
  formJsonFields?: string[];
  querystring?: Q;
  params?: P;
  /**
   * Responses: a named schema for JSON bodies, or a description string for anything else. A 4xx
   * listed here keeps its own body (the OAuth endpoints' RFC 6749 errors).
   */
  responses: Record<number, TSchema | string>;
  /**
   * 4xx problem statuses the operation can answer beyond those its shape implies (400 for any input,
   * 401/403 for a credential, 404 for a path parameter, 413/415 for a body): 409, 412, 429, ….
   */
  problems?: number[];
  /** Marks the route deprecated: it sends `Deprecation`, `Sunset` and a `Link` to the policy. */
  deprecated?: { since: string; sunset: string };
  bodyLimit?: number;
  /** Not listed in the OpenAPI document (HTML pages, assets). */
  hidden?: boolean;
  handler: (
    request: FastifyRequest<{ Body: Static<B>; Querystring: Static<Q>; Params: Static<P> }>,
    reply: FastifyReply,
  ) => Promise<unknown>;
}

/** Every route goes through here, so its schema, auth and OpenAPI entry can't drift apart. */
export function addRoute<
  B extends TSchema = TSchema,
  Q extends TObject = TObject,
  P extends TObject = TObject,
>(app: FastifyInstance, spec: RouteSpec<B, Q, P>): void {
  app.routeSpecs.push(spec);
  const schema: Record<string, TSchema> = {};
  if (spec.body) schema.body = spec.body;
  if (spec.querystring) schema.querystring = spec.querystring;
  if (spec.params) schema.params = spec.params;
  app.route({
    method: spec.method,
    url: spec.url,
    schema,
    bodyLimit: spec.bodyLimit,
    config: { spec },
    preValidation: spec.bodyContentTypes?.some((t) => t.includes('form'))
      ? [app.authenticate, (req) => decodeFormBody(req, spec.formJsonFields ?? [])]
      : app.authenticate,
    handler: spec.handler as never,
  });
}
