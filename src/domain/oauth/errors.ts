/**
 * An OAuth 2.0 error (RFC 6749 §5.2 / RFC 8628 §3.5 / RFC 7009): the token, device, revocation and
 * introspection endpoints render it as `{ error, error_description }`, not as problem+json.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`);
  }
}

export function oauthFail(error: string, description: string, status = 400): never {
  throw new OAuthError(error, description, status);
}
