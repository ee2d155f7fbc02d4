/** Problem documents (RFC 9457 with our `code`, `pointer`, `suggestions`, `next`) as a typed error. */
import type { components } from './schema.ts';

/** An RFC 9457 problem document with our `code`, `pointer`, `suggestions` and `next`. */
export type Problem = components['schemas']['Problem'];

/** A problem answered by the API (or made up for an unreachable server), thrown by every helper. */
export class SpacesProblem extends Error {
  constructor(
    readonly problem: Problem,
    readonly response: Response | null = null,
  ) {
    super(problem.detail || problem.title);
    this.name = 'SpacesProblem';
  }
  /** The stable error code (`validation_error`, `not_found`, …): match on this. */
  get code(): string {
    return this.problem.code;
  }
  get status(): number {
    return this.problem.status;
  }
  /** JSON Pointer to the input at fault (validation errors). */
  get pointer(): string | undefined {
    return this.problem.pointer;
  }
}

/**
 * A failed answer as a `SpacesProblem`: the problem document when the server sent one (missing
 * members filled from the response), else one made from the status and the first 500 characters.
 */
export function problemFrom(body: unknown, response: Response | null): SpacesProblem {
  const status = response?.status ?? 0;
  const requestId = response?.headers.get('x-request-id') ?? '';
  if (typeof body === 'object' && body !== null && typeof (body as Problem).code === 'string') {
    const b = body as Partial<Problem> & { code: string };
    return new SpacesProblem(
      {
        type: b.type ?? 'about:blank',
        title: b.title ?? response?.statusText ?? '',
        status: b.status ?? status,
        detail: b.detail ?? '',
        code: b.code,
        requestId: b.requestId ?? requestId,
        ...(b.pointer ? { pointer: b.pointer } : {}),
        ...(b.details ? { details: b.details } : {}),
        ...(b.suggestions ? { suggestions: b.suggestions } : {}),
        ...(b.next ? { next: b.next } : {}),
      },
      response,
    );
  }
  const text = typeof body === 'string' ? body : '';
  return new SpacesProblem(
    {
      type: 'about:blank',
      title: response?.statusText || `HTTP ${status}`,
      status,
      code: status === 404 ? 'not_found' : `http_${status}`,
      detail: text.slice(0, 500) || `The server answered ${status}.`,
      requestId,
    },
    response,
  );
}
