import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { catalog, titleOf } from '../../errors/catalog.ts';
import { ApiError } from '../../errors/problem.ts';
import { schemaDocument } from '../../schemas/registry.ts';
import { isErrorCode, sendProblem } from '../errors.ts';
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
    summary: 'Readiness: the database answers',
    tags: ['Operations'],
    auth: null,
    responses: { 200: 'ready' },
    handler: async (req, reply) => {
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

  // Problem `type` URLs resolve to a page per code. The docs area renders the full page when it is
  // loaded; this fallback keeps every code's URL answering from the catalog alone.
  if (!app.hasRoute({ method: 'GET', url: '/docs/errors/:code' })) {
    addRoute(app, {
      method: 'GET',
      url: '/docs/errors/:code',
      operationId: 'getErrorPage',
      summary: 'The documentation page of an error code',
      tags: ['Meta'],
      auth: null,
      hidden: true,
      params: Type.Object({ code: Type.String({ minLength: 1 }) }),
      responses: { 200: 'HTML or Markdown page' },
      handler: async (req, reply) => {
        const code = req.params.code.replace(/\.md$/, '');
        if (!isErrorCode(code)) throw new ApiError('not_found', `There is no error code ${code}.`);
        const info = catalog[code];
        const md = `# ${titleOf(code)} (\`${code}\`)\n\nHTTP status: ${info.status}\n\n${info.summary}\n`;
        const wantsMd = req.params.code.endsWith('.md') || /text\/markdown/.test(req.headers.accept ?? '');
        if (wantsMd) return reply.type('text/markdown; charset=utf-8').send(md);
        const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
        return reply
          .type('text/html; charset=utf-8')
          .send(
            `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(titleOf(code))} — Spaces</title></head><body><main><h1>${esc(titleOf(code))}</h1><p><code>${esc(code)}</code> · HTTP ${info.status}</p><p>${esc(info.summary)}</p></main></body></html>`,
          );
      },
    });
  }
}
