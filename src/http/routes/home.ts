import type { FastifyInstance } from 'fastify';
import { prefers } from '../../domain/docs/render.ts';
import { ServiceIndexResponse } from '../../schemas/home.ts';
import { API_VERSION } from '../openapi.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';
import { dashboardPage } from './dashboard.ts';

const ABOUT =
  'Spaces is a self-hostable publishing service: publish immutable versions of sites through its HTTP API or the `spaces` CLI, each site on its own hostname, and roll back by moving a channel.';

/**
 * `GET /` on the API host: the address the first start prints. A browser gets the web dashboard
 * (dashboard.ts; signed in with the same `spaces_session` cookie as the other HTML pages); a program
 * gets JSON with links.
 */
export function homeRoutes(app: FastifyInstance): void {
  const services = app.services;
  const { config } = services;

  const links = () => ({
    openapi: `${config.publicUrl}/v1/openapi.json`,
    docs: `${config.publicUrl}/docs`,
    docsIndex: `${config.publicUrl}/v1/docs`,
    llms: `${config.publicUrl}/llms.txt`,
    signIn: `${config.publicUrl}/v1/account/sessions`,
    account: `${config.publicUrl}/v1/account`,
    publish: `${config.publicUrl}/v1/publish`,
  });

  const page = dashboardPage(services);

  addRoute(app, {
    method: 'GET',
    url: '/',
    operationId: 'home',
    summary: 'What this server is, with links (JSON); the dashboard for browsers',
    description:
      'Content negotiation on `Accept`: clients that rank `text/html` above `application/json` (browsers) get the web dashboard (sign-in, spaces, publishing, settings, API keys, team); everyone else gets this JSON with links to the OpenAPI document, the docs and the main entry points.',
    tags: ['Meta'],
    auth: null,
    responses: { 200: ServiceIndexResponse },
    handler: async (req, reply) => {
      reply.header('vary', 'Accept, Cookie');
      if (!prefers(req.headers.accept, 'text/html', 'application/json')) {
        return send(reply, ServiceIndexResponse, {
          data: { name: 'Spaces', description: ABOUT, apiVersion: API_VERSION, links: links() },
        });
      }
      return page(req, reply);
    },
  });
}
