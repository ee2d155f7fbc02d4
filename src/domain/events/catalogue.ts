/**
 * The event catalogue (behaviour §14): every code an event may carry, by resource. `EMITTED_CODES`
 * are the ones the product writes today; the rest name features it doesn't have yet.
 */
export const CATALOGUE: Record<string, readonly string[]> = {
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
export const CATALOGUE_CODES: readonly string[] = Object.entries(CATALOGUE).flatMap(([r, actions]) =>
  actions.map((a) => `${r}.${a}`),
);

const KNOWN = new Set(CATALOGUE_CODES);

export function isCatalogueCode(code: string): boolean {
  return KNOWN.has(code);
}

/** Security-relevant codes: the team audit log shows these. */
export function isAuditCode(code: string): boolean {
  return (
    code.startsWith('api_key.') ||
    code.startsWith('team.member_') ||
    code === 'user.signed_in' ||
    code.startsWith('webhook.') ||
    code === 'team.access_defaults_updated' ||
    code === 'domain.verified' ||
    code === 'domain.control_lost' ||
    code === 'domain.created' ||
    code === 'domain.deleted'
  );
}

/** The audit log's filter as exact codes and prefixes (for the event repository). */
export const AUDIT_FILTER = {
  codes: [
    'user.signed_in',
    'team.access_defaults_updated',
    'domain.created',
    'domain.verified',
    'domain.control_lost',
    'domain.deleted',
  ],
  codePrefixes: ['api_key.', 'team.member_', 'webhook.'],
};

/**
 * The codes the product records today (each at the change it names, in its transaction). The
 * catalogue test (test/events/catalogue.test.ts) triggers every one of them through the API.
 */
export const EMITTED_CODES: readonly string[] = [
  'space.created',
  'space.claimed',
  'space.expired',
  'space.deleted',
  'space.config_updated',
  'space.slug_updated',
  'space.share_link_created',
  'space.share_link_revoked',
  'space.access_request_created',
  'space.access_request_resolved',
  'space.grant_created',
  'space.grant_updated',
  'space.grant_revoked',
  'space.access_logout_all',
  'version.created',
  'version.ready',
  'version.failed',
  'version.expired',
  'version.deleted',
  'channel.promoted',
  'build.created',
  'build.succeeded',
  'build.failed',
  'build.canceled',
  'domain.created',
  'domain.verified',
  'domain.verification_failed',
  'domain.control_lost',
  'domain.attached',
  'domain.detached',
  'domain.deleted',
  'variable.updated',
  'variable.deleted',
  'api_key.created',
  'api_key.revoked',
  'team.updated',
  'team.slug_updated',
  'team.access_defaults_updated',
  'team.member_added',
  'team.member_removed',
  'team.member_role_updated',
  'user.created',
  'user.signed_in',
  'webhook.created',
  'webhook.updated',
  'webhook.secret_rotated',
  'webhook.disabled',
  'webhook.deleted',
];
