import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  BuildCreatedResponse,
  BuildEventsResponse,
  BuildListResponse,
  BuildLogsResponse,
  BuildResponse,
  CreateBuildBody,
} from '../../schemas/builds.ts';
import { PageQuery } from '../../schemas/common.ts';
import type { BuildRow } from '../../store/repos/builds/builds.ts';
import type { BuildLogRow } from '../../store/repos/builds/logs.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const BuildParams = Type.Object({ buildId: Type.String({ minLength: 1 }) });
const READ = { accept: ['general', 'space_key'] as const, scope: 'spaces:read' as const };
const TRIGGER = { accept: ['general', 'space_key'] as const, scope: 'builds:trigger' as const };

export function presentBuild(b: BuildRow) {
  return {
    id: b.id,
    spaceId: b.space_id,
    status: b.status,
    source: {
      type: b.source_type as 'upload' | 'git' | 'push' | 'connection',
      url: b.git_url,
      ref: b.git_ref,
      commitSha: b.commit_sha,
    },
    branch: b.branch,
    channel: b.channel,
    versionId: b.version_id,
    settings: b.settings ? JSON.parse(b.settings) : null,
    error: b.error_code ? { code: b.error_code, message: b.error_message ?? '' } : null,
    cancelRequested: b.cancel_requested === 1,
    retryOf: b.retry_of,
    logBytes: Number(b.log_bytes),
    createdAt: b.created_at,
    startedAt: b.started_at,
    finishedAt: b.finished_at,
  };
}

const presentLine = (l: BuildLogRow) => ({
  id: l.id,
  stream: l.stream,
  line: l.line,
  createdAt: l.created_at,
});

