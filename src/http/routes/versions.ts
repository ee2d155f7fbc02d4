import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/problem.ts';
import { PageQuery } from '../../schemas/common.ts';
import {
  ChannelHistoryResponse,
  ChannelListResponse,
  CreateVersionBody,
  PromoteBody,
  PromoteResponse,
  PublishReceipt,
  UploadResultResponse,
  VersionDiffResponse,
  VersionFileListResponse,
  VersionListQuery,
  VersionListResponse,
  VersionResponse,
} from '../../schemas/publishing.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { presentFile, presentMove, presentReceipt, presentVersion } from '../presenters/publishing.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const VersionParams = Type.Object({
  spaceId: Type.String({ minLength: 1 }),
  versionId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: '`ver_…`, `v12` or `12` (the twelfth version), or `latest`',
  }),
});
const ChannelParams = Type.Object({
  spaceId: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1, maxLength: 64 }),
});
// A wildcard, not `:token`: tokens name the path (up to 1 KiB) and exceed the router's param limit.
const TokenParams = Type.Object({
  '*': Type.String({ minLength: 1, maxLength: 8192, description: 'The upload token' }),
});
const Page = Type.Object(PageQuery, { additionalProperties: false });
const DiffQuery = Type.Object(
  { against: Type.String({ minLength: 1, maxLength: 64, description: 'The version to compare with' }) },
  { additionalProperties: false },
);

const READ = { accept: ['general', 'space_key'] as const, scope: 'spaces:read' as const };
const WRITE = { accept: ['general', 'space_key'] as const, scope: 'publish:write' as const };

