import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  CreateGrantBody,
  GrantCheckQuery,
  GrantCheckResponse,
  GrantListResponse,
  GrantResponse,
  PutGrantBody,
} from '../../schemas/access.ts';
import { LogoutAllResponse } from '../../schemas/sharing.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const GrantParams = Type.Object({
  spaceId: Type.String({ minLength: 1 }),
  grantId: Type.String({ minLength: 1 }),
});
const READ = { accept: ['general'] as const, scope: 'spaces:read' as const };
const WRITE = { accept: ['general'] as const, scope: 'spaces:write' as const };

/** Grants of a space (behaviour §3.4) and `sharing/logout-all`. Managing access is for the space's team. */
export function accessRoutes(app: FastifyInstance): void {
  const { spaces, access } = app.services;

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/grants',
    operationId: 'listGrants',
    summary: 'List a space’s grants',
    description:
      'Active grants, oldest first (the order the edge prefers among equals). The space’s own `access` and the settings file’s `access` key act as grants too, but are not listed: see `grants/check`.',
    tags: ['Access'],
    auth: READ,
    params: SpaceParams,
    responses: { 200: GrantListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      return send(reply, GrantListResponse, { data: await access.grants.list(space) });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/grants',
    operationId: 'createGrant',
    summary: 'Add a grant',
    description:
      'Grants are additive: a request passes when one active grant matches every dimension (audience, paths with their own exclusions, role → capability, target, constraints).',
    tags: ['Access'],
    auth: WRITE,
    params: SpaceParams,
    body: CreateGrantBody,
    responses: { 201: GrantResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      return send(reply, GrantResponse, { data: await access.grants.create(p, space, req.body) }, 201);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/grants/check',
    operationId: 'checkGrant',
    summary: 'Would this visitor see this URL?',
    description:
      'Runs the edge’s access engine for a described visitor: whether the URL is allowed for the capability, through which grant (or the space’s own access, or the settings file), and why each other grant did not match.',
    tags: ['Access'],
    auth: READ,
    params: SpaceParams,
    querystring: GrantCheckQuery,
    responses: { 200: GrantCheckResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      return send(reply, GrantCheckResponse, { data: await access.grants.check(space, req.query) });
    },
  });

  addRoute(app, {
    method: 'PUT',
    url: '/v1/spaces/:spaceId/grants/:grantId',
    operationId: 'putGrant',
    summary: 'Replace a grant',
    description:
      'Replaces every field (omitted ones take their defaults). A share link’s or credential’s grant keeps its audience. Sessions the grant no longer covers end at their next request.',
    tags: ['Access'],
    auth: WRITE,
    params: GrantParams,
    body: PutGrantBody,
    responses: { 200: GrantResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      return send(reply, GrantResponse, {
        data: await access.grants.replace(p, space, req.params.grantId, req.body),
      });
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/spaces/:spaceId/grants/:grantId',
    operationId: 'revokeGrant',
    summary: 'Revoke a grant',
    description:
      'Immediate: the next request through it is refused. A credential’s grant revokes the credential.',
    tags: ['Access'],
    auth: WRITE,
    params: GrantParams,
    responses: { 204: 'Revoked' },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      await access.grants.revoke(p, space, req.params.grantId);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/sharing/logout-all',
    operationId: 'logoutAllVisitors',
    summary: 'End every visitor session',
    description:
      'Every visitor session of the space (share links, passwords, team hand-offs) ends at its next request; links and passwords still work to start new ones.',
    tags: ['Access'],
    auth: WRITE,
    params: SpaceParams,
    responses: { 200: LogoutAllResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      return send(reply, LogoutAllResponse, { data: await access.grants.logoutAll(p, space) });
    },
  });
}
