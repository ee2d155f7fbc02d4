import type { FastifyInstance } from 'fastify';
import { liveRuntime } from '../../domain/runtime/service.ts';
import { RuntimeStatusResponse } from '../../schemas/runtime.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';
import { SpaceParams } from './spaces.ts';

export function runtimeRoutes(app: FastifyInstance): void {
  const { spaces, store } = app.services;
  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/runtime',
    operationId: 'getSpaceRuntime',
    summary: 'Get the code a space runs',
    description:
      'The live version’s functions runtime, from its metadata written at finalize: entry, bundle digest and size, compatibility date, capabilities and the routes the worker claims. 404 `runtime_not_provisioned` for a static space (no `runtime.kind: "functions"` in the live version) or one with no live version.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    responses: { 200: RuntimeStatusResponse },
    handler: async (req, reply) => {
      const data = await liveRuntime({ spaces, store }, principalOf(req), req.params.spaceId);
      return send(reply, RuntimeStatusResponse, { data });
    },
  });
}
