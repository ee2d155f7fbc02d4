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
  claim_target_not_found: { status: 404, summary: 'The team to claim into does not exist or is not yours.' },
  space_unclaimed: { status: 409, summary: 'This needs a claimed space; claim it into a team first.' },
} satisfies CodeTable;
