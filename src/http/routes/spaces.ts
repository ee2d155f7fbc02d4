import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Access } from '../../domain/spaces/service.ts';
import { fail } from '../../errors/problem.ts';
import {
  CreateSpaceBody,
  SpaceCreateResponse,
  SpaceListQuery,
  SpaceListResponse,
  SpaceResponse,
} from '../../schemas/spaces.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { presentSpace, presentSpaceCreated } from '../presenters/spaces.ts';
import { addRoute } from '../route.ts';

export const SpaceParams = Type.Object({
  spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }),
});

export function spaceRoutes(app: FastifyInstance): void {
  const { spaces, cursors } = app.services;

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces',
    operationId: 'createSpace',
    summary: 'Create a space',
    description:
      'Creates a space under a team with a chosen or generated slug. The body may be JSON, a form or multipart (nested `config`/`principal` as JSON strings in forms); an empty body creates a space with defaults.',
    tags: ['Spaces'],
    auth: { accept: ['general'], scope: 'spaces:write' },
    body: CreateSpaceBody,
    bodyOptional: true,
    bodyContentTypes: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
    formJsonFields: ['config', 'principal', 'source'],
    responses: { 201: SpaceCreateResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const body = req.body;
      if (body.source) {
        fail(
          'feature_unavailable',
          'Creating a space from a repository needs a git host configured on this server.',
          {
            pointer: '/source',
          },
        );
      }
      const row = await spaces.create(p, {
        teamId: body.teamId,
        principal: body.principal,
        slug: body.slug,
        title: body.title,
        config: body.config ?? null,
        access: body.access,
        dataLocation: body.dataLocation,
      });
      const d = await spaces.detail(row);
      return send(
        reply,
        SpaceCreateResponse,
        { data: { space: presentSpaceCreated(spaces, d), access: row.access as Access } },
        201,
      );
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces',
    operationId: 'listSpaces',
    summary: 'List spaces',
    description: 'The spaces the credential can access, newest first.',
    tags: ['Spaces'],
    auth: { accept: ['general'], scope: 'spaces:read' },
    querystring: SpaceListQuery,
    responses: { 200: SpaceListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const page = await keysetPage(
        cursors,
        `spaces:${p.credentialId}:${req.query.team ?? ''}`,
        req.query,
        (after, n) => spaces.list(p, req.query.team, after, n),
        (row) => row,
      );
      const details = await spaces.details(page.data);
      return send(reply, SpaceListResponse, {
        data: details.map((d) => presentSpace(spaces, d)),
        pagination: page.pagination,
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId',
    operationId: 'getSpace',
    summary: 'Get a space',
    description: 'By id, or by slug within your teams.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    responses: { 200: SpaceResponse },
    handler: async (req, reply) => {
      const row = await spaces.resolve(principalOf(req), req.params.spaceId);
      const d = await spaces.detail(row);
      return send(reply, SpaceResponse, {
        data: { space: presentSpace(spaces, d), access: row.access as Access },
      });
    },
  });
}
