import type { CodeTable } from '../catalog.ts';

/**
 * Problem codes of the OAuth area. The token, device, revocation and introspection endpoints answer
 * in OAuth's own JSON error format (`invalid_grant`, `authorization_pending`, …, see
 * docs/guides/oauth.md); these codes are for the problem+json endpoints around them.
 */
export const oauthCodes = {
  invalid_redirect_uri: {
    status: 400,
    summary:
      'A redirect URI must be an absolute https URL, an http URL on a loopback address, or a private-use scheme, without a fragment.',
  },
  oauth_app_public: {
    status: 409,
    summary: 'Public OAuth clients have no secret; only confidential apps can rotate one.',
  },
  invalid_user_code: {
    status: 400,
    summary: 'The device user code is unknown, expired or already used; start the login again on the device.',
  },
  device_verification_rate_limited: {
    status: 429,
    summary: 'Too many device codes were tried; wait a minute before entering another one.',
  },
} satisfies CodeTable;
