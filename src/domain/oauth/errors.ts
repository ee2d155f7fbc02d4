/**
 * An OAuth 2.0 error (RFC 6749 §5.2 / RFC 8628 §3.5 / RFC 7009): the token, device, revocation and
 * introspection endpoints render it as `{ error, error_description }`, not as problem+json. It carries
 * no HTTP: src/http/routes/oauth.ts picks the status (401 for `invalid_client`, else 400) and renders
 * `basicChallenge` as `WWW-Authenticate: Basic`.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    /** The client tried HTTP Basic authentication and failed: the answer challenges it again. */
    readonly facts: { basicChallenge?: boolean } = {},
  ) {
    super(`${error}: ${description}`);
  }
}

export function oauthFail(error: string, description: string): never {
  throw new OAuthError(error, description);
}
