import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/problem.ts';
import { schemaDocument } from '../../schemas/registry.ts';
import { sendProblem } from '../errors.ts';
import { buildOpenApi } from '../openapi.ts';
import { addRoute } from '../route.ts';

export function metaRoutes(app: FastifyInstance): void {
  const { database, config } = app.services;

  addRoute(app, {
    method: 'GET',
    url: '/healthz',
    operationId: 'health',
    summary: 'Liveness: the process is up',
    tags: ['Operations'],
    auth: null,
    responses: { 200: 'ok' },
    handler: async (_req, reply) => reply.type('text/plain').send('ok\n'),
  });

  addRoute(app, {
    method: 'GET',
    url: '/readyz',
    operationId: 'ready',
    summary: 'Readiness: started, not shutting down, and the database answers',
    tags: ['Operations'],
    auth: null,
    responses: { 200: 'ready' },
    handler: async (req, reply) => {
      const { started, draining } = app.services.lifecycle;
      if (!started || draining) {
        const why = draining ? 'The server is shutting down.' : 'The server is still starting.';
        return sendProblem(req, reply, new ApiError('service_unavailable', why));
      }
      try {
        await database.ping();
      } catch (err) {
        req.log.warn({ err }, 'readiness check failed');
        return sendProblem(req, reply, new ApiError('service_unavailable', 'The database is not reachable.'));
      }
      return reply.type('text/plain').send('ready\n');
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/openapi.json',
    operationId: 'getOpenApi',
    summary: 'The OpenAPI 3.1 document of this API',
    tags: ['Meta'],
    auth: null,
    responses: { 200: 'OpenAPI document' },
    handler: async (_req, reply) =>
      reply.type('application/json').send(buildOpenApi(app.routeSpecs, config.publicUrl)),
  });

  addRoute(app, {
    method: 'GET',
    url: '/schemas/:name',
    operationId: 'getSchema',
    summary: 'A JSON Schema (2020-12) named by a body’s `$schema`',
    tags: ['Meta'],
    auth: null,
    params: Type.Object({ name: Type.String({ minLength: 1 }) }),
    responses: { 200: 'JSON Schema' },
    handler: async (req, reply) => {
      const name = req.params.name.replace(/\.json$/, '');
      const doc = schemaDocument(config.publicUrl, name);
      if (!doc) throw new ApiError('not_found', `There is no schema named ${name}.`);
      return reply.type('application/schema+json').header('cache-control', 'public, max-age=300').send(doc);
    },
  });
  // Problem `type` URLs (`/docs/errors/<code>`) are pages of the docs area (`routes/docs.ts`).
}
