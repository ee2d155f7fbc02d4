/**
 * The one API client of the dashboard: openapi-fetch over the types generated from the server's own
 * OpenAPI document (`openapi.d.ts`). Requests carry the session cookie (same origin) and, on anything
 * that changes state, the CSRF token the server set beside it (`spaces_xsrf`, readable by scripts of
 * this origin only) in `X-CSRF-Token`.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './openapi';

export type Schemas = components['schemas'];
export type Problem = Schemas['Problem'];
export type Space = Schemas['Space'];
export type Version = Schemas['Version'];

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function csrfToken(): string | null {
  const m = /(?:^|;\s*)spaces_xsrf=([^;]+)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]!) : null;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (SAFE.has(request.method)) return request;
    const token = csrfToken();
    if (token) request.headers.set('x-csrf-token', token);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(csrf);

/** A failed call, with the problem document the API answered (or one made up for a network error). */
export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}

function asProblem(error: unknown, response: Response | undefined): Problem {
  if (error && typeof error === 'object' && 'code' in error && 'title' in error) return error as Problem;
  return {
    type: 'about:blank',
    title: response ? `HTTP ${response.status}` : 'Network error',
    status: response?.status ?? 0,
    detail: response ? `The server answered ${response.status}.` : 'The server could not be reached.',
    code: 'network_error',
    requestId: response?.headers.get('x-request-id') ?? '',
  };
}

/** The `data`… of an openapi-fetch result, or a thrown `ProblemError` with the API's problem. */
export function must<D>(result: { data?: D; error?: unknown; response: Response }): D {
  if (result.error !== undefined || result.data === undefined) {
    if (result.response.ok && result.error === undefined) return undefined as D;
    throw new ProblemError(asProblem(result.error, result.response));
  }
  return result.data;
}

export function problemOf(err: unknown): Problem {
  if (err instanceof ProblemError) return err.problem;
  return asProblem(undefined, undefined);
}
