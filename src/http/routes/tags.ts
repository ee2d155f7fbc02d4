import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { etagOf, parseIfMatch, revisionOf, type TagStep } from '../../domain/tags/service.ts';
import { PageQuery } from '../../schemas/common.ts';
import {
  CreateTagVersionBody,
  PublishTagVersionBody,
  ReplaceTagGraphBody,
  TagEnvironment,
  TagGraphResponse,
  TagReleaseListResponse,
  TagReleaseResponse,
  TagVersionListResponse,
  TagVersionResponse,
} from '../../schemas/tags.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { presentTagGraph, presentTagRelease, presentTagVersion } from '../presenters/tags.ts';
import { type AuthRequirement, addRoute } from '../route.ts';

const TeamParams = Type.Object({ teamId: Type.String({ minLength: 1, description: 'Team id or slug' }) });
const VersionParams = Type.Object({
  teamId: Type.String({ minLength: 1, description: 'Team id or slug' }),
  versionId: Type.String({ minLength: 1 }),
});
const EnvParams = Type.Object({ teamId: Type.String({ minLength: 1 }), environment: TagEnvironment });
const Page = Type.Object(PageQuery, { additionalProperties: false });

// The spec lists "space key, or general bearer" for the graph replace. A space key belongs to an
// anonymous space, which has no team, so it is accepted and then answered 404 like any team out of
// reach (the team lookup needs a person). The other tag routes take the same credentials alike.
const READ: AuthRequirement = { accept: ['general', 'space_key'], scope: 'spaces:read' };
const WRITE: AuthRequirement = { accept: ['general', 'space_key'], scope: 'spaces:write' };

/** Graphs may be pretty-printed; the 262,144-byte limit is checked on the compact encoding. */
const GRAPH_BODY_LIMIT = 1024 * 1024;

