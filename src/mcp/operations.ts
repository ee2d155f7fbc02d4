/**
 * MCP tool inputs from the OpenAPI document. The document is generated from the same TypeBox schemas
 * the routes validate with (`src/http/openapi.ts`), so a tool's JSON Schema is never written twice:
 * path and query parameters and the JSON body's properties become one flat object of arguments, and
 * a call splits the arguments back into path, query and body.
 */

type Json = Record<string, unknown>;

export interface OperationRef {
  method: string;
  /** OpenAPI path template, `/v1/spaces/{spaceId}`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** The body's top-level properties when the operation takes a JSON object body. */
  bodyProps: string[];
  /** The flat input schema of the tool (`type: object`). */
  inputSchema: Json & { type: 'object'; properties: Json };
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, Json> };
}

/** Replaces `#/components/schemas/X` references with their schemas (the document has no cycles). */
export function resolveRefs(schema: unknown, doc: OpenApiDoc, depth = 0): unknown {
  if (depth > 32) throw new Error('schema references nest too deeply');
  if (Array.isArray(schema)) return schema.map((s) => resolveRefs(s, doc, depth + 1));
  if (!schema || typeof schema !== 'object') return schema;
  const obj = schema as Json;
  if (typeof obj.$ref === 'string') {
    const name = obj.$ref.replace('#/components/schemas/', '');
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`unknown schema reference ${obj.$ref}`);
    return resolveRefs(target, doc, depth + 1);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(obj)) out[k] = resolveRefs(v, doc, depth + 1);
  return out;
}

function findOperation(doc: OpenApiDoc, operationId: string): { method: string; path: string; op: Json } {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op && typeof op === 'object' && op.operationId === operationId)
        return { method: method.toUpperCase(), path, op };
    }
  }
  throw new Error(`the OpenAPI document has no operation ${operationId}`);
}

export interface InputOptions {
  /** Keep only these body properties (e.g. `config` of `updateSpace`). */
  bodyOnly?: string[];
  /** Keep only these query parameters. */
  queryOnly?: string[];
  /**
   * The component schema of the JSON body when the operation reads more than one media type and the
   * route parses it itself (`publish`: multipart, or JSON `InlinePublishRequest`).
   */
  bodyComponent?: string;
  /** Body properties that must be given even when the API takes them as optional. */
  require?: string[];
}

/** The operation and the flat JSON Schema of its arguments. */
export function operationInput(doc: OpenApiDoc, operationId: string, o: InputOptions = {}): OperationRef {
  const { method, path, op } = findOperation(doc, operationId);
  const properties: Json = {};
  const required: string[] = [];
  const pathParams: string[] = [];
  const queryParams: string[] = [];
  for (const p of (op.parameters ?? []) as Json[]) {
    const name = String(p.name);
    if (p.in === 'query' && o.queryOnly && !o.queryOnly.includes(name)) continue;
    const schema = { ...(resolveRefs(p.schema, doc) as Json) };
    if (p.description && !schema.description) schema.description = p.description;
    properties[name] = schema;
    if (p.required) required.push(name);
    (p.in === 'path' ? pathParams : queryParams).push(name);
  }
  const bodyProps: string[] = [];
  const content = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const json = o.bodyComponent
    ? { $ref: `#/components/schemas/${o.bodyComponent}` }
    : content?.['application/json']?.schema;
  if (json) {
    const body = resolveRefs(json, doc) as Json;
    const props = (body.properties ?? {}) as Json;
    const bodyRequired = new Set([...((body.required as string[]) ?? []), ...(o.require ?? [])]);
    for (const [name, schema] of Object.entries(props)) {
      if (o.bodyOnly && !o.bodyOnly.includes(name)) continue;
      if (name in properties) throw new Error(`${operationId}: body property ${name} shadows a parameter`);
      properties[name] = schema;
      bodyProps.push(name);
      if (bodyRequired.has(name)) required.push(name);
    }
  }
  return {
    method,
    path,
    pathParams,
    queryParams,
    bodyProps,
    inputSchema: {
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    },
  };
}

/** A required path argument was not given. */
export class MissingArgument extends Error {
  constructor(readonly argument: string) {
    super(`The argument ${argument} is required.`);
  }
}

/** Splits flat arguments into the request: path with its parameters filled in, query and body. */
export function requestOf(
  ref: OperationRef,
  args: Record<string, unknown>,
): { method: string; path: string; query: Record<string, string>; body: Json | undefined } {
  const path = ref.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const v = args[name];
    if (v === undefined || v === null || v === '') throw new MissingArgument(name);
    // A wildcard parameter (a docs slug) keeps its slashes.
    return String(v).split('/').map(encodeURIComponent).join('/');
  });
  const query: Record<string, string> = {};
  for (const q of ref.queryParams) if (args[q] !== undefined) query[q] = String(args[q]);
  let body: Json | undefined;
  for (const b of ref.bodyProps) {
    if (args[b] === undefined) continue;
    body ??= {};
    body[b] = args[b];
  }
  if (!body && ref.bodyProps.length && ref.method !== 'GET') body = {};
  return { method: ref.method, path, query, body };
}
