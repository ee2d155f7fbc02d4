import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  AccessLogListResponse,
  AccessLogQuery,
  AnalyticsQuery,
  AnalyticsResponse,
  SpaceUsageResponse,
  TeamUsageResponse,
} from '../../schemas/analytics.ts';
import type { AccessLogFilter, AccessLogLine } from '../../store/repos/analytics/access-log.ts';
import { principalOf } from '../auth.ts';
import { ndjsonFollower } from '../ndjson-follow.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const TeamParams = Type.Object({ teamId: Type.String({ minLength: 1 }) });
const READ = { accept: ['general', 'space_key'] as const, scope: 'spaces:read' as const };
/** Follow polls the log this often (behaviour §13). */

function presentLine(l: AccessLogLine) {
  return {
    id: l.id,
    time: l.at,
    host: l.host,
    method: l.method,
    path: l.path,
    status: l.status,
    bytes: l.bytes,
    durationMs: l.durationMs,
    referrer: l.referrer,
    userAgent: l.userAgent,
    country: l.country,
    requestId: l.requestId,
    versionId: l.versionId,
    visitor: l.visitor,
  };
}

function filterOf(q: {
  since?: string;
  until?: string;
  status?: string;
  pathPrefix?: string;
  requestId?: string;
}) {
  const f: AccessLogFilter = {};
  if (q.since) f.since = new Date(q.since).toISOString();
  if (q.until) f.until = new Date(q.until).toISOString();
  if (q.status) {
    if (q.status.endsWith('xx')) f.statusClass = Number(q.status[0]);
    else f.status = Number(q.status);
  }
  if (q.pathPrefix) f.pathPrefix = q.pathPrefix;
  if (q.requestId) f.requestId = q.requestId;
  return f;
}

export function analyticsRoutes(app: FastifyInstance): void {
  const { spaces, teams, analytics, cursors, clock } = app.services;
  const follow = ndjsonFollower(app);

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/logs/access',
    operationId: 'listAccessLogs',
    summary: 'List access log lines',
    description:
      'Requests the edge answered for the space, newest first (default 50, max 100), filtered by time, status (`404` or `4xx`), path prefix or request id. With `follow=true` the answer is an NDJSON stream (`application/x-ndjson`): lines newer than the request (or `since`) in time order, polled every 2 s, until the client disconnects. Lines reach the log within about a second of the request.',
    tags: ['Analytics'],
    auth: READ,
    params: SpaceParams,
    querystring: AccessLogQuery,
    responses: { 200: AccessLogListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const filter = filterOf(req.query);
      if (req.query.follow) {
        // Start after the newest line at or before `since` (or now): only what arrives is streamed.
        // Everything newer than the newest line before the start (`since`, or now) is streamed.
        const start = filter.since ?? clock.now().toISOString();
        const after = (await analytics.accessLog(space.id, { until: start }, null, 1))[0]?.id ?? 'acc_';
        return follow(reply, after, (a, n) => analytics.accessLogNewer(space.id, a, n), presentLine);
      }
      const page = await keysetPage(
        cursors,
        `access:${space.id}:${JSON.stringify(filter)}`,
        { limit: req.query.limit ?? 50, ...(req.query.cursor ? { cursor: req.query.cursor } : {}) },
        (after, n) => analytics.accessLog(space.id, filter, after, n),
        presentLine,
      );
      return send(reply, AccessLogListResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/analytics',
    operationId: 'getSpaceAnalytics',
    summary: 'Space analytics',
    description:
      'Requests, visitors, bytes, status classes, a series (hourly for `48h`, daily otherwise) and the top paths, referrers and countries over the window (`48h`, `7d` default, `30d`), read from hourly and daily rollups.',
    tags: ['Analytics'],
    auth: READ,
    params: SpaceParams,
    querystring: AnalyticsQuery,
    responses: { 200: AnalyticsResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      return send(reply, AnalyticsResponse, {
        data: await analytics.analytics(space.id, req.query.window ?? '7d'),
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/usage',
    operationId: 'getSpaceUsage',
    summary: 'Space usage',
    description:
      'Storage (bytes of the distinct blobs its versions reference), bandwidth and requests since the first of this month (UTC); `usage: null` if the space was never served.',
    tags: ['Analytics'],
    auth: READ,
    params: SpaceParams,
    responses: { 200: SpaceUsageResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const now = clock.now();
      const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
      const usage = await analytics.spaceUsage(space.id);
      return send(reply, SpaceUsageResponse, { data: { spaceId: space.id, periodStart, usage } });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/usage',
    operationId: 'getTeamUsage',
    summary: 'Team usage',
    description:
      'Spaces, members, storage, publishes this month, and bandwidth and requests this month (UTC) from the access rollups.',
    tags: ['Analytics'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: TeamParams,
    responses: { 200: TeamUsageResponse },
    handler: async (req, reply) => {
      const view = await teams.resolve(principalOf(req), req.params.teamId);
      const u = await analytics.teamUsage(view.team.id);
      return send(reply, TeamUsageResponse, { data: { teamId: view.team.id, ...u } });
    },
  });
}
