import type { CodeTable } from '../catalog.ts';

export const anonymousCodes = {
  anonymous_publish_rate_limited: {
    status: 429,
    summary:
      'Too many anonymous publishes from this address in the last hour; wait for `Retry-After` or sign in.',
    next: ['spaces login'],
  },
  anonymous_space_limit_reached: {
    status: 429,
    summary: 'This address has as many unclaimed spaces as allowed; claim or let some expire, or sign in.',
    next: ['spaces login', 'spaces claim'],
  },
  anonymous_expired: {
    status: 410,
    summary: 'The unclaimed space passed its claim window and stopped serving.',
  },
  invalid_claim_token: {
    status: 401,
    summary: 'The space key (claim token) is unknown, rotated or revoked.',
  },
  space_already_claimed: {
    status: 409,
    summary: 'The space was claimed already; its key no longer publishes.',
  },
  space_claim_unavailable: {
    status: 410,
    summary: 'The space can no longer be claimed: its recovery window is over.',
  },
  space_claimed_credential_available: {
    status: 409,
    summary:
      'The space was claimed and its owner lets this space key be exchanged, once, for a durable publish key: `POST /v1/claim/exchange` with the key as bearer.',
    suggestions: [
      'Exchange the key (`POST /v1/claim/exchange`, `Authorization: Bearer <space key>`) and publish with `data.credential.accessToken`.',
    ],
  },
  continuation_used: {
    status: 409,
    summary: 'This space key was exchanged for a publish key already; a voucher works once.',
    suggestions: [
      'Publish with the key the first exchange returned, or ask the space’s owner for a new one.',
    ],
  },
  continuation_unavailable: {
    status: 403,
    summary:
      'The space was claimed without allowing the key to continue (or whoever allowed it left the team, or the space is gone): the key can’t be exchanged.',
  },
  claim_target_not_found: { status: 404, summary: 'The team to claim into does not exist or is not yours.' },
  space_unclaimed: { status: 409, summary: 'This needs a claimed space; claim it into a team first.' },
} satisfies CodeTable;
