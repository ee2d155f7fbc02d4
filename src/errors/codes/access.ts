import type { CodeTable } from '../catalog.ts';

/** Site access: grants, share links, password and machine credentials. */
export const accessCodes = {
  grant_not_found: { status: 404, summary: 'No grant with that id in this space (or it was revoked).' },
  invalid_grant: {
    status: 422,
    summary:
      'A grant field is not valid: paths start with `/` (or `!/`) and are not all negations, addresses are IPs or CIDR ranges, instants are ISO 8601, the target is `live`, `all-versions`, `version:<id>` or `branch:<name>`.',
  },
  share_link_not_found: {
    status: 404,
    summary: 'No share link with that id in this space (or it was revoked).',
  },
  access_credential_not_found: {
    status: 404,
    summary: 'No credential with that id in this space (or it was revoked).',
  },
  invalid_access_check: {
    status: 400,
    summary: 'The URL to check is not on this space’s hostnames, or the visitor described is not valid.',
  },
  password_rate_limited: {
    status: 429,
    summary:
      'Too many wrong passwords from this address or for this credential: wait the `Retry-After` seconds before trying again.',
  },
} satisfies CodeTable;
