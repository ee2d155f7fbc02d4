/**
 * The event catalogue of behaviour §14, the codes a webhook's `events` filter may name: `*` (all),
 * an exact code (`version.ready`) or a whole resource (`version.*`).
 */
const CATALOGUE: Record<string, readonly string[]> = {
  space: [
    'created',
    'claimed',
    'transferred',
    'expired',
    'disabled',
    'enabled',
    'deleted',
    'config_updated',
    'slug_updated',
    'access_logout_all',
    'access_transfer_scrub',
    'share_link_created',
    'share_link_revoked',
    'access_request_created',
    'access_request_resolved',
    'grant_created',
    'grant_updated',
    'grant_revoked',
  ],
  site: ['provision_requested', 'placement_hold_set', 'placement_hold_cleared', 'burst_toggled'],
  version: ['created', 'ready', 'warning', 'failed', 'expired', 'canceled', 'deleted'],
  channel: ['promoted'],
  build: ['created', 'succeeded', 'failed', 'canceled', 'skipped'],
  domain: [
    'created',
    'verified',
    'verification_failed',
    'control_lost',
    'dns_updated',
    'nameservers_updated',
    'attached',
    'activated',
    'blocked',
    'detached',
    'deleted',
  ],
  transfer: ['requested', 'confirmed', 'completed', 'canceled', 'expired', 'failed'],
  variable: ['updated', 'deleted'],
  api_key: ['created', 'updated', 'revoked'],
  agent_handoff: ['created', 'redeemed', 'revoked'],
  webhook: ['created', 'updated', 'secret_rotated', 'disabled', 'deleted'],
  team: [
    'updated',
    'slug_updated',
    'access_defaults_updated',
    'member_added',
    'member_removed',
    'member_role_updated',
    'builds_deploys_quota_exceeded',
  ],
  tenant: ['past_due', 'suspended', 'reactivated', 'deleted'],
  comment: ['token_minted', 'created', 'reply_created', 'archived', 'unarchived'],
  abuse_report: ['created', 'updated'],
  claim: ['blocked_takedown', 'authority_rotated'],
  feedback: ['lead_claim_pending'],
  user: [
    'created',
    'signed_in',
    'deleted',
    'two_factor_enabled',
    'two_factor_disabled',
    'impersonation_started',
    'impersonation_stopped',
  ],
};

/** Every catalogue code, `resource.action`. */
export const EVENT_CODES: ReadonlySet<string> = new Set(
  Object.entries(CATALOGUE).flatMap(([resource, actions]) => actions.map((a) => `${resource}.${a}`)),
);
const RESOURCES: ReadonlySet<string> = new Set(Object.keys(CATALOGUE));

export const MAX_EVENT_FILTERS = 100;

/** The index of the first filter that names no code of the catalogue, or -1 when all are known. */
export function unknownFilterIndex(filters: readonly string[]): number {
  return filters.findIndex((f) => {
    if (f === '*') return false;
    if (f.endsWith('.*')) return !RESOURCES.has(f.slice(0, -2));
    return !EVENT_CODES.has(f);
  });
}

/** Whether an event code passes a webhook's filters (empty = all). */
export function filterMatches(filters: readonly string[], code: string): boolean {
  if (filters.length === 0) return true;
  for (const f of filters) {
    if (f === '*' || f === code) return true;
    if (f.endsWith('.*') && code.startsWith(f.slice(0, -1))) return true;
  }
  return false;
}
