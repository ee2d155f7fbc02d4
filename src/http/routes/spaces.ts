import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { parseSpaceSort, spaceAfter, spaceCursorKey } from '../../domain/spaces/list-order.ts';
import type { Access, OperationRow, SpaceRow } from '../../domain/spaces/service.ts';
import { fail } from '../../errors/problem.ts';
import { PageQuery } from '../../schemas/common.ts';
import {
  CreateSpaceBody,
  OperationListResponse,
  OperationResponse,
  RenameSpaceBody,
  SpaceCreateResponse,
  SpaceListQuery,
  SpaceListResponse,
  SpaceOperationResponse,
  SpaceResponse,
  UpdateSpaceBody,
} from '../../schemas/spaces.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { presentOperation, presentSpace, presentSpaceCreated } from '../presenters/spaces.ts';
import { addRoute } from '../route.ts';

export const SpaceParams = Type.Object({
  spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }),
});

export function spaceRoutes(app: FastifyInstance): void {
  const { spaces, cursors } = app.services;

  /** `{data: {space, access}}` for a space row. */
  const sendSpace = async (reply: FastifyReply, row: SpaceRow) =>
    send(reply, SpaceResponse, {
      data: { space: presentSpace(spaces, await spaces.detail(row)), access: row.access as Access },
    });
  /** `{data: {space, operation}}` after a change that runs as an operation. */
  const sendSpaceOperation = async (
    reply: FastifyReply,
    space: SpaceRow,
    operation: OperationRow,
    status = 200,
  ) =>
    send(
      reply,
      SpaceOperationResponse,
      {
        data: {
          space: presentSpace(spaces, await spaces.detail(space)),
          operation: presentOperation(operation),
        },
      },
      status,
    );

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces',
    operationId: 'createSpace',
    problems: [409],
    summary: 'Create a space',
    description:
      'Creates a space under a team with a chosen or generated slug. The body may be JSON, a form or multipart (nested `config`/`principal` as JSON strings in forms); an empty body creates a space with defaults.',
    tags: ['Spaces'],
    auth: { accept: ['general'], scope: 'spaces:write' },
    body: CreateSpaceBody,
    bodyOptional: true,
    bodyContentTypes: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
    formJsonFields: ['config', 'principal', 'source'],
    responses: { 201: SpaceCreateResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const body = req.body;
      if (body.source) {
        fail(
          'feature_unavailable',
          'Creating a space from a repository needs a git host configured on this server.',
          {
            pointer: '/source',
          },
        );
      }
      const row = await spaces.create(p, {
        teamId: body.teamId,
        principal: body.principal,
        slug: body.slug,
        title: body.title,
        config: body.config ?? null,
        access: body.access,
        dataLocation: body.dataLocation,
      });
      const d = await spaces.detail(row);
      return send(
        reply,
        SpaceCreateResponse,
        { data: { space: presentSpaceCreated(spaces, d), access: row.access as Access } },
        201,
      );
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces',
    operationId: 'listSpaces',
    summary: 'List spaces',
    description:
      'The spaces the credential can access, newest first unless `sort` says otherwise (`name`, `-updated`, …; the cursor resumes in that order); `q` keeps those whose title or slug contains it (ignoring case); `state=deleted` lists the deleted ones that can still be restored.',
    tags: ['Spaces'],
    auth: { accept: ['general'], scope: 'spaces:read' },
    querystring: SpaceListQuery,
    responses: { 200: SpaceListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const search = req.query.q?.trim() ?? '';
      const order = parseSpaceSort(req.query.sort);
      // A cursor belongs to its filter and order: paging with another `q`, `team` or `sort` is refused.
      const sortTag = req.query.sort && req.query.sort !== '-created' ? `:${req.query.sort}` : '';
      const page = await keysetPage(
        cursors,
        `spaces:${p.credentialId}:${req.query.team ?? ''}:${search}:${req.query.state ?? ''}${sortTag}`,
        req.query,
        (after, n) =>
          spaces.list(
            p,
            req.query.team,
            spaceAfter(after, order),
            n,
            search,
            req.query.state === 'deleted',
            order,
          ),
        (row) => row,
        (row) => spaceCursorKey(row, order),
      );
      const details = await spaces.details(page.data);
      return send(reply, SpaceListResponse, {
        data: details.map((d) => presentSpace(spaces, d)),
        pagination: page.pagination,
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId',
    operationId: 'getSpace',
    summary: 'Get a space',
    description: 'By id, or by slug within your teams.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    responses: { 200: SpaceResponse },
    handler: async (req, reply) => {
      const row = await spaces.resolve(principalOf(req), req.params.spaceId);
      return sendSpace(reply, row);
    },
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/spaces/:spaceId',
    operationId: 'updateSpace',
    problems: [409, 412],
    summary: 'Update a space’s settings',
    description:
      'Changes `title`, `config` (replaces the whole overlay; `null` clears it), `noindex` and `access`. With `baseSettingsDigest` (the `settingsDigest` you read) the write is a compare-and-swap: a stale digest answers 412 `resource_revision_changed` with the current digest in `details.current`. `slug` alone renames (needs `spaces:rename`).',
    tags: ['Spaces'],
    auth: { accept: ['general'], scope: 'spaces:write' },
    params: SpaceParams,
    body: UpdateSpaceBody,
    responses: { 200: SpaceResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const { slug, ...rest } = req.body;
      let row;
      if (slug !== undefined) {
        const others = Object.keys(rest).filter((k) => k !== 'baseSettingsDigest');
        if (others.length > 0) {
          fail('validation_error', 'A rename (slug) must be the only change in its request.', {
            pointer: `/${others[0]}`,
          });
        }
        if (p.kind !== 'session' && !p.scopes.has('spaces:rename')) {
          fail('forbidden', 'Renaming needs the scope spaces:rename.', {
            details: { requiredScope: 'spaces:rename' },
          });
        }
        row = (await spaces.rename(p, req.params.spaceId, slug)).space;
      } else {
        row = await spaces.update(p, req.params.spaceId, rest);
      }
      return sendSpace(reply, row);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/rename',
    operationId: 'renameSpace',
    problems: [409],
    summary: 'Rename a space',
    description:
      'Changes the slug and managed hostname; the id stays. Previous hostnames keep answering with a 307 redirect to the current one for the life of the space and are never given to another space.',
    tags: ['Spaces'],
    auth: { accept: ['general'], scope: 'spaces:rename' },
    params: SpaceParams,
    body: RenameSpaceBody,
    responses: { 200: SpaceOperationResponse },
    handler: async (req, reply) => {
      const { space, operation } = await spaces.rename(principalOf(req), req.params.spaceId, req.body.slug);
      return sendSpaceOperation(reply, space, operation);
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/spaces/:spaceId',
    operationId: 'deleteSpace',
    summary: 'Delete a space',
    description:
      'Status becomes `deleting` and serving stops at once. Restore within 7 days with `POST /v1/spaces/{spaceId}/restore`; after that the delete operation purges its versions (its hostnames stay reserved).',
    tags: ['Spaces'],
    auth: { accept: ['general'], scope: 'spaces:write' },
    params: SpaceParams,
    responses: { 202: SpaceOperationResponse },
    handler: async (req, reply) => {
      const { space, operation } = await spaces.remove(principalOf(req), req.params.spaceId);
      return sendSpaceOperation(reply, space, operation, 202);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/restore',
    operationId: 'restoreSpace',
    summary: 'Restore a deleted space',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:write' },
    params: SpaceParams,
    responses: { 200: SpaceResponse },
    handler: async (req, reply) => {
      const row = await spaces.restore(principalOf(req), req.params.spaceId);
      return sendSpace(reply, row);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/operations',
    operationId: 'listSpaceOperations',
    summary: 'List a space’s operations',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    querystring: Type.Object(PageQuery, { additionalProperties: false }),
    responses: { 200: OperationListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const page = await keysetPage(
        cursors,
        `operations:${req.params.spaceId}`,
        req.query,
        (after, n) => spaces.listOperations(p, req.params.spaceId, after, n),
        presentOperation,
      );
      return send(reply, OperationListResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/operations/:operationId',
    operationId: 'getOperation',
    summary: 'Get an operation',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: Type.Object({ operationId: Type.String({ minLength: 1 }) }),
    responses: { 200: OperationResponse },
    handler: async (req, reply) => {
      const op = await spaces.getOperation(principalOf(req), req.params.operationId);
      return send(reply, OperationResponse, { data: presentOperation(op) });
    },
  });
}
