import type { ErrorCode } from './catalog.ts';

/**
 * What an error knows beyond its code, said in the domain's terms. The domain never names an HTTP
 * header or status: src/http/errors.ts (`problemHeaders`) turns these facts into headers.
 */
export interface ErrorFacts {
  /** The caller may try again after this many seconds (rendered as `Retry-After`). */
  retryAfterSeconds?: number;
  /**
   * A bearer credential was missing, unreadable or refused (rendered as `WWW-Authenticate`). `error`
   * is RFC 6750's reason; `scope` is the scope an insufficient credential lacks.
   */
  challenge?: { error?: 'invalid_token' | 'invalid_request' | 'insufficient_scope'; scope?: string };
  /** The resource's current revision, for a retry conditional on it (rendered as `ETag`). */
  currentRevision?: number | string;
}

export interface ProblemExtras {
  pointer?: string;
  details?: Record<string, unknown>;
  suggestions?: string[];
  next?: string[];
  facts?: ErrorFacts;
}

/**
 * The coded error every layer throws: a catalog code, a sentence for people, and optional structured
 * extras. It carries no HTTP: the code's status lives in the catalog and only src/http/ maps codes to
 * statuses and facts to headers when it renders the problem document.
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
  ) {
    super(`${code}: ${detail}`);
  }

  get facts(): ErrorFacts {
    return this.extras.facts ?? {};
  }
}

export function fail(code: ErrorCode, detail: string, extras?: ProblemExtras): never {
  throw new ApiError(code, detail, extras);
}

export function notFound(what: string): ApiError {
  return new ApiError('not_found', `${what} was not found.`);
}

export function validationError(
  pointer: string,
  detail: string,
  details?: Record<string, unknown>,
): ApiError {
  return new ApiError('validation_error', detail, { pointer, details });
}
