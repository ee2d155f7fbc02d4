import type { CodeTable } from '../catalog.ts';

/** Codes every endpoint can answer with. */
export const generalCodes = {
  invalid_request: {
    status: 400,
    summary: 'The request could not be read: malformed JSON, a bad header or an impossible combination.',
  },
  validation_error: {
    status: 400,
    summary: 'A field of the request breaks a rule of its schema; `pointer` names the field.',
  },
  invalid_cursor: {
    status: 400,
    summary: 'The pagination cursor is malformed, was altered, or belongs to another listing.',
  },
  not_found: {
    status: 404,
    summary: 'Nothing exists at this address, or it is outside what your credential can see.',
  },
  method_not_allowed: {
    status: 405,
    summary: 'The path exists but not for this HTTP method; the `Allow` header lists the methods it takes.',
  },
  missing_route_param: { status: 400, summary: 'A path parameter is empty.' },
  payload_too_large: { status: 413, summary: 'The request body is larger than this endpoint accepts.' },
  unsupported_media_type: {
    status: 415,
    summary: 'The request body’s Content-Type is not one this endpoint reads.',
  },
  precondition_required: {
    status: 428,
    summary: 'This write needs a precondition header such as `If-Match`.',
  },
  resource_revision_changed: {
    status: 412,
    summary:
      'The resource changed since you read it; re-read it and apply your change to the current revision.',
  },
  rate_limited: {
    status: 429,
    summary: 'Too many requests; wait for the number of seconds in `Retry-After`.',
  },
  internal_error: {
    status: 500,
    summary: 'Something failed on the server. Quote the `requestId` when you report it.',
  },
  service_unavailable: {
    status: 503,
    summary: 'A dependency of the server (such as its database) is not reachable right now.',
  },
  feature_unavailable: {
    status: 501,
    summary: 'This server is not configured for the feature; `detail` names the setting that enables it.',
  },
  unauthorized: {
    status: 401,
    summary:
      'No credential, or one that is unknown, expired or revoked. Send `Authorization: Bearer <token>`.',
    suggestions: ['Sign in again or create a new API key, then retry with `Authorization: Bearer <token>`.'],
    next: ['spaces login'],
  },
  forbidden: {
    status: 403,
    summary: 'The credential is valid but may not do this: a missing scope or a role too low.',
  },
  credential_expired: { status: 401, summary: 'The credential was valid but its lifetime is over.' },
  credential_revoked: { status: 401, summary: 'The credential was revoked.' },
  signup_closed: {
    status: 403,
    summary:
      'Self-service sign-up is off on this server (`SPACES_SIGNUP=closed`); ask its owner for an account.',
  },
  email_taken: { status: 409, summary: 'An account with this e-mail address exists already.' },
  invalid_credentials: { status: 401, summary: 'The e-mail address or the password is wrong.' },
} satisfies CodeTable;
