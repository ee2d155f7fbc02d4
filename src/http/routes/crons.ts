import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { CronListResponse, CronRunResponse } from '../../schemas/crons.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';
import { SpaceParams } from './spaces.ts';

export function cronRoutes(app: FastifyInstance): void {
  const { crons } = app.services;
  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/crons',
    operationId: 'listSpaceCrons',
    summary: 'List the crons of the live version',
    description:
      'The `crons` of the live version’s settings file (behaviour §4.8): each one’s key, path, schedule, next due time (UTC), last run and last failure. A version that goes live replaces them; what a key last did stays with it. Empty for a space with no crons or no live version.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    responses: { 200: CronListResponse },
    handler: async (req, reply) => {
      const data = await crons.list(principalOf(req), req.params.spaceId);
      return send(reply, CronListResponse, { data });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/crons/:key/run',
    operationId: 'runSpaceCron',
    summary: 'Run a cron now',
    description:
      'Sends the cron’s request now and waits for its answer: `GET <path>` on the live version through normal routing, with `authorization: Bearer <CRON_SECRET>` when the space has that variable but without `x-service-cron` (behaviour §4.8: a manual run omits it). Recorded as the cron’s last run (and last failure when the status is 400 or more, or no answer came); the schedule is unchanged. 404 `cron_not_found` when the live version has no cron with that key.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:write' },
    params: Type.Object({ spaceId: Type.String(), key: Type.String({ minLength: 1, maxLength: 512 }) }),
    bodyOptional: true,
    responses: { 200: CronRunResponse },
    handler: async (req, reply) => {
      const { cron, run } = await crons.runNow(principalOf(req), req.params.spaceId, req.params.key);
      return send(reply, CronRunResponse, {
        data: {
          cron,
          run: {
            status: run.status,
            durationMs: Math.round(run.ms),
            ok: run.failure === null,
            failure: run.failure,
          },
        },
      });
    },
  });
}
