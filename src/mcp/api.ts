/**
 * How the MCP server reaches the Spaces API. Its tools never run route logic of their own: each is a
 * call to the public HTTP API, so authentication, scopes, validation and problem documents are the
 * API's. `/v1/mcp` calls the app in-process with the caller's own `Authorization` (Fastify's
 * `inject`); `spaces mcp` (stdio) calls the server over HTTP with the CLI's stored credential.
 */

export interface ApiRequest {
  method: string;
  /** Path and nothing else: `/v1/spaces/abc`. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** `Accept` header; JSON when omitted. */
  accept?: string;
}

export interface ApiAnswer {
  status: number;
  /** The parsed JSON body, or undefined when the answer was not JSON. */
  json: unknown;
  text: string;
}

export interface ApiCaller {
  /** The API's origin as clients reach it (resource URIs are made from it). */
  readonly apiUrl: string;
  call(req: ApiRequest): Promise<ApiAnswer>;
}

/** A problem document as the API sends it (RFC 9457 plus our `code`, `pointer`, `suggestions`, `next`). */
export interface ProblemBody {
  title: string;
  status: number;
  detail: string;
  code: string;
  pointer?: string;
  suggestions?: string[];
  next?: string[];
  details?: Record<string, unknown>;
  requestId?: string;
}

export function isProblem(v: unknown): v is ProblemBody {
  return typeof v === 'object' && v !== null && typeof (v as ProblemBody).code === 'string' && 'title' in v;
}

/** Parses a body as JSON when it is JSON. */
export function answerOf(status: number, text: string, contentType: string | null): ApiAnswer {
  let json: unknown;
  if (contentType?.includes('json') && text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status, json, text };
}
