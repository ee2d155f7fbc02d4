import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  ErrorCode as RpcError,
} from '@modelcontextprotocol/sdk/types.js';
import type { ApiCaller } from './api.ts';
import type { OpenApiDoc } from './operations.ts';
import { buildTools, errorResult, type Tool } from './tools.ts';

export const MCP_INSTRUCTIONS = [
  'Spaces publishes static sites as immutable versions and serves each space on its own hostname.',
  'Publish with `publish_files` (inline files) or `publish_folder` (a local directory, `spaces mcp` only); the receipt carries `space.liveUrl`, `version.immutableUrl` and, for an anonymous publish, `claim` (keep the key and give the person the claim link).',
  'A publish to a space moves its `live` channel; `rollback` moves it back. Errors carry `code`, `pointer` (the argument at fault), `suggestions` and `next` (commands to run).',
  'Documentation: `search_docs`, and the resources (`llms.txt`, one Markdown resource per page).',
].join('\n');

export interface McpServerOptions {
  api: ApiCaller;
  /** The OpenAPI document the tools' input schemas come from (the server's own, once per process). */
  openapi: () => Promise<OpenApiDoc>;
  version: string;
  /** Tools only one transport offers (`publish_folder` reads the local disk: stdio only). */
  extraTools?: Tool[];
}

interface DocEntry {
  slug: string;
  title: string;
  summary: string;
}

/**
 * An MCP server over the Spaces API: the tools of `tools.ts`, and the documentation as resources
 * (`llms.txt`, `llms-full.txt` and one Markdown resource per page, read over the API). The low-level
 * `Server` is used because the tools' schemas are JSON Schemas from the OpenAPI document, not Zod.
 */
export function createMcpServer(o: McpServerOptions): Server {
  const server = new Server(
    { name: 'spaces', title: 'Spaces', version: o.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: MCP_INSTRUCTIONS,
    },
  );
  let tools: Promise<Tool[]> | null = null;
  const toolList = () => {
    tools ??= o.openapi().then((doc) => [...buildTools(doc, o.api), ...(o.extraTools ?? [])]);
    return tools;
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await toolList()).map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: t.annotations,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = (await toolList()).find((t) => t.name === req.params.name);
    if (!tool) throw new McpError(RpcError.InvalidParams, `Unknown tool ${req.params.name}`);
    try {
      return await tool.run((req.params.arguments ?? {}) as Record<string, unknown>);
    } catch (err) {
      return errorResult({
        title: 'Tool failed',
        status: 500,
        code: 'tool_failed',
        detail: err instanceof Error ? err.message : String(err),
      });
    }
  });

  const base = o.api.apiUrl.replace(/\/+$/, '');
  const docUri = (slug: string) => `${base}/docs/${slug}.md`;

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const index = await o.api.call({ method: 'GET', path: '/v1/docs', query: { tier: 'full' } });
    const entries = ((index.json as { data?: { entries?: DocEntry[] } })?.data?.entries ?? []) as DocEntry[];
    return {
      resources: [
        {
          uri: `${base}/llms.txt`,
          name: 'llms.txt',
          title: 'Spaces: llms.txt',
          description: 'The essential documentation pages, with links to their Markdown.',
          mimeType: 'text/plain',
        },
        {
          uri: `${base}/llms-full.txt`,
          name: 'llms-full.txt',
          title: 'Spaces: every guide in one file',
          description: 'The text of every essential and full documentation page.',
          mimeType: 'text/plain',
        },
        ...entries.map((e) => ({
          uri: docUri(e.slug),
          name: e.slug,
          title: e.title,
          description: e.summary,
          mimeType: 'text/markdown',
        })),
      ],
    };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: `${base}/docs/{+slug}.md`,
        name: 'docs-page',
        title: 'A documentation page',
        description: 'Any page by slug, including API reference and error pages (`errors/not_found`).',
        mimeType: 'text/markdown',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri;
    let path: string | null = null;
    if (uri === `${base}/llms.txt` || uri === `${base}/llms-full.txt`) path = uri.slice(base.length);
    else if (uri.startsWith(`${base}/docs/`) && uri.endsWith('.md')) path = uri.slice(base.length);
    if (!path || path.includes('..')) throw new McpError(RpcError.InvalidParams, `Unknown resource ${uri}`);
    const answer = await o.api.call({ method: 'GET', path, accept: 'text/markdown' });
    if (answer.status !== 200) throw new McpError(RpcError.InvalidParams, `Resource not found: ${uri}`);
    return {
      contents: [{ uri, mimeType: path.endsWith('.md') ? 'text/markdown' : 'text/plain', text: answer.text }],
    };
  });

  return server;
}
