import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, PageEnvelope, PageQuery } from './common.ts';
import { defineSchema } from './registry.ts';

import { SpaceConfig } from './space-config.ts';

/** The settings overlay: the closed SpaceConfig schema (cross-field rules run in validateSpaceConfig). */
export const SpaceConfigRef = SpaceConfig;

export const DisabledReason = Type.Union(
  ['anonymous_expired', 'abuse_takedown', 'tenant_suspended', 'site_suspended', 'author_removed'].map((s) =>
    Type.Literal(s),
  ),
);
const CreateDisabledReason = Type.Union(
  [
    'anonymous_expired',
    'abuse_takedown',
    'tenant_suspended',
    'site_suspended',
    'author_removed',
    'publish_failed',
    'archived',
  ].map((s) => Type.Literal(s)),
);

export const OperationSchema = defineSchema(
  'Operation',
  Type.Object(
    {
      id: Type.String(),
      kind: Type.String(),
      status: Type.Union(
        ['queued', 'running', 'succeeded', 'failed', 'canceled'].map((s) => Type.Literal(s)),
      ),
      resources: Type.Array(
        Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
      ),
      progress: Type.Optional(
        Type.Object(
          {
            total: Type.Integer({ minimum: 0 }),
            completed: Type.Integer({ minimum: 0 }),
            failed: Type.Integer({ minimum: 0 }),
          },
          { additionalProperties: false },
        ),
      ),
      diagnostics: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
      createdAt: DateTime,
      finishedAt: Type.Optional(DateTime),
    },
    { additionalProperties: false },
  ),
);

