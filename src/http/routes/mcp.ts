import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SCOPES } from '../../domain/auth/scopes.ts';
import { ApiError } from '../../errors/problem.ts';
import { type ApiCaller, answerOf } from '../../mcp/api.ts';
import type { OpenApiDoc } from '../../mcp/operations.ts';
import { createMcpServer } from '../../mcp/server.ts';
import { ProtectedResourceMetadata } from '../../schemas/oauth.ts';
import { API_VERSION, buildOpenApi } from '../openapi.ts';
import { addRoute } from '../route.ts';

/** RFC 9728 path of the MCP endpoint's protected-resource metadata. */
export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/v1/mcp';

/**
 * The MCP server over Streamable HTTP at `/v1/mcp` (stateless: one server per POST, JSON answers),
 * and the OAuth 2.0 protected-resource metadata (RFC 9728) the MCP authorization spec asks for. The
 * tools call this same app in-process (`inject`) with the caller's own `Authorization`, so every
 * tool is authenticated, scoped and validated exactly as the HTTP API is.
 */
export function mcpRoutes(app: FastifyInstance): void {
  const { config } = app.services;
  const base = () => config.publicUrl.replace(/\/+$/, '');

  let openapi: Promise<OpenApiDoc> | null = null;
  const doc = () => {
    openapi ??= Promise.resolve(buildOpenApi(app.routeSpecs, config.publicUrl) as unknown as OpenApiDoc);
    return openapi;
  };

  const callerFor = (authorization: string): ApiCaller => ({
    apiUrl: base(),
    async call(r) {
      const res = await app.inject({
        method: r.method as 'GET',
        url: r.path,
        query: r.query ?? {},
        headers: {
          authorization,
          accept: r.accept ?? 'application/json',
          ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(r.body !== undefined ? { payload: JSON.stringify(r.body) } : {}),
      });
      const type = res.headers['content-type'];
      return answerOf(res.statusCode, res.payload, typeof type === 'string' ? type : null);
    },
  });

  const metadata = (resource: string) => ({
    resource,
    authorization_servers: [base()],
    scopes_supported: SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'Spaces',
    resource_documentation: `${base()}/docs/agents`,
  });
  const sendMetadata = (reply: FastifyReply, resource: string) =>
    reply
      .header('cache-control', 'public, max-age=300')
      .type('application/json; charset=utf-8')
      .send(metadata(resource));

  addRoute(app, {
    method: 'GET',
    url: '/.well-known/oauth-protected-resource',
    operationId: 'getProtectedResourceMetadata',
    summary: 'OAuth 2.0 protected resource metadata (RFC 9728) of the API',
    description:
      'Names the authorization server (this server, see `/.well-known/oauth-authorization-server`) and the scopes the API takes.',
    tags: ['OAuth'],
    auth: null,
    responses: { 200: ProtectedResourceMetadata },
    handler: async (_req, reply) => sendMetadata(reply, base()),
  });

  addRoute(app, {
    method: 'GET',
    url: MCP_RESOURCE_METADATA_PATH,
    operationId: 'getMcpProtectedResourceMetadata',
    summary: 'OAuth 2.0 protected resource metadata (RFC 9728) of the MCP endpoint',
    description:
      'What an MCP client reads after a 401 from `/v1/mcp` (its `WWW-Authenticate` names this URL as `resource_metadata`).',
    tags: ['OAuth'],
    auth: null,
    responses: { 200: ProtectedResourceMetadata },
    handler: async (_req, reply) => sendMetadata(reply, `${base()}/v1/mcp`),
  });

  app.register(async (child) => {
    // A refused or missing credential points the MCP client at the metadata (MCP authorization spec).
    child.addHook('onSend', async (_req, reply, payload) => {
      const challenge = reply.getHeader('www-authenticate');
      if (
        reply.statusCode === 401 &&
        typeof challenge === 'string' &&
        !challenge.includes('resource_metadata')
      )
        reply.header(
          'www-authenticate',
          `${challenge}, resource_metadata="${base()}${MCP_RESOURCE_METADATA_PATH}"`,
        );
      return payload;
    });

    const handle = async (req: FastifyRequest, reply: FastifyReply) => {
      // Bearer only: the tools pass the caller's Authorization on, which a browser cookie is not.
      if (!req.headers.authorization) {
        throw new ApiError('unauthorized', 'The MCP endpoint needs Authorization: Bearer <token>.', {
          facts: { challenge: {} },
        });
      }
      const server = createMcpServer({
        api: callerFor(String(req.headers.authorization ?? '')),
        openapi: doc,
        version: API_VERSION,
      });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      try {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
          if (typeof v === 'string') headers.set(k, v);
          else if (Array.isArray(v)) headers.set(k, v.join(', '));
        }
        const request = new Request(`${base()}${req.url}`, { method: req.method, headers });
        const res = await transport.handleRequest(request, { parsedBody: req.body });
        reply.code(res.status);
        res.headers.forEach((value, key) => {
          reply.header(key, value);
        });
        reply.header('cache-control', 'no-store');
        return reply.send(Buffer.from(await res.arrayBuffer()));
      } finally {
        await server.close();
      }
    };

    for (const method of ['POST', 'GET', 'DELETE'] as const) {
      addRoute(child, {
        method,
        url: '/v1/mcp',
        operationId: `mcp${method[0]}${method.slice(1).toLowerCase()}`,
        summary: 'MCP server (Streamable HTTP transport, stateless, JSON answers)',
        tags: ['Agents'],
        auth: { accept: ['general', 'space_key'] },
        hidden: true,
        responses: { 200: 'JSON-RPC answer' },
        handler: handle,
      });
    }
  });
}
