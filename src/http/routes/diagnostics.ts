import type { FastifyInstance } from 'fastify';
import { currentDiagnostics } from '../../domain/publishing/diagnostics.ts';
import { DiagnosticsResponse } from '../../schemas/diagnostics.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';
import { SpaceParams } from './spaces.ts';

export function diagnosticsRoutes(app: FastifyInstance): void {
  const { spaces, store } = app.services;
  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/diagnostics',
    operationId: 'getSpaceDiagnostics',
    summary: 'Get a space’s diagnostics',
    description:
      'Current publish, routing, runtime and domain diagnostics: the live version’s records plus those of newer versions that failed (e.g. `_redirects:12` rule problems, template errors).',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    responses: { 200: DiagnosticsResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      return send(reply, DiagnosticsResponse, { data: await currentDiagnostics(store, space) });
    },
  });
}
