import { catalog, type ErrorCode } from './catalog.ts';

export interface ProblemExtras {
  pointer?: string;
  details?: Record<string, unknown>;
  suggestions?: string[];
  next?: string[];
  /** Extra response headers (`Retry-After`, `Allow`, `WWW-Authenticate`, …). */
  headers?: Record<string, string>;
  /** Override the catalog status (rare: e.g. a code shared by two statuses in the reference). */
  status?: number;
}

/** The error every layer throws; the HTTP layer renders it as problem+json. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
  ) {
    super(`${code}: ${detail}`);
    this.status = extras.status ?? catalog[code].status;
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
