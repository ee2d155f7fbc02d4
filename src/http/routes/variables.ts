import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PutVariableBody, VariableListResponse, VariableResponse } from '../../schemas/publishing.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const VariableParams = Type.Object({
  spaceId: Type.String({ minLength: 1 }),
  name: Type.String({
    minLength: 1,
    maxLength: 256,
    description: '`[A-Z_][A-Z0-9_]*`, at most 128 characters',
  }),
});

export function variableRoutes(app: FastifyInstance): void {
  const { spaces, variables } = app.services;

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/variables',
    operationId: 'listVariables',
    summary: 'List a space’s variables',
    description: 'Secret variables are listed with `value: null`: they are write-only.',
    tags: ['Variables'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    responses: { 200: VariableListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      return send(reply, VariableListResponse, { data: await variables.list(space.id) });
    },
  });

  addRoute(app, {
    method: 'PUT',
    url: '/v1/spaces/:spaceId/variables/:name',
    operationId: 'putVariable',
    summary: 'Set a variable',
    description:
      'Creates or replaces a variable. `secret: true` makes it write-only and encrypts it at rest (AES-256-GCM); without `secret`, an update keeps the variable’s classification. Values are at most 64 KiB.',
    tags: ['Variables'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:write' },
    params: VariableParams,
    body: PutVariableBody,
    responses: { 200: VariableResponse, 201: VariableResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const r = await variables.put(space.id, req.params.name, req.body.value, req.body.secret, {
        space,
        principal: principalOf(req),
      });
      return send(reply, VariableResponse, { data: r.view }, r.created ? 201 : 200);
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/spaces/:spaceId/variables/:name',
    operationId: 'deleteVariable',
    summary: 'Delete a variable',
    description: 'Later versions no longer see it; ready versions keep what they rendered.',
    tags: ['Variables'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:write' },
    params: VariableParams,
    responses: { 204: 'Deleted' },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      await variables.delete(space.id, req.params.name, { space, principal: principalOf(req) });
      return reply.code(204).send();
    },
  });
}
