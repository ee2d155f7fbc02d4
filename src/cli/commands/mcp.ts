import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { type Static, Type } from '@sinclair/typebox';
import { type ApiAnswer, type ApiCaller, answerOf } from '../../mcp/api.ts';
import type { OpenApiDoc } from '../../mcp/operations.ts';
import { createMcpServer } from '../../mcp/server.ts';
import { errorResult, okResult, type Tool } from '../../mcp/tools.ts';
import { SpacesProblem, sendRaw, unwrap } from '../../sdk/index.ts';
import { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { type Action, CLI_VERSION } from '../program.ts';
import { type PublishResult, publish } from '../publish.ts';

/** The arguments of `publish_folder`: what `spaces publish` takes, as one JSON object. */
export const PublishFolderInput = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      description:
        'The directory (or one file, or a .zip / .tar.gz archive) to publish; relative to the directory `spaces mcp` runs in',
    }),
    space: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Space id, slug or live URL; default: the folder’s link, else a new space',
      }),
    ),
    target: Type.Optional(
      Type.Union([Type.Literal('production'), Type.Literal('preview')], {
        description: '`production` (default) moves the live channel; `preview` does not',
      }),
    ),
    message: Type.Optional(Type.String({ maxLength: 4096, description: 'A note kept with the version' })),
    slug: Type.Optional(Type.String({ minLength: 2, maxLength: 55, description: 'Slug of a new space' })),
    access: Type.Optional(
      Type.Union([Type.Literal('public'), Type.Literal('team'), Type.Literal('private')], {
        description: 'Who may see a space this publish creates',
      }),
    ),
    force: Type.Optional(
      Type.Boolean({ description: 'Publish even when it removes more than half of the live files' }),
    ),
  },
  { additionalProperties: false },
);

/** The API over HTTP with the CLI's credential; problem documents come back as answers, not throws. */
export function httpCaller(apiUrl: string, fetchOf: () => typeof fetch): ApiCaller {
  return {
    apiUrl,
    async call(r): Promise<ApiAnswer> {
      try {
        const url = new URL(`${apiUrl}${r.path.startsWith('/') ? '' : '/'}${r.path}`);
        for (const [k, v] of Object.entries(r.query ?? {}))
          if (v !== undefined) url.searchParams.set(k, String(v));
        const res = await sendRaw(fetchOf(), url.toString(), {
          method: r.method,
          headers: {
            accept: r.accept ?? 'application/json, application/problem+json',
            ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
        });
        return answerOf(res.status, await res.text(), res.headers.get('content-type'));
      } catch (err) {
        if (!(err instanceof SpacesProblem)) throw err;
        return { status: err.status || 502, json: err.problem, text: JSON.stringify(err.problem) };
      }
    },
  };
}

/** `publish_folder`: `spaces publish --json` run in-process, its result captured instead of printed. */
function publishFolderTool(ctx: Context, adoptKey: (key: string) => void): Tool {
  return {
    name: 'publish_folder',
    title: 'Publish a local folder',
    description:
      'Publish a directory from this machine as a new version (only changed files are uploaded; `.spaces/state.json` links the folder to its space for the next publish). Answers `siteUrl` (the live or preview URL), `immutableUrl`, the counts, and `claim` for an anonymous space (no credential configured): give the person its `claimUrl`; until it is claimed visitors see a notice and `claim.openUrl` is the publisher’s view. Without a credential, the other tools then act with that space’s key.',
    inputSchema: JSON.parse(JSON.stringify(PublishFolderInput)),
    annotations: { title: 'Publish a local folder', destructiveHint: false, openWorldHint: false },
    async run(raw) {
      const args = raw as Static<typeof PublishFolderInput>;
      if (typeof args.path !== 'string' || !args.path) {
        return errorResult({
          title: 'Validation failed',
          status: 400,
          code: 'validation_error',
          detail: 'path is required.',
          pointer: '/path',
        });
      }
      const out = new PassThrough();
      let captured = '';
      out.on('data', (d) => {
        captured += d;
      });
      const sink = new PassThrough();
      sink.resume();
      const sub = new Context(
        {
          ...ctx.opts,
          json: true,
          stream: false,
          ...(args.space ? { space: args.space } : {}),
          yes: Boolean(args.force),
        },
        { ...ctx.io, stdout: out, stderr: sink },
      );
      try {
        await publish(sub, args.path, {
          ...(args.target ? { target: args.target } : {}),
          ...(args.message ? { message: args.message } : {}),
          ...(args.slug ? { slug: args.slug } : {}),
          ...(args.access ? { access: args.access } : {}),
        });
      } catch (err) {
        if (err instanceof SpacesProblem) return errorResult(err.problem);
        if (err instanceof UsageError)
          return errorResult({
            title: 'Cannot publish',
            status: 400,
            code: 'usage_error',
            detail: err.message,
          });
        throw err;
      }
      const result = JSON.parse(captured) as PublishResult;
      // Without a person's credential the session goes on with the new space's key (kept in the
      // folder's link), so the other tools reach the space it just made.
      if (!ctx.token && result.claim) {
        const full = path.resolve(ctx.io.cwd, args.path);
        const dir = fs.statSync(full).isDirectory() ? full : path.dirname(full);
        const key = ctx.inProject(dir).linked?.spaceKey;
        if (key) adoptKey(key);
      }
      return okResult(result);
    },
  };
}

export const mcpActions: Record<string, Action> = {
  async mcp(ctx) {
    let token = ctx.apiToken;
    let fetcher = ctx.fetchWith(token);
    const server = createMcpServer({
      api: httpCaller(ctx.apiUrl, () => fetcher),
      openapi: async () =>
        (await unwrap(ctx.apiWith(token).GET('/v1/openapi.json'))) as unknown as OpenApiDoc,
      version: CLI_VERSION,
      extraTools: [
        publishFolderTool(ctx, (key) => {
          token = key;
          fetcher = ctx.fetchWith(key);
        }),
      ],
    });
    const transport = new StdioServerTransport(
      ctx.io.stdin as NodeJS.ReadStream as never,
      ctx.io.stdout as NodeJS.WriteStream as never,
    );
    const closed = new Promise<void>((resolve) => {
      server.onclose = resolve;
      ctx.io.stdin.once('end', resolve);
    });
    await server.connect(transport);
    await closed;
    await server.close();
  },
};
