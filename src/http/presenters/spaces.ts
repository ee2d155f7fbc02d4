import type { Static } from '@sinclair/typebox';
import type { OperationRow, SpaceDetails, SpaceService } from '../../domain/spaces/service.ts';
import type { OperationSchema, Space, SpaceCreated } from '../../schemas/spaces.ts';

export function presentOperation(o: OperationRow): Static<typeof OperationSchema> {
  const op: Static<typeof OperationSchema> = {
    id: o.id,
    kind: o.kind,
    status: o.status as Static<typeof OperationSchema>['status'],
    resources: JSON.parse(o.resources),
    createdAt: o.created_at,
  };
  if (o.progress) op.progress = JSON.parse(o.progress);
  if (o.diagnostics) op.diagnostics = JSON.parse(o.diagnostics);
  if (o.finished_at) op.finishedAt = o.finished_at;
  return op;
}

/** The spec's Space object, computed from stored state. */
export function presentSpace(spaces: SpaceService, d: SpaceDetails): Static<typeof Space> {
  const s = d.space;
  const out: Static<typeof Space> = {
    id: s.id,
    tenantId: s.tenant_id,
    // Self-hosted: this server places every space itself; there is no external site provider.
    providerRef: null,
    providerClientId: null,
    teamId: s.team_id,
    teamSlug: d.teamSlug,
    principal:
      s.principal_type && s.principal_id
        ? {
            tenantId: s.tenant_id,
            principalType: s.principal_type as 'team' | 'external',
            principalId: s.principal_id,
          }
        : null,
    anonymous: s.anonymous === 1,
    slug: s.slug,
    title: s.title,
    status: s.status as Static<typeof Space>['status'],
    disabled: s.disabled_reason
      ? {
          at: s.disabled_at,
          reasonCode: s.disabled_reason as NonNullable<Static<typeof Space>['disabled']>['reasonCode'],
        }
      : null,
    claimState:
      s.anonymous === 1 || s.claimed_at
        ? { expiresAt: s.claim_expires_at, claimedAt: s.claimed_at, purgeAfter: s.purge_after }
        : null,
    defaultHostname: spaces.hostnameOf(s.public_name),
    publicName: s.public_name,
    liveUrl: spaces.liveUrlOf(s),
    thumbnail: d.thumbnailSha256 ? spaces.thumbnailOf(s, d.thumbnailSha256) : null,
    dataLocation: s.data_location,
    region: s.data_location,
    burstable: null,
    archivedBytes: 0,
    hasRuntime: false,
    channels: d.channels,
    config: s.config ? JSON.parse(s.config) : null,
    settingsDigest: s.settings_digest,
    noindex: s.noindex === 1,
    git: spaces.gitOf(s),
    operation: d.operation ? presentOperation(d.operation) : null,
    createdAt: s.created_at,
    updatedAt: s.updated_at,
  };
  if (s.expiry_extended_to) out.expiryExtension = { extendedTo: s.expiry_extended_to };
  return out;
}

export function presentSpaceCreated(spaces: SpaceService, d: SpaceDetails): Static<typeof SpaceCreated> {
  const s = d.space;
  return {
    ...presentSpace(spaces, d),
    mode: 'live',
    infrastructure: {
      region: s.data_location === 'auto' ? null : s.data_location,
      runtimeInstanceId: null,
      managementHostname: null,
      // A space's managed hostname answers as soon as the row exists: nothing left to converge.
      provisioningState: 'converged',
    },
  };
}
