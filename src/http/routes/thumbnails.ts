import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth.ts';
import { addRoute } from '../route.ts';
import { SpaceParams } from './spaces.ts';

export function thumbnailRoutes(app: FastifyInstance): void {
  const { thumbnails } = app.services;
  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/thumbnail',
    operationId: 'getSpaceThumbnail',
    summary: 'Get a space’s thumbnail',
    description:
      'A 1280×800 PNG of the live front page, rendered in headless Chromium after a version becomes live. Sends `ETag`; `If-None-Match` with it answers 304. 404 `thumbnail_not_found` (with `details.reason`) while there is none: no live version yet, still rendering, Chromium missing or thumbnails off.',
    tags: ['Spaces'],
    auth: { accept: ['general', 'space_key'], scope: 'spaces:read' },
    params: SpaceParams,
    responses: { 200: 'A PNG image (image/png)', 304: 'The thumbnail is still the one in If-None-Match' },
    handler: async (req, reply) => {
      const image = await thumbnails.image(principalOf(req), req.params.spaceId);
      reply.header('etag', image.etag).header('cache-control', 'private, no-cache');
      if (req.headers['if-none-match'] === image.etag) return reply.code(304).send();
      reply.header('content-type', image.contentType).header('content-length', String(image.size));
      return reply.send(await image.open());
    },
  });
}
