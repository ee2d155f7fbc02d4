import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { presentRuntimeLine } from '../../domain/runtime/logs.ts';
import {
  CronListResponse,
  CronRunResponse,
  RuntimeLogListResponse,
  RuntimeLogQuery,
} from '../../schemas/crons.ts';
import type { RuntimeLogFilter } from '../../store/repos/runtime-logs.ts';
import { principalOf } from '../auth.ts';
import { ndjsonFollower } from '../ndjson-follow.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';
import { SpaceParams } from './spaces.ts';

/** Crons (`…/crons`) and runtime logs (`…/logs/runtime`): the scheduled and logged side of functions. */
export function cronRoutes(app: FastifyInstance): void {
  const { crons, spaces, runtimeLogs, cursors, clock } = app.services;
  const follow = ndjsonFollower(app);

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/logs/runtime',
    operationId: 'listRuntimeLogs',
    summary: 'List runtime log lines',
    description:
      'What the space’s functions wrote to the console (`log`, `info`, `debug`, `warn`, `error`) and threw, per request: each line with the request’s id (the `x-request-id` the edge gave it and put in its answer), method, path, status and outcome. Newest first (default 50, max 100), filtered by time, request id, handler or level; kept 7 days. With `follow=true` the answer is an NDJSON stream of lines newer than the request (or `since`), oldest first, polled every 2 s, until the client disconnects. Lines arrive within about a second of the request’s end.',
    tags: ['Analytics'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    querystring: RuntimeLogQuery,
    responses: { 200: RuntimeLogListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const q = req.query;
      const filter: RuntimeLogFilter = {
        ...(q.since ? { since: new Date(q.since).toISOString() } : {}),
        ...(q.until ? { until: new Date(q.until).toISOString() } : {}),
        ...(q.requestId ? { requestId: q.requestId } : {}),
        ...(q.level ? { level: q.level } : {}),
        ...(q.handler ? { handler: q.handler } : {}),
      };
      if (q.follow) {
        const start = filter.since ?? clock.now().toISOString();
        const after = (await runtimeLogs.list(space.id, { until: start }, null, 1))[0]?.id ?? 'rlg_';
        return follow(reply, after, (a, n) => runtimeLogs.newer(space.id, a, n, filter), presentRuntimeLine);
      }
      const page = await keysetPage(
        cursors,
        `runtime-logs:${space.id}:${JSON.stringify(filter)}`,
        { limit: q.limit ?? 50, ...(q.cursor ? { cursor: q.cursor } : {}) },
        (after, n) => runtimeLogs.list(space.id, filter, after, n),
        presentRuntimeLine,
      );
      return send(reply, RuntimeLogListResponse, page);
    },
  });
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