function spaceProperties(disabledReason: typeof DisabledReason | typeof CreateDisabledReason) {
  return {
    id: Type.String(),
    tenantId: Type.String(),
    providerRef: Nullable(Type.String()),
    providerClientId: Nullable(Type.String()),
    teamId: Nullable(Type.String()),
    teamSlug: Nullable(Type.String()),
    principal: Nullable(
      Type.Object(
        {
          tenantId: Type.String(),
          principalType: Type.Union([Type.Literal('team'), Type.Literal('external')]),
          principalId: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
    anonymous: Type.Boolean(),
    slug: Type.String(),
    title: Type.String(),
    status: Type.Union(
      ['provisioning', 'active', 'updating', 'deleting', 'failed'].map((s) => Type.Literal(s)),
    ),
    disabled: Nullable(
      Type.Object({ at: Nullable(DateTime), reasonCode: disabledReason }, { additionalProperties: false }),
    ),
    claimState: Nullable(
      Type.Object(
        { expiresAt: Nullable(DateTime), claimedAt: Nullable(DateTime), purgeAfter: Nullable(DateTime) },
        { additionalProperties: false },
      ),
    ),
    expiryExtension: Type.Optional(
      Nullable(Type.Object({ extendedTo: DateTime }, { additionalProperties: false })),
    ),
    defaultHostname: Type.String(),
    publicName: Type.String(),
    liveUrl: Type.String(),
    thumbnail: Nullable(
      Type.Object(
        {
          kind: Type.Union([Type.Literal('screenshot'), Type.Literal('image')]),
          provider: Type.Union([Type.Literal('provider-screenshots'), Type.Literal('provider-accelerator')]),
          url: Type.String({ format: 'uri' }),
          sourceUrl: Type.String({ format: 'uri' }),
        },
        { additionalProperties: false },
      ),
    ),
    dataLocation: Type.String(),
    region: Type.String(),
    burstable: Nullable(Type.Boolean()),
    archivedBytes: Type.Integer({ minimum: 0 }),
    hasRuntime: Type.Boolean(),
    channels: Type.Record(
      Type.String(),
      Type.Object({ versionId: Type.String(), updatedAt: DateTime }, { additionalProperties: false }),
    ),
    config: Nullable(SpaceConfigRef),
    settingsDigest: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    noindex: Type.Boolean(),
    git: Nullable(
      Type.Object(
        {
          managedBy: Type.Union([Type.Literal('service'), Type.Literal('githost')]),
          remoteUrl: Nullable(Type.String()),
          repository: Nullable(Type.String()),
          defaultBranch: Nullable(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
    operation: Nullable(OperationSchema),
    createdAt: DateTime,
    updatedAt: DateTime,
  };
}

export const Space = defineSchema(
  'Space',
  Type.Object(spaceProperties(DisabledReason), { additionalProperties: false }),
);

export const SpaceCreated = defineSchema(
  'SpaceCreated',
  Type.Object(
    {
      ...spaceProperties(CreateDisabledReason),
      mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
      infrastructure: Nullable(
        Type.Object(
          {
            region: Nullable(Type.String()),
            runtimeInstanceId: Nullable(Type.String()),
            managementHostname: Nullable(Type.String()),
            provisioningState: Type.Union(
              ['provisioning', 'converged', 'degraded'].map((s) => Type.Literal(s)),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
);

export const AccessLevel = Type.Union([
  Type.Literal('private'),
  Type.Literal('team'),
  Type.Literal('public'),
]);

export const CreateSpaceBody = defineSchema(
  'CreateSpaceRequest',
  Type.Object(
    {
      teamId: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
      principal: Type.Optional(
        Type.Object(
          {
            type: Type.Union([Type.Literal('team'), Type.Literal('external')]),
            id: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^\\s/\\\\]+$' }),
          },
          { additionalProperties: false },
        ),
      ),
      slug: Type.Optional(Type.String({ minLength: 2, maxLength: 55 })),
      title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      config: Type.Optional(SpaceConfigRef),
      access: Type.Optional(AccessLevel),
      dataLocation: Type.Optional(Type.String()),
      source: Type.Optional(
        Type.Object(
          {
            provider: Type.String({ minLength: 1 }),
            installationId: Type.String({ minLength: 1 }),
            repositoryId: Type.String({ minLength: 1 }),
            repositoryFullName: Type.String({ minLength: 1 }),
            branch: Type.Optional(Type.String({ minLength: 1 })),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
);

export const SpaceCreateResponse = defineSchema(
  'SpaceCreateResponse',
  DataEnvelope(Type.Object({ space: SpaceCreated, access: AccessLevel }, { additionalProperties: false })),
);
export const SpaceResponse = defineSchema(
  'SpaceResponse',
  DataEnvelope(Type.Object({ space: Space, access: AccessLevel }, { additionalProperties: false })),
);
export const SpaceListResponse = defineSchema('SpaceListResponse', PageEnvelope(Space));
export const SpaceListQuery = Type.Object(
  {
    ...PageQuery,
    team: Type.Optional(Type.String({ minLength: 1 })),
    q: Type.Optional(
      Type.String({
        maxLength: 100,
        description:
          'Free-text filter, trimmed: spaces whose title or slug contains it, ignoring case. Keep it the same while paging with `cursor`.',
      }),
    ),
    sort: Type.Optional(
      Type.Union(
        ['-created', 'created', 'name', '-name', 'updated', '-updated'].map((v) => Type.Literal(v)),
        {
          description:
            'Order: `-created` (default, newest first), `created`, `name` (the title, A–Z, ignoring the case of ASCII letters), `-name`, `updated` (`updatedAt`, oldest first), `-updated` (most recently changed or published first); a leading `-` reverses. Ties go by id. Keep it the same while paging with `cursor`.',
        },
      ),
    ),
    state: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('deleted')], {
        description:
          '`active` (default): spaces that are not deleted; `deleted`: spaces deleted within the restore window, which `POST /v1/spaces/{spaceId}/restore` brings back.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateSpaceBody = defineSchema(
  'UpdateSpaceRequest',
  Type.Object(
    {
      title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      config: Type.Optional(Nullable(SpaceConfigRef)),
      noindex: Type.Optional(Type.Boolean()),
      access: Type.Optional(AccessLevel),
      dataLocation: Type.Optional(Type.String()),
      slug: Type.Optional(
        Type.String({
          minLength: 2,
          maxLength: 55,
          description: 'Renames the space; must be the only field',
        }),
      ),
      baseSettingsDigest: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    },
    { additionalProperties: false },
  ),
);
export const RenameSpaceBody = defineSchema(
  'RenameSpaceRequest',
  Type.Object({ slug: Type.String({ minLength: 2, maxLength: 55 }) }, { additionalProperties: false }),
);
export const SpaceOperationResponse = defineSchema(
  'SpaceOperationResponse',
  DataEnvelope(Type.Object({ space: Space, operation: OperationSchema }, { additionalProperties: false })),
);
export const OperationResponse = defineSchema('OperationResponse', DataEnvelope(OperationSchema));
export const OperationListResponse = defineSchema('OperationListResponse', PageEnvelope(OperationSchema));
