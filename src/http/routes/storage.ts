import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/problem.ts';
import { StorageKeyRotatedResponse, StorageListResponse } from '../../schemas/crons.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';
import { SpaceParams } from './spaces.ts';

const ObjectParams = Type.Object({
  spaceId: Type.String(),
  objectId: Type.String({ minLength: 1, maxLength: 64 }),
});

/** `env.STORAGE`'s objects: the owner's list, delete and key rotation, and the signed read URLs. */
export function storageRoutes(app: FastifyInstance): void {
  const { spaces, storage, cursors } = app.services;

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/storage',
    operationId: 'listStorageObjects',
    summary: 'List the objects of a space’s store',
    description:
      'What the space’s functions stored with `env.STORAGE.upload` (behaviour §11), newest first (default 50, max 100): id, type, size, read URL, when and by which version. Objects are unversioned: they outlive publishes and rollbacks.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    querystring: Type.Object(
      {
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
      },
      { additionalProperties: false },
    ),
    responses: { 200: StorageListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const page = await keysetPage(
        cursors,
        `storage:${space.id}`,
        { limit: req.query.limit ?? 50, ...(req.query.cursor ? { cursor: req.query.cursor } : {}) },
        (after, n) => storage.list(space.id, after, n),
        (row) => storage.present(row),
        (row) => `${row.created_at}|${row.id}`,
      );
      return send(reply, StorageListResponse, page);
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/spaces/:spaceId/storage/:objectId',
    operationId: 'deleteStorageObject',
    summary: 'Delete an object of a space’s store',
    description:
      'Removes the object and its bytes (unless a version or another object holds the same bytes); its read URL answers 404 from then on. 404 `storage_object_not_found` when the store has no such object.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:write' },
    params: ObjectParams,
    responses: { 204: 'Deleted' },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      if (!(await storage.delete(space.id, req.params.objectId)))
        throw new ApiError('storage_object_not_found', `The store has no object ${req.params.objectId}.`);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/storage/rotate-read-key',
    operationId: 'rotateStorageReadKey',
    summary: 'Rotate the read key of a space’s store',
    description:
      'A new key signs the objects’ read URLs: every URL given before answers 404 from now on (list the objects for the new ones). The objects are unchanged.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:write' },
    params: SpaceParams,
    bodyOptional: true,
    responses: { 200: StorageKeyRotatedResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const rotatedAt = await storage.rotateReadKey(space.id);
      return send(reply, StorageKeyRotatedResponse, { data: { rotatedAt } });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/storage/:spaceId/:objectId',
    operationId: 'readStorageObject',
    summary: 'Read an object by its signed URL',
    description:
      'The `url` of a stored object: its bytes with its type, for anyone holding the URL (no credential). Served with `X-Content-Type-Options: nosniff` and a sandboxing Content-Security-Policy. 404 `storage_object_not_found` for an unknown object or a signature the current read key did not make (after a rotation).',
    tags: ['Spaces'],
    auth: null,
    params: ObjectParams,
    querystring: Type.Object(
      { sig: Type.Optional(Type.String({ maxLength: 128 })) },
      { additionalProperties: false },
    ),
    responses: { 200: 'The object’s bytes' },
    handler: async (req, reply) => {
      const { spaceId, objectId } = req.params;
      const o = (await storage.verify(spaceId, objectId, req.query.sig))
        ? await storage.open(spaceId, objectId)
        : null;
      if (!o)
        throw new ApiError(
          'storage_object_not_found',
          'No object at this address (or the URL is no longer valid).',
        );
      reply
        .header('content-type', o.row.content_type)
        .header('content-length', String(o.row.size))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "sandbox; default-src 'none'")
        .header('cache-control', 'private, max-age=300');
      return reply.send(await o.body());
    },
  });
}