export function tagRoutes(app: FastifyInstance): void {
  const { tags, cursors } = app.services;
  const base = '/v1/teams/:teamId/tags';

  addRoute(app, {
    method: 'POST',
    url: `${base}/versions`,
    operationId: 'createTeamTagVersion',
    summary: 'Create a draft team tag version',
    description: 'Creates a mutable draft (graph revision 1): empty, or a copy of `baseVersionId`’s graph.',
    tags: ['Tags'],
    auth: WRITE,
    params: TeamParams,
    body: CreateTagVersionBody,
    bodyOptional: true,
    responses: { 201: TagVersionResponse },
    handler: async (req, reply) => {
      const row = await tags.createVersion(principalOf(req), req.params.teamId, req.body ?? {});
      return send(reply, TagVersionResponse, { data: presentTagVersion(row, []) }, 201);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: `${base}/versions`,
    operationId: 'listTeamTagVersions',
    summary: 'List team tag versions',
    description: 'Newest first.',
    tags: ['Tags'],
    auth: READ,
    params: TeamParams,
    querystring: Page,
    responses: { 200: TagVersionListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      let teamId = '';
      const page = await keysetPage(
        cursors,
        `tag-versions:${req.params.teamId}`,
        req.query,
        async (after, n) => {
          const r = await tags.listVersions(p, req.params.teamId, after, n);
          teamId = r.teamId;
          return r.rows;
        },
        (row) => row,
      );
      const releases = await tags.releasesOf(teamId);
      return send(reply, TagVersionListResponse, {
        ...page,
        data: page.data.map((row) => presentTagVersion(row, releases)),
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: `${base}/versions/:versionId`,
    operationId: 'getTeamTagVersion',
    summary: 'Get a team tag version',
    tags: ['Tags'],
    auth: READ,
    params: VersionParams,
    responses: { 200: TagVersionResponse },
    handler: async (req, reply) => {
      const row = await tags.getVersion(principalOf(req), req.params.teamId, req.params.versionId);
      const releases = await tags.releasesOf(row.team_id);
      return send(reply, TagVersionResponse, { data: presentTagVersion(row, releases) });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: `${base}/versions/:versionId/graph`,
    operationId: 'getTeamTagGraph',
    summary: 'Get a team tag version’s graph',
    description:
      'Sends `ETag: "<graphRevision>"`; pass it back in `If-Match` to replace the graph. `If-None-Match` with the current tag answers 304.',
    tags: ['Tags'],
    auth: READ,
    params: VersionParams,
    responses: { 200: TagGraphResponse, 304: 'The graph is still at the revision in If-None-Match' },
    handler: async (req, reply) => {
      const row = await tags.getVersion(principalOf(req), req.params.teamId, req.params.versionId);
      const etag = etagOf(revisionOf(row));
      reply.header('etag', etag);
      // If-None-Match uses weak comparison (RFC 9110 §13.1.2): W/"3" matches "3".
      const inm = req.headers['if-none-match'];
      if (inm?.split(',').some((t) => t.trim() === '*' || t.trim().replace(/^W\//, '') === etag)) {
        return reply.code(304).send();
      }
      return send(reply, TagGraphResponse, { data: presentTagGraph(row) });
    },
  });

  addRoute(app, {
    method: 'PUT',
    url: `${base}/versions/:versionId/graph`,
    operationId: 'replaceTeamTagGraph',
    summary: 'Replace a mutable team tag graph',
    description:
      'Replaces a draft’s graph when `If-Match` carries its current revision as an entity tag (`"3"`, the ETag of GET …/graph; strong comparison, so `W/"3"` never matches; `*` matches any). Stale → 412 `resource_revision_changed` with `details.current`; no If-Match → 428 `precondition_required`; a non-draft → 409 `version_closed`.',
    tags: ['Tags'],
    auth: WRITE,
    params: VersionParams,
    body: ReplaceTagGraphBody,
    bodyLimit: GRAPH_BODY_LIMIT,
    responses: { 200: TagGraphResponse },
    handler: async (req, reply) => {
      const row = await tags.replaceGraph(
        principalOf(req),
        req.params.teamId,
        req.params.versionId,
        req.body.graph as Record<string, unknown>,
        parseIfMatch(req.headers['if-match']),
      );
      reply.header('etag', etagOf(revisionOf(row)));
      return send(reply, TagGraphResponse, { data: presentTagGraph(row) });
    },
  });

  const steps: Array<[TagStep, string, string]> = [
    ['submit', 'Submit a draft for review', 'draft → submitted; the graph is frozen from here on.'],
    ['approve', 'Approve a submitted version', 'submitted → approved; team owners and admins only.'],
    ['abandon', 'Abandon a version', 'draft, submitted or approved → abandoned.'],
  ];
  for (const [step, summary, description] of steps) {
    addRoute(app, {
      method: 'POST',
      url: `${base}/versions/:versionId/${step}`,
      operationId: `${step}TeamTagVersion`,
      summary,
      description,
      tags: ['Tags'],
      auth: WRITE,
      params: VersionParams,
      responses: { 200: TagVersionResponse },
      handler: async (req, reply) => {
        const row = await tags.step(principalOf(req), req.params.teamId, req.params.versionId, step);
        const releases = await tags.releasesOf(row.team_id);
        return send(reply, TagVersionResponse, { data: presentTagVersion(row, releases) });
      },
    });
  }

  addRoute(app, {
    method: 'POST',
    url: `${base}/versions/:versionId/publish`,
    operationId: 'publishTeamTagVersion',
    summary: 'Publish a version to an environment',
    description:
      'Points the environment’s release (default `production`) at an approved or already published version; owners and admins only. Publishing an older version again rolls back.',
    tags: ['Tags'],
    auth: WRITE,
    params: VersionParams,
    body: PublishTagVersionBody,
    bodyOptional: true,
    responses: { 200: TagVersionResponse },
    handler: async (req, reply) => {
      const row = await tags.publish(
        principalOf(req),
        req.params.teamId,
        req.params.versionId,
        req.body?.environment ?? 'production',
      );
      const releases = await tags.releasesOf(row.team_id);
      return send(reply, TagVersionResponse, { data: presentTagVersion(row, releases) });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: `${base}/releases`,
    operationId: 'listTeamTagReleases',
    summary: 'List a team’s tag releases',
    description: 'One entry per environment that has a release (production, preview, development).',
    tags: ['Tags'],
    auth: READ,
    params: TeamParams,
    responses: { 200: TagReleaseListResponse },
    handler: async (req, reply) => {
      const rows = await tags.listReleases(principalOf(req), req.params.teamId);
      return send(reply, TagReleaseListResponse, { data: rows.map(presentTagRelease) });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: `${base}/releases/:environment`,
    operationId: 'getTeamTagRelease',
    summary: 'Get a team’s tag release for an environment',
    tags: ['Tags'],
    auth: READ,
    params: EnvParams,
    responses: { 200: TagReleaseResponse },
    handler: async (req, reply) => {
      const row = await tags.getRelease(principalOf(req), req.params.teamId, req.params.environment);
      return send(reply, TagReleaseResponse, { data: presentTagRelease(row) });
    },
  });
}
