import type { CodeTable } from '../catalog.ts';

// `next` entries are copy-pasteable: `$SPACES_API_URL` is the server's public URL and `$SPACES_TOKEN`
// a credential, the same variables the `spaces` CLI reads.

/** Codes every endpoint can answer with. */
export const generalCodes = {
  invalid_request: {
    status: 400,
    summary: 'The request could not be read: malformed JSON, a bad header or an impossible combination.',
    suggestions: [
      'Check that the body is valid JSON and that `Content-Type` matches it.',
      'Compare the request with the operation in the OpenAPI document.',
    ],
    next: ['curl -s "$SPACES_API_URL/v1/openapi.json"'],
  },
  validation_error: {
    status: 400,
    summary: 'A field of the request breaks a rule of its schema; `pointer` names the field.',
    suggestions: [
      'Fix the field that `pointer` names (an RFC 6901 JSON Pointer into the body or query) and send the request again.',
      'The schema the request must follow is in the OpenAPI document; response bodies name theirs in `$schema`.',
    ],
    next: ['curl -s "$SPACES_API_URL/v1/openapi.json"'],
  },
  invalid_cursor: {
    status: 400,
    summary: 'The pagination cursor is malformed, was altered, or belongs to another listing.',
    suggestions: [
      'Start the listing again without `cursor`, then pass `pagination.nextCursor` from each page unchanged.',
      'Use a cursor only with the listing (and filters) that returned it.',
    ],
    next: ['curl -s -H "Authorization: Bearer $SPACES_TOKEN" "$SPACES_API_URL/v1/teams?limit=20"'],
  },
  not_found: {
    status: 404,
    summary: 'Nothing exists at this address, or it is outside what your credential can see.',
    suggestions: [
      'Check the id or slug in the path; ids are prefixed (`team_…`, `spc_…`).',
      'Objects of teams your credential does not belong to answer 404: check which account and team the credential is for.',
    ],
    next: ['curl -s -H "Authorization: Bearer $SPACES_TOKEN" "$SPACES_API_URL/v1/account"'],
  },
  method_not_allowed: {
    status: 405,
    summary: 'The path exists but not for this HTTP method; the `Allow` header lists the methods it takes.',
    suggestions: ['Use one of the methods in the `Allow` header (also in `details.allowed`).'],
  },
  missing_route_param: {
    status: 400,
    summary: 'A path parameter is empty.',
    suggestions: ['Fill in every `{parameter}` of the path; an empty segment (`//`) is not a value.'],
  },
  payload_too_large: {
    status: 413,
    summary: 'The request body is larger than this endpoint accepts.',
    suggestions: [
      'Send a smaller body. Publish large sites with the versions flow: a manifest, then one PUT per file.',
      'On your own server the limits are `SPACES_BODY_LIMIT` and `SPACES_MAX_*`; see the self-hosting guide.',
    ],
    next: ['curl -s "$SPACES_API_URL/docs/self-hosting.md"'],
  },
  request_header_fields_too_large: {
    status: 431,
    summary: 'The request line and headers together are larger than the server reads (about 16 KB).',
    suggestions: [
      'Send long values in the body instead of the query string or a header.',
      'Check for a header a proxy or a client repeats or grows (cookies, forwarded chains).',
    ],
  },
  request_timeout: {
    status: 408,
    summary: 'The request did not arrive in time: its headers or body came too slowly.',
    suggestions: [
      'Send the request again; on a slow link, publish large sites with the versions flow (one PUT per file).',
    ],
  },
  unsupported_media_type: {
    status: 415,
    summary: 'The request body’s Content-Type is not one this endpoint reads.',
    suggestions: [
      'Send the body with a `Content-Type` the endpoint reads (`details.accepted`), usually `application/json`.',
    ],
  },
  precondition_required: {
    status: 428,
    summary: 'This write needs a precondition header such as `If-Match`.',
    suggestions: [
      'Read the resource first and send its `ETag` back in `If-Match`, so concurrent edits cannot overwrite each other.',
    ],
  },
  resource_revision_changed: {
    status: 412,
    summary:
      'The resource changed since you read it; re-read it and apply your change to the current revision.',
    suggestions: [
      'Read the resource again, re-apply your change to what you get, and send it with the new `ETag` in `If-Match`.',
    ],
  },
  rate_limited: {
    status: 429,
    summary: 'Too many requests; wait for the number of seconds in `Retry-After`.',
    suggestions: [
      'Wait the number of seconds in the `Retry-After` header, then retry.',
      'Retry with exponential backoff rather than in a tight loop.',
    ],
  },
  internal_error: {
    status: 500,
    summary: 'Something failed on the server. Quote the `requestId` when you report it.',
    suggestions: [
      'Retry after a short wait; the request changed nothing if it failed before answering.',
      'If it keeps failing, report it with the `requestId` (also the `X-Request-Id` header).',
    ],
  },
  service_unavailable: {
    status: 503,
    summary: 'A dependency of the server (such as its database) is not reachable right now.',
    suggestions: [
      'Retry after a short wait.',
      'Operators: check `GET /readyz` and the database the server is configured with.',
    ],
    next: ['curl -s "$SPACES_API_URL/readyz"'],
  },
  feature_unavailable: {
    status: 501,
    summary: 'This server is not configured for the feature; `detail` names the setting that enables it.',
    suggestions: ['Ask the server’s operator to enable the setting named in `detail`.'],
  },
  unauthorized: {
    status: 401,
    summary:
      'No credential, or one that is unknown, expired or revoked. Send `Authorization: Bearer <token>`.',
    suggestions: [
      'Send a credential as `Authorization: Bearer <token>`: a session token or an API key (`sfa_…`).',
      'Sign in again or create a new API key, then retry.',
    ],
    next: [
      'spaces login',
      'curl -s -X POST "$SPACES_API_URL/v1/account/sessions" -H "content-type: application/json" -d \'{"email":"you@example.com","password":"…"}\'',
    ],
  },
  forbidden: {
    status: 403,
    summary: 'The credential is valid but may not do this: a missing scope or a role too low.',
    suggestions: [
      'Check the scopes of your credential (`credential.scopes` in `GET /v1/account`) against `details.requiredScope`.',
      'Create an API key with a preset that holds the scope, or ask a team owner or admin to do this.',
    ],
    next: [
      'curl -s -H "Authorization: Bearer $SPACES_TOKEN" "$SPACES_API_URL/v1/account"',
      'curl -s -X POST "$SPACES_API_URL/v1/account/api-keys" -H "Authorization: Bearer $SPACES_TOKEN" -H "content-type: application/json" -d \'{"name":"ci","preset":"space_admin"}\'',
    ],
  },
  csrf_failed: {
    status: 403,
    summary:
      'A request that changes something was authenticated by the browser session cookie but did not come from the dashboard itself: another site sent it (`Sec-Fetch-Site`), or the `X-CSRF-Token` header is missing or wrong.',
    suggestions: [
      'Reload the dashboard and try again: it sends the token the server set beside the session cookie.',
      'Programs should send `Authorization: Bearer <token>` instead of a cookie.',
    ],
  },
  credential_expired: {
    status: 401,
    summary: 'The credential was valid but its lifetime is over.',
    suggestions: ['Sign in again, or create a new API key and use it instead.'],
    next: ['spaces login'],
  },
  credential_revoked: {
    status: 401,
    summary: 'The credential was revoked.',
    suggestions: ['Use another credential: sign in again or create a new API key.'],
    next: ['spaces login'],
  },
  signup_closed: {
    status: 403,
    summary:
      'Self-service sign-up is off on this server (`SPACES_SIGNUP=closed`); ask its owner for an account.',
    suggestions: [
      'Ask the server’s owner to create your account (`POST /v1/users`) or to invite you to a team.',
      'Operators: start the server with `SPACES_SIGNUP=open` to let anyone sign up.',
    ],
    next: [
      'curl -s -X POST "$SPACES_API_URL/v1/users" -H "Authorization: Bearer $SPACES_TOKEN" -H "content-type: application/json" -d \'{"email":"new@example.com","name":"New person","password":"…"}\'',
    ],
  },
  email_taken: {
    status: 409,
    summary: 'An account with this e-mail address exists already.',
    suggestions: ['Sign in with that address instead of creating an account.'],
    next: ['spaces login'],
  },
  invalid_credentials: {
    status: 401,
    summary: 'The e-mail address or the password is wrong.',
    suggestions: [
      'Check the e-mail address and the password; repeated failures are rate limited.',
      'Ask the server’s owner to reset your account if you no longer know the password.',
    ],
  },
} satisfies CodeTable;
