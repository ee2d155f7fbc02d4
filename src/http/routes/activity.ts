import type { ServerResponse } from 'node:http';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FeedScope } from '../../domain/events/activity.ts';
import { ApiError } from '../../errors/problem.ts';
import { ActivityList, ActivityQuery, StreamQuery } from '../../schemas/events.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const TeamParams = Type.Object({ teamId: Type.String({ minLength: 1, description: 'Team id or slug' }) });
const TEAM_READ = { accept: ['general'] as const, scope: 'teams:read' as const };
const SPACE_READ = { accept: ['general', 'space_key'] as const, scope: 'spaces:read' as const };

const FEED_NOTE =
  'Newest first; `code` takes catalogue codes or `resource.*` (comma-separated or repeated), `since` (inclusive) and `until` (exclusive) bound `createdAt`; 50 per page by default, 100 at most.';

/**
 * Activity (the event log read back): feeds, the team audit log and server-sent event streams. A
 * stream sends every event after the client's `Last-Event-ID` (or `?since=`), oldest first, each with
 * `id: <sequence>`, then waits for new ones (told by the event log, from this instance or, through the
 * change feed, another one; a slow poll backs that up), with a heartbeat comment in between.
 */
export function activityRoutes(app: FastifyInstance): void {
  const { activity, cursors } = app.services;
  const open = new Set<() => void>();
  // Streams never end on their own: close them before the server waits for its connections.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  const feed = async (
    req: FastifyRequest<{ Querystring: typeof ActivityQuery.static }>,
    reply: FastifyReply,
    scope: FeedScope,
  ) => {
    const filter = activity.filterOf(scope, req.query);
    const listing = `activity:${scope.key}:${JSON.stringify([filter.codes, filter.codePrefixes, filter.since, filter.until])}`;
    const page = await keysetPage(
      cursors,
      listing,
      { limit: req.query.limit ?? 50, cursor: req.query.cursor },
      (after, n) => activity.page(filter, after, n),
      (row) => activity.present(row),
    );
    return send(reply, ActivityList, page);
  };

  addRoute(app, {
    method: 'GET',
    url: '/v1/activity',
    operationId: 'listActivity',
    summary: 'Account-wide activity',
    description: `Events of every team the caller belongs to (a team-bound credential: its team). ${FEED_NOTE}`,
    tags: ['Activity'],
    auth: TEAM_READ,
    querystring: ActivityQuery,
    responses: { 200: ActivityList },
    handler: async (req, reply) => feed(req, reply, await activity.accountScope(principalOf(req))),
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/activity',
    operationId: 'listTeamActivity',
    summary: 'A team’s activity',
    description: `Every event of the team and its spaces. ${FEED_NOTE}`,
    tags: ['Activity'],
    auth: TEAM_READ,
    params: TeamParams,
    querystring: ActivityQuery,
    responses: { 200: ActivityList },
    handler: async (req, reply) =>
      feed(req, reply, await activity.teamScope(principalOf(req), req.params.teamId)),
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/audit-log',
    operationId: 'listTeamAuditLog',
    summary: 'A team’s audit log',
    description: `Security-relevant events only: \`api_key.*\`, \`team.member_*\`, \`team.access_defaults_updated\`, \`user.signed_in\`, \`webhook.*\` and domain ownership (\`domain.created|verified|control_lost|deleted\`). Owners and admins only. ${FEED_NOTE}`,
    tags: ['Activity'],
    auth: TEAM_READ,
    params: TeamParams,
    querystring: ActivityQuery,
    responses: { 200: ActivityList },
    handler: async (req, reply) =>
      feed(req, reply, await activity.teamScope(principalOf(req), req.params.teamId, true)),
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/activity',
    operationId: 'listSpaceActivity',
    summary: 'A space’s activity',
    description: `Events of one space. ${FEED_NOTE}`,
    tags: ['Activity'],
    auth: SPACE_READ,
    params: SpaceParams,
    querystring: ActivityQuery,
    responses: { 200: ActivityList },
    handler: async (req, reply) =>
      feed(req, reply, await activity.spaceScope(principalOf(req), req.params.spaceId)),
  });

  const stream = async (
    req: FastifyRequest<{ Querystring: typeof StreamQuery.static }>,
    reply: FastifyReply,
    kind: 'team' | 'space',
    ref: string,
  ) => {
    const { tenantId, spaceId } = await activity.streamScope(principalOf(req), kind, ref);
    const header = req.headers['last-event-id'];
    const replayFrom = (Array.isArray(header) ? header[0] : header) ?? req.query.since;
    let last: number;
    if (replayFrom !== undefined) {
      if (!/^[0-9]{1,15}$/.test(replayFrom.trim())) {
        throw new ApiError('invalid_last_event_id', 'Last-Event-ID is not an event sequence number.', {
          details: { lastEventId: replayFrom.slice(0, 64) },
        });
      }
      last = Number(replayFrom.trim());
    } else {
      last = await activity.lastSequence(tenantId);
    }
    const heartbeatMs = (req.query.heartbeatSeconds ?? 15) * 1000;
    reply.hijack();
    const res: ServerResponse = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.write(`retry: 2000\n: stream of ${kind} ${ref} after sequence ${last}\n\n`);

    let ended = false;
    let reading = false;
    let again = false;
    // Reads what is new and writes it; one read at a time (a wake-up during a read reads once more).
    const pump = async (): Promise<void> => {
      if (ended) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          for (;;) {
            const events = await activity.after(tenantId, spaceId, last);
            for (const e of events) {
              if (ended) return;
              res.write(`id: ${e.sequence}\nevent: ${e.code}\ndata: ${JSON.stringify(e)}\n\n`);
              last = e.sequence;
            }
            if (events.length < 500) break;
          }
        } while (again && !ended);
      } catch (err) {
        req.log.warn({ err }, 'event stream read failed');
      } finally {
        reading = false;
      }
    };
    const wake = () => {
      void pump();
    };
    const stopListening = activity.onRecorded(tenantId, wake);
    // A slow poll backs up the notifications (one lost between instances is found here).
    const poll = setInterval(wake, 5000);
    const heartbeat = setInterval(() => {
      if (!ended) res.write(': heartbeat\n\n');
    }, heartbeatMs);
    const end = () => {
      if (ended) return;
      ended = true;
      stopListening();
      clearInterval(poll);
      clearInterval(heartbeat);
      open.delete(end);
      res.end();
    };
    open.add(end);
    res.on('close', end);
    res.on('error', end);
    await pump();
    if (req.query.follow === false) end();
  };

  const STREAM_NOTE =
    '`text/event-stream`: each event as `id: <sequence>`, `event: <code>`, `data: <event JSON>`. Reconnect with `Last-Event-ID` (or `?since=<sequence>`) to get every event after it, none twice; without either the stream starts with the next event. A comment line every `heartbeatSeconds` (15) keeps proxies from closing it. `follow=false` ends the stream once it has caught up.';

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/events/stream',
    operationId: 'streamTeamEvents',
    summary: 'Stream a team’s events (SSE)',
    description: STREAM_NOTE,
    tags: ['Activity'],
    auth: TEAM_READ,
    params: TeamParams,
    querystring: StreamQuery,
    responses: { 200: 'A `text/event-stream` of events' },
    handler: async (req, reply) => stream(req, reply, 'team', req.params.teamId),
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/events/stream',
    operationId: 'streamSpaceEvents',
    summary: 'Stream a space’s events (SSE)',
    description: `${STREAM_NOTE} \`id\` is the team's sequence: a space's stream skips numbers of other spaces.`,
    tags: ['Activity'],
    auth: SPACE_READ,
    params: SpaceParams,
    querystring: StreamQuery,
    responses: { 200: 'A `text/event-stream` of events' },
    handler: async (req, reply) => stream(req, reply, 'space', req.params.spaceId),
  });
}