export function buildRoutes(app: FastifyInstance): void {
  const { spaces, builds, cursors, config } = app.services;
  const uploadOf = (b: BuildRow) =>
    b.status === 'waiting_for_source'
      ? {
          method: 'PUT' as const,
          url: `${config.publicUrl}/v1/builds/${b.id}/source`,
          contentTypes: ['application/gzip', 'application/zip'],
          description:
            'PUT the source as a .tar.gz or .zip with the same credential; the build is queued once it is read.',
        }
      : null;

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/builds',
    operationId: 'createBuild',
    summary: 'Start a build',
    description:
      'From a git repository (`source.type: "git"`, an https URL and a branch or tag): the build is queued at once. From a source archive (`source.type: "upload"`): the build waits for the archive; the answer’s `upload` says where to PUT it. On success the output is published and goes `live` (no `branch`) or to the `br-<slug>` preview channel.',
    tags: ['Builds'],
    auth: TRIGGER,
    params: SpaceParams,
    body: CreateBuildBody,
    responses: { 201: BuildCreatedResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const b = await builds.create(p, space, req.body);
      return send(reply, BuildCreatedResponse, { data: presentBuild(b), upload: uploadOf(b) }, 201);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/builds',
    operationId: 'listBuilds',
    summary: 'List a space’s builds',
    description: 'Newest first.',
    tags: ['Builds'],
    auth: READ,
    params: SpaceParams,
    querystring: Type.Object(PageQuery, { additionalProperties: false }),
    responses: { 200: BuildListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const page = await keysetPage(
        cursors,
        `builds:${space.id}`,
        req.query,
        (after, n) => builds.list(space.id, after, n),
        presentBuild,
      );
      return send(reply, BuildListResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/builds/:buildId',
    operationId: 'getBuild',
    summary: 'Get a build',
    tags: ['Builds'],
    auth: READ,
    params: BuildParams,
    responses: { 200: BuildResponse },
    handler: async (req, reply) => {
      const { build } = await builds.get(principalOf(req), req.params.buildId);
      return send(reply, BuildResponse, { data: presentBuild(build) });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/builds/:buildId/logs',
    operationId: 'getBuildLogs',
    summary: 'Read a build’s log',
    description:
      'Lines newest first, paged (`cursor` goes further back). Secret variables’ values (and their base64) are replaced by `[redacted]` before a line is stored; a log keeps at most 1 MiB. With `follow=true` the answer is a stream instead (`application/x-ndjson`, one JSON object a line): every line so far oldest first as `{"type":"line","id","stream","line","createdAt"}`, then new lines as they are written, and last `{"type":"end","build":<the finished build>}`; the stream ends when the build is finished.',
    tags: ['Builds'],
    auth: READ,
    params: BuildParams,
    querystring: Type.Object(
      {
        ...PageQuery,
        follow: Type.Optional(
          Type.Boolean({ description: 'Stream the log (NDJSON) until the build is finished' }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: { 200: BuildLogsResponse },
    handler: async (req, reply) => {
      const { build } = await builds.get(principalOf(req), req.params.buildId);
      if (req.query.follow) {
        // A stream: written as lines arrive; a client that goes away stops the reading.
        const gone = new AbortController();
        reply.raw.on('close', () => gone.abort());
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'application/x-ndjson; charset=utf-8',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        try {
          for await (const item of builds.follow(build.id, gone.signal)) {
            const out =
              item.kind === 'line'
                ? { type: 'line', ...presentLine(item.row) }
                : { type: 'end', build: presentBuild(item.build) };
            if (!res.write(`${JSON.stringify(out)}\n`))
              await new Promise((r) => (gone.signal.aborted ? r(null) : res.once('drain', r)));
          }
        } catch (err) {
          req.log.warn({ err, buildId: build.id }, 'build log stream ended on an error');
        }
        res.end();
        return reply;
      }
      const page = await keysetPage(
        cursors,
        `build-logs:${build.id}`,
        req.query,
        (after, n) => builds.logs(build.id, after, n),
        presentLine,
      );
      return send(reply, BuildLogsResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/builds/:buildId/events',
    operationId: 'getBuildEvents',
    summary: 'A build’s state changes',
    description:
      'Each state the build entered (`waiting_for_source`, `uploading_source`, `queued`, `running`, then one of `succeeded`, `failed`, `canceled`, `skipped`), oldest first, with when.',
    tags: ['Builds'],
    auth: READ,
    params: BuildParams,
    responses: { 200: BuildEventsResponse },
    handler: async (req, reply) => {
      const { build } = await builds.get(principalOf(req), req.params.buildId);
      const rows = await builds.statusChanges(build.id);
      return send(reply, BuildEventsResponse, {
        data: rows.map((r) => ({ id: r.id, status: r.status as never, at: r.created_at })),
      });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/builds/:buildId/cancel',
    operationId: 'cancelBuild',
    summary: 'Cancel a build',
    description:
      'Idempotent. A build not yet running is canceled at once; a running one has its whole process group killed and ends `canceled` moments later (`cancelRequested` is true meanwhile). A finished build is answered as it is.',
    tags: ['Builds'],
    auth: TRIGGER,
    params: BuildParams,
    responses: { 200: BuildResponse },
    handler: async (req, reply) => {
      const b = await builds.cancel(principalOf(req), req.params.buildId);
      return send(reply, BuildResponse, { data: presentBuild(b) });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/builds/:buildId/retry',
    operationId: 'retryBuild',
    summary: 'Retry a finished build',
    description:
      'A new build with the same source (the same archive, or the same URL and ref), branch and target. Only finished builds (`succeeded`, `failed`, `canceled`, `skipped`) can be retried.',
    tags: ['Builds'],
    auth: TRIGGER,
    params: BuildParams,
    responses: { 201: BuildResponse },
    handler: async (req, reply) => {
      const b = await builds.retry(principalOf(req), req.params.buildId);
      return send(reply, BuildResponse, { data: presentBuild(b) }, 201);
    },
  });

  // The source archive is a raw stream (never buffered): a catch-all parser in this context only.
  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    addRoute(child, {
      method: 'PUT',
      url: '/v1/builds/:buildId/source',
      operationId: 'uploadBuildSource',
      summary: 'Upload a build’s source archive',
      description:
        'The body is a .tar.gz or .zip of the source folder (read under the same caps as a publish’s archives). The build is then queued; a refused archive leaves it waiting for another.',
      tags: ['Builds'],
      auth: TRIGGER,
      params: BuildParams,
      bodyContentTypes: ['application/gzip', 'application/zip', 'application/octet-stream'],
      bodyOptional: true,
      responses: { 200: BuildResponse },
      handler: async (req, reply) => {
        const body = (req.body as unknown as Readable | undefined) ?? Readable.from([]);
        const name = req.headers['content-type']?.includes('zip') ? 'source.zip' : 'source.tar.gz';
        const b = await builds.acceptSource(principalOf(req), req.params.buildId, body, name);
        return send(reply, BuildResponse, { data: presentBuild(b) });
      },
    });
  });
}