export function versionRoutes(app: FastifyInstance): void {
  const { spaces, publishing, cursors, config } = app.services;
  const versionUrl = (spaceId: string, versionId: string) =>
    `${config.publicUrl}/v1/spaces/${spaceId}/versions/${versionId}`;

  // The manifest body has its own limit and code; checked before the body is read.
  app.register(async (child) => {
    child.addHook('preParsing', async (req) => {
      const len = Number(req.headers['content-length'] ?? 0);
      if (len > config.limits.maxManifestBytes) {
        throw new ApiError(
          'manifest_body_too_large',
          `The manifest is ${len} bytes; the limit is ${config.limits.maxManifestBytes}.`,
          { details: { limit: config.limits.maxManifestBytes } },
        );
      }
    });
    addRoute(child, {
      method: 'POST',
      url: '/v1/spaces/:spaceId/versions',
      operationId: 'createVersion',
      problems: [409, 422],
      summary: 'Create a version from a manifest',
      description:
        'Step 1 of the versions flow. Records the manifest (`[{path, sha256, size}]`) and answers with signed upload targets only for bytes the server does not hold yet (dedupe by sha256 across all spaces). Identical content to the live version (production target) creates nothing and answers `noop: true`.',
      tags: ['Versions'],
      auth: WRITE,
      params: SpaceParams,
      body: CreateVersionBody,
      bodyLimit: config.limits.maxManifestBytes,
      responses: { 201: PublishReceipt, 200: PublishReceipt },
      handler: async (req, reply) => {
        const p = principalOf(req);
        const space = await spaces.resolve(p, req.params.spaceId);
        const r = await publishing.createVersion(p, space, {
          files: req.body.files,
          target: req.body.target,
          message: req.body.message ?? null,
          source: req.body.source ?? null,
        });
        const data = await presentReceipt(config.publicUrl, spaces, publishing, r);
        return send(reply, PublishReceipt, { data }, r.noop ? 200 : 201);
      },
    });
  });

  // Upload bodies are raw streams (never buffered): a catch-all parser, in this context only.
  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    addRoute(child, {
      method: 'PUT',
      url: '/v1/uploads/*',
      operationId: 'uploadFile',
      summary: 'Upload one file’s bytes to a signed target',
      description:
        'The URL from `upload.targets[].url` is the credential: `curl --upload-file index.html <url>` works without other auth. The server hashes while streaming and refuses bytes that do not match the declared sha256 and size.',
      tags: ['Versions'],
      auth: null,
      params: TokenParams,
      responses: { 200: UploadResultResponse },
      handler: async (req, reply) => {
        const body = req.body as unknown as Readable | undefined;
        const len =
          req.headers['content-length'] !== undefined ? Number(req.headers['content-length']) : null;
        const stream = body ?? (await import('node:stream')).Readable.from([]);
        const { created, grant, spaceId } = await publishing.uploads.acceptToken(
          req.params['*'],
          stream,
          len,
        );
        return send(reply, UploadResultResponse, {
          data: {
            versionId: grant.versionId,
            received: 1,
            stored: created ? 1 : 0,
            bytes: created ? grant.size : 0,
            next: { action: 'finalize', url: `${versionUrl(spaceId, grant.versionId)}/finalize` },
          },
        });
      },
    });

    addRoute(child, {
      method: 'PUT',
      url: '/v1/spaces/:spaceId/versions/:versionId/uploads',
      operationId: 'uploadBatch',
      summary: 'Upload many files in one tar stream',
      description:
        'A tar stream (`application/x-tar`) whose entries are named by their paths in the version. Every entry must be declared in the manifest with the same size and digest; blobs the server holds already are skipped. The batch is made durable together.',
      tags: ['Versions'],
      auth: WRITE,
      params: VersionParams,
      responses: { 200: UploadResultResponse },
      handler: async (req, reply) => {
        const p = principalOf(req);
        const space = await spaces.resolve(p, req.params.spaceId);
        const body = req.body as unknown as Readable | undefined;
        if (!body) throw new ApiError('invalid_request', 'Send the files as a tar stream in the body.');
        const r = await publishing.uploads.acceptTar(space, req.params.versionId, body);
        return send(reply, UploadResultResponse, {
          data: {
            versionId: r.version.id,
            received: r.received,
            stored: r.stored,
            bytes: r.bytes,
            next: { action: 'finalize', url: `${versionUrl(space.id, r.version.id)}/finalize` },
          },
        });
      },
    });
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/versions/:versionId/finalize',
    operationId: 'finalizeVersion',
    problems: [409, 422],
    summary: 'Finalize a version',
    description:
      'Validates the whole snapshot, compiles `spaces.json(c)`, `_redirects` and `_headers`, renders templates, precomputes compressed variants and marks the version `ready`; a production version becomes `live` in the same transaction. Blocking diagnostics answer `version_failed` and leave `live` alone.',
    tags: ['Versions'],
    auth: WRITE,
    params: VersionParams,
    responses: { 200: PublishReceipt },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const r = await publishing.finalize(p, space, req.params.versionId);
      return send(reply, PublishReceipt, {
        data: await presentReceipt(config.publicUrl, spaces, publishing, r),
      });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/versions/:versionId/promote',
    operationId: 'promoteVersion',
    problems: [409, 412],
    summary: 'Point a channel at a version (promote, rollback)',
    description:
      'Moves a channel (default `live`) to any ready version in one transaction; promoting an older version is a rollback. `expectedVersionId` makes it a compare-and-swap.',
    tags: ['Versions'],
    auth: WRITE,
    params: VersionParams,
    body: PromoteBody,
    bodyOptional: true,
    responses: { 200: PromoteResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const body = req.body ?? {};
      const r = await publishing.channels.promote(
        p,
        space,
        req.params.versionId,
        body.channel ?? 'live',
        body.expectedVersionId,
      );
      const channels = (await publishing.channels.of([r.version.id])).get(r.version.id) ?? [];
      return send(reply, PromoteResponse, {
        data: {
          channel: r.channel,
          versionId: r.version.id,
          previousVersionId: r.previousVersionId,
          updatedAt: r.updatedAt,
          version: presentVersion(publishing, space, r.version, channels),
        },
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/versions',
    operationId: 'listVersions',
    summary: 'List versions',
    description: 'Every version of the space, newest first.',
    tags: ['Versions'],
    auth: READ,
    params: SpaceParams,
    querystring: VersionListQuery,
    responses: { 200: VersionListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const page = await keysetPage(
        cursors,
        `versions:${space.id}`,
        req.query,
        (after, n) => publishing.versions.list(space.id, after, n),
        (row) => row,
      );
      const ch = await publishing.channels.of(page.data.map((v) => v.id));
      return send(reply, VersionListResponse, {
        data: page.data.map((v) => presentVersion(publishing, space, v, ch.get(v.id) ?? [])),
        pagination: page.pagination,
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/versions/:versionId',
    operationId: 'getVersion',
    summary: 'Get a version',
    description: 'By id, by number (`v12` or `12`) or `latest`.',
    tags: ['Versions'],
    auth: READ,
    params: VersionParams,
    responses: { 200: VersionResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const v = await publishing.versions.resolve(space, req.params.versionId);
      const ch = await publishing.channels.of([v.id]);
      return send(reply, VersionResponse, { data: presentVersion(publishing, space, v, ch.get(v.id) ?? []) });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/versions/:versionId/files',
    operationId: 'listVersionFiles',
    summary: 'List a version’s files',
    description: 'The manifest, in path order, paged.',
    tags: ['Versions'],
    auth: READ,
    params: VersionParams,
    querystring: Page,
    responses: { 200: VersionFileListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const v = await publishing.versions.resolve(space, req.params.versionId);
      const listing = `files:${v.id}`;
      const limit = req.query.limit ?? 20;
      const after = req.query.cursor ? cursors.decode(listing, req.query.cursor) : null;
      const rows = await publishing.versions.filesPage(v, after, limit + 1);
      const hasMore = rows.length > limit;
      const pageRows = rows.slice(0, limit);
      const last = pageRows[pageRows.length - 1];
      return send(reply, VersionFileListResponse, {
        data: pageRows.map(presentFile),
        pagination: { nextCursor: hasMore && last ? cursors.encode(listing, last.path) : null, hasMore },
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/versions/:versionId/archive',
    operationId: 'downloadVersion',
    summary: 'Download a version as tar.gz',
    description: 'Streams every file of a ready version as a gzip-compressed tar archive.',
    tags: ['Versions'],
    auth: READ,
    params: VersionParams,
    responses: { 200: 'A tar.gz archive (application/gzip)' },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const v = await publishing.versions.resolve(space, req.params.versionId);
      const stream = publishing.versions.archive(v);
      reply
        .header('content-type', 'application/gzip')
        .header('content-disposition', `attachment; filename="${space.slug}-v${v.number}.tar.gz"`);
      return reply.send(stream);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/versions/:versionId/diff',
    operationId: 'diffVersions',
    summary: 'Compare two versions',
    description: 'Paths added, changed and removed going from `against` to this version.',
    tags: ['Versions'],
    auth: READ,
    params: VersionParams,
    querystring: DiffQuery,
    responses: { 200: VersionDiffResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const d = await publishing.versions.diff(space, req.params.versionId, req.query.against);
      return send(reply, VersionDiffResponse, {
        data: {
          versionId: d.version.id,
          againstVersionId: d.against.id,
          added: d.added,
          changed: d.changed,
          removed: d.removed,
        },
      });
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/spaces/:spaceId/versions/:versionId',
    operationId: 'deleteVersion',
    problems: [409],
    summary: 'Delete a version',
    description:
      'Drops the version’s files (the row stays, with status `deleted`). Refused with `version_in_use` while a channel points at it.',
    tags: ['Versions'],
    auth: WRITE,
    params: VersionParams,
    responses: { 200: VersionResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const v = await publishing.versions.delete(space, req.params.versionId, principalOf(req));
      return send(reply, VersionResponse, { data: presentVersion(publishing, space, v, []) });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/channels',
    operationId: 'listChannels',
    summary: 'List channels',
    description: 'Every named pointer of the space and the version it points at.',
    tags: ['Versions'],
    auth: READ,
    params: SpaceParams,
    responses: { 200: ChannelListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const rows = await publishing.channels.list(space.id);
      return send(reply, ChannelListResponse, {
        data: rows.map((c) => ({ name: c.name, versionId: c.version_id, updatedAt: c.updated_at })),
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/channels/:name/history',
    operationId: 'channelHistory',
    summary: 'A channel’s moves',
    description: 'Every move of the channel (publish, promote, rollback), newest first.',
    tags: ['Versions'],
    auth: READ,
    params: ChannelParams,
    querystring: Page,
    responses: { 200: ChannelHistoryResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const page = await keysetPage(
        cursors,
        `channel:${space.id}:${req.params.name}`,
        req.query,
        (after, n) => publishing.channels.history(space.id, req.params.name, after, n),
        presentMove,
      );
      return send(reply, ChannelHistoryResponse, page);
    },
  });
}
