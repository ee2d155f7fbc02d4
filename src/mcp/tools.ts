import { type ApiCaller, isProblem, type ProblemBody } from './api.ts';
import {
  type InputOptions,
  MissingArgument,
  type OpenApiDoc,
  type OperationRef,
  operationInput,
  requestOf,
} from './operations.ts';

/** MCP tool annotations (hints for the host: what a call may change). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolResult {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** A tool as listed (`tools/list`) plus how to run it. */
export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  annotations: ToolAnnotations;
  run(args: Record<string, unknown>): Promise<ToolResult>;
}

/** A tool backed by one API operation; its input schema comes from the OpenAPI document. */
interface OperationTool {
  name: string;
  operationId: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  input?: InputOptions;
  /** Makes arguments the API would require optional (the tool fills them in). */
  optional?: string[];
  /** What the tool answers from the API's body (default: the body without `$schema`). */
  select?: (body: Record<string, unknown>) => unknown;
  /** A custom run (several calls); the default is one call of the operation. */
  run?: (ctx: RunContext, args: Record<string, unknown>) => Promise<ToolResult>;
}

export interface RunContext {
  api: ApiCaller;
  ref: OperationRef;
  /** One call of an operation by id (for tools made of several calls). */
  call(operationId: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** An API problem raised inside a tool, answered as the tool's error. */
export class ToolProblem extends Error {
  constructor(readonly problem: ProblemBody) {
    super(problem.detail || problem.title);
  }
}

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

/** Text for a person or a model: the problem's title, detail, pointer, suggestions and next commands. */
export function problemText(p: ProblemBody): string {
  const lines = [`${p.title}: ${p.detail}`, `code: ${p.code} (HTTP ${p.status})`];
  if (p.pointer !== undefined) lines.push(`pointer: ${p.pointer}`);
  if (p.suggestions?.length) lines.push('suggestions:', ...p.suggestions.map((s) => `- ${s}`));
  if (p.next?.length) lines.push('next:', ...p.next.map((s) => `- ${s}`));
  return lines.join('\n');
}

export function errorResult(p: ProblemBody): ToolResult {
  const problem: Record<string, unknown> = {
    title: p.title,
    detail: p.detail,
    code: p.code,
    status: p.status,
  };
  for (const k of ['pointer', 'suggestions', 'next', 'details', 'requestId'] as const)
    if (p[k] !== undefined) problem[k] = p[k];
  return { isError: true, content: [{ type: 'text', text: problemText(p) }], structuredContent: { problem } };
}

export function okResult(value: unknown): ToolResult {
  const text = JSON.stringify(value, null, 2);
  const structured =
    value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { result: value };
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

function withoutSchema(body: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = body;
  return rest;
}

const dataOf = (body: Record<string, unknown>) => body.data;

/** `rollback` without a version: the version the channel pointed at before its current one. */
async function previousVersion(ctx: RunContext, spaceId: string, channel: string): Promise<string> {
  const channels = (await ctx.call('listChannels', { spaceId })).data as Array<{
    name: string;
    versionId: string | null;
  }>;
  const current = channels.find((c) => c.name === channel)?.versionId;
  if (!current) {
    throw new ToolProblem({
      title: 'Nothing to roll back',
      status: 409,
      code: 'no_previous_version',
      detail: `Channel "${channel}" points at no version yet.`,
      suggestions: ['Publish first, or name the version to promote with `versionId`.'],
    });
  }
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const body = await ctx.call('channelHistory', { spaceId, name: channel, ...(cursor ? { cursor } : {}) });
    for (const move of body.data as Array<{ versionId: string; previousVersionId: string | null }>) {
      if (move.versionId === current && move.previousVersionId && move.previousVersionId !== current)
        return move.previousVersionId;
    }
    cursor = (body.pagination as { nextCursor?: string | null } | undefined)?.nextCursor ?? undefined;
    if (!cursor) break;
  }
  throw new ToolProblem({
    title: 'Nothing to roll back',
    status: 409,
    code: 'no_previous_version',
    detail: `Channel "${channel}" has no earlier version to roll back to.`,
    suggestions: ['Name the version to promote with `versionId` (list them with `list_versions`).'],
  });
}

/** The tools every transport offers. Names are stable: hosts keep them in their permissions. */
export const OPERATION_TOOLS: OperationTool[] = [
  {
    name: 'publish_files',
    operationId: 'publish',
    title: 'Publish inline files',
    description:
      'Publish a site from files given inline (`content` is UTF-8 text, or base64 with `encoding: "base64"`). Creates a space, or publishes to the one named by `spaceId`/`slug`. Answers the receipt: `space.liveUrl` (the live site), `version.immutableUrl` (this exact version, forever) and, for an anonymous publish, `claim` (the space key, the claim link and when it expires; shown once: keep it).',
    annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    input: { bodyComponent: 'InlinePublishRequest' },
    select: dataOf,
  },
  {
    name: 'list_spaces',
    operationId: 'listSpaces',
    title: 'List spaces',
    description:
      'The spaces the credential can reach, newest first. `q` filters by title or slug; follow `pagination.nextCursor` with `cursor`.',
    annotations: READ,
  },
  {
    name: 'get_space',
    operationId: 'getSpace',
    title: 'Get a space',
    description: 'A space by id or slug: its URLs, channels (which version is live), access and settings.',
    annotations: READ,
    select: dataOf,
  },
  {
    name: 'list_versions',
    operationId: 'listVersions',
    title: 'List versions',
    description: 'The versions of a space, newest first, with the channels pointing at each.',
    annotations: READ,
  },
  {
    name: 'get_version',
    operationId: 'getVersion',
    title: 'Get a version',
    description: 'One version (`ver_…`, `v12`, `12` or `latest`): its state, files, immutable URL.',
    annotations: READ,
    select: dataOf,
  },
  {
    name: 'diff_versions',
    operationId: 'diffVersions',
    title: 'Compare two versions',
    description: 'Paths added, changed and removed going from `against` to `versionId`.',
    annotations: READ,
    select: dataOf,
  },
  {
    name: 'promote_version',
    operationId: 'promoteVersion',
    title: 'Promote a version',
    description:
      'Point a channel (default `live`) at a ready version: what visitors of that channel see changes at once. Promoting an older version is a rollback. `expectedVersionId` makes it a compare-and-swap.',
    annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
    select: dataOf,
  },
  {
    name: 'rollback',
    operationId: 'promoteVersion',
    title: 'Roll back a channel',
    description:
      'Point a channel (default `live`) back at the version it served before its current one, or at `versionId` when given. Replaces what visitors see at once.',
    annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: false },
    optional: ['versionId'],
    input: { bodyOnly: ['channel'] },
    run: async (ctx, args) => {
      const spaceId = String(args.spaceId);
      const channel = typeof args.channel === 'string' ? args.channel : 'live';
      const versionId =
        typeof args.versionId === 'string' && args.versionId
          ? args.versionId
          : await previousVersion(ctx, spaceId, channel);
      const body = await ctx.call('promoteVersion', { spaceId, versionId, channel });
      return okResult(body.data);
    },
  },
  {
    name: 'delete_space',
    operationId: 'deleteSpace',
    title: 'Delete a space',
    description:
      'Stops serving the space at once and deletes it; it can be restored for 7 days, then its versions are purged.',
    annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
    select: dataOf,
  },
  {
    name: 'get_diagnostics',
    operationId: 'getSpaceDiagnostics',
    title: 'Diagnose a space',
    description:
      'Why a space serves what it serves: the live version, its settings and rules, problems found, and what to do about them.',
    annotations: READ,
    select: dataOf,
  },
  {
    name: 'get_config',
    operationId: 'getSpace',
    title: 'Read a space’s config',
    description:
      'The space’s settings overlay (`config`: redirects, headers, SPA fallback, …) and its `settingsDigest`; pass the digest to `set_config` as `baseSettingsDigest` to make the write a compare-and-swap.',
    annotations: READ,
    select: (body) => {
      const space = (body.data as { space: Record<string, unknown> }).space;
      return { spaceId: space.id, config: space.config ?? null, settingsDigest: space.settingsDigest };
    },
  },
  {
    name: 'set_config',
    operationId: 'updateSpace',
    title: 'Set a space’s config',
    description:
      'Replaces the space’s settings overlay (`null` clears it). The config is validated: an invalid one is refused with the `pointer` of the problem inside it. With `baseSettingsDigest` (from `get_config`) a concurrent change is refused instead of overwritten.',
    annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: { bodyOnly: ['config', 'baseSettingsDigest'], require: ['config'] },
    select: (body) => {
      const space = (body.data as { space: Record<string, unknown> }).space;
      return { spaceId: space.id, config: space.config ?? null, settingsDigest: space.settingsDigest };
    },
  },
  {
    name: 'search_docs',
    operationId: 'searchDocs',
    title: 'Search the documentation',
    description:
      'Ranked full-text search over the Spaces documentation (guides, CLI, API reference, error codes), with an excerpt per hit; read a page as the resource in its `url` + `.md`.',
    annotations: READ,
    select: dataOf,
  },
];

/**
 * Tool inputs per document: `/v1/mcp` makes a server per request (stateless), and resolving the
 * schemas on each was more than half of every call (a `get_space` over MCP: 12 ms before, 5 ms after,
 * against 2.7 ms for the direct GET, same run); the document is built once per process.
 */
const inputCache = new WeakMap<OpenApiDoc, Map<string, OperationRef>>();
function cachedInput(doc: OpenApiDoc, operationId: string, input?: InputOptions): OperationRef {
  let byKey = inputCache.get(doc);
  if (!byKey) {
    byKey = new Map();
    inputCache.set(doc, byKey);
  }
  const key = `${operationId} ${JSON.stringify(input ?? {})}`;
  let ref = byKey.get(key);
  if (!ref) {
    ref = operationInput(doc, operationId, input);
    byKey.set(key, ref);
  }
  return ref;
}

/** Builds the tools against one OpenAPI document and one API caller. */
export function buildTools(doc: OpenApiDoc, api: ApiCaller): Tool[] {
  const refs = new Map<string, OperationRef>();
  const refOf = (operationId: string) => {
    let r = refs.get(operationId);
    if (!r) {
      r = cachedInput(doc, operationId);
      refs.set(operationId, r);
    }
    return r;
  };
  const callRef = async (ref: OperationRef, args: Record<string, unknown>) => {
    let req: ReturnType<typeof requestOf>;
    try {
      req = requestOf(ref, args);
    } catch (err) {
      if (!(err instanceof MissingArgument)) throw err;
      throw new ToolProblem({
        title: 'Validation failed',
        status: 400,
        code: 'validation_error',
        detail: err.message,
        pointer: `/${err.argument}`,
      });
    }
    const answer = await api.call(req);
    if (answer.status >= 400) {
      if (isProblem(answer.json)) throw new ToolProblem(answer.json);
      throw new ToolProblem({
        title: `HTTP ${answer.status}`,
        status: answer.status,
        code: `http_${answer.status}`,
        detail: answer.text.slice(0, 500),
      });
    }
    return (answer.json ?? {}) as Record<string, unknown>;
  };
  const call = (operationId: string, args: Record<string, unknown>) => callRef(refOf(operationId), args);
  return OPERATION_TOOLS.map((t) => {
    const ref = cachedInput(doc, t.operationId, t.input);
    const schema = t.optional ? structuredClone(ref.inputSchema) : ref.inputSchema;
    if (t.optional && Array.isArray(schema.required)) {
      const req = (schema.required as string[]).filter((n) => !t.optional!.includes(n));
      if (req.length) schema.required = req;
      else delete schema.required;
    }
    const ctx: RunContext = { api, ref, call };
    return {
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: schema,
      annotations: { title: t.title, ...t.annotations },
      async run(args) {
        try {
          if (t.run) return await t.run(ctx, args);
          const body = await callRef(ref, args);
          return okResult((t.select ?? withoutSchema)(body));
        } catch (err) {
          if (err instanceof ToolProblem) return errorResult(err.problem);
          throw err;
        }
      },
    };
  });
}
