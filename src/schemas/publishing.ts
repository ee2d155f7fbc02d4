import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, PageEnvelope, PageQuery } from './common.ts';
import { defineSchema } from './registry.ts';

const Sha256 = Type.String({
  pattern: '^[0-9a-fA-F]{64}$',
  description: 'Lowercase hex sha256 of the bytes',
});
const Target = Type.Union([Type.Literal('production'), Type.Literal('preview')]);
const VersionStatus = Type.Union(
  ['uploading', 'ready', 'failed', 'canceled', 'expired', 'deleted'].map((s) => Type.Literal(s)),
);

export const SourceInfo = Type.Object(
  {
    type: Type.Union([Type.Literal('direct-upload'), Type.Literal('git')]),
    branch: Type.Optional(Type.String({ maxLength: 255 })),
    commit: Type.Optional(Type.String({ maxLength: 255 })),
    ref: Type.Optional(Type.String({ maxLength: 255 })),
    repository: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);

export const CreateVersionBody = defineSchema(
  'CreateVersionRequest',
  Type.Object(
    {
      files: Type.Array(
        Type.Object(
          {
            path: Type.String({ minLength: 1, maxLength: 4096 }),
            sha256: Sha256,
            size: Type.Integer({ minimum: 0 }),
          },
          { additionalProperties: false },
        ),
      ),
      target: Type.Optional(Target),
      message: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
      source: Type.Optional(Nullable(SourceInfo)),
    },
    { additionalProperties: false },
  ),
);

export const Diagnostic = Type.Object(
  {
    code: Type.String(),
    severity: Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('error')]),
    message: Type.String(),
    path: Type.Optional(Nullable(Type.String())),
    details: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    fix: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: true },
);

export const Version = defineSchema(
  'Version',
  Type.Object(
    {
      id: Type.String(),
      spaceId: Type.String(),
      number: Type.Integer({ minimum: 1, description: '`v12` / `12` address the twelfth version' }),
      status: VersionStatus,
      target: Target,
      message: Nullable(Type.String()),
      source: Nullable(SourceInfo),
      fileCount: Type.Integer({ minimum: 0 }),
      totalBytes: Type.Integer({ minimum: 0 }),
      manifestDigest: Type.String(),
      immutableUrl: Type.String({ format: 'uri' }),
      channels: Type.Array(Type.String(), { description: 'Channels pointing at this version' }),
      diagnostics: Type.Array(Diagnostic),
      createdAt: DateTime,
      finalizedAt: Nullable(DateTime),
      expiresAt: Nullable(DateTime),
      deletedAt: Nullable(DateTime),
    },
    { additionalProperties: false },
  ),
);

export const UploadTargetSchema = Type.Object(
  {
    path: Type.String(),
    sha256: Type.String(),
    size: Type.Integer(),
    method: Type.Literal('PUT'),
    url: Type.String({ format: 'uri' }),
    expiresAt: DateTime,
  },
  { additionalProperties: false },
);

export const PublishReceipt = defineSchema(
  'PublishReceipt',
  DataEnvelope(
    Type.Object(
      {
        space: Type.Object(
          { id: Type.String(), slug: Type.String(), liveUrl: Type.String({ format: 'uri' }) },
          { additionalProperties: false },
        ),
        version: Version,
        next: Type.Object(
          {
            action: Type.Union(['done', 'upload', 'finalize', 'poll'].map((s) => Type.Literal(s))),
            url: Type.Optional(Type.String({ format: 'uri' })),
            method: Type.Optional(Type.String()),
            batchUrl: Type.Optional(Type.String({ format: 'uri' })),
          },
          { additionalProperties: false },
        ),
        upload: Type.Object({ targets: Type.Array(UploadTargetSchema) }, { additionalProperties: false }),
        activation: Type.Object(
          {
            outcome: Type.Union(
              ['activated', 'pending', 'not_activated', 'unchanged'].map((s) => Type.Literal(s)),
            ),
            channel: Nullable(Type.String()),
          },
          { additionalProperties: false },
        ),
        noop: Type.Boolean(),
        links: Type.Object(
          { inspect: Type.String({ format: 'uri' }), version: Type.String({ format: 'uri' }) },
          { additionalProperties: false },
        ),
        claim: Type.Optional(
          Type.Object(
            {
              key: Type.String({ description: 'The space key (`sfc_…`): bearer for this space; shown once' }),
              claimUrl: Type.String({ format: 'uri', description: 'Open it, sign in, keep the space' }),
              openUrl: Type.String({
                format: 'uri',
                description: 'Lets the publisher see the site before it is claimed',
              }),
              expiresAt: DateTime,
            },
            { additionalProperties: false, description: 'Anonymous publishes only' },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  ),
);

export const VersionResponse = defineSchema('VersionResponse', DataEnvelope(Version));
export const VersionListResponse = defineSchema('VersionList', PageEnvelope(Version));
export const VersionListQuery = Type.Object(PageQuery, { additionalProperties: false });

export const VersionFile = defineSchema(
  'VersionFile',
  Type.Object(
    {
      path: Type.String(),
      sha256: Type.String(),
      size: Type.Integer(),
      contentType: Nullable(Type.String()),
      encodings: Type.Optional(
        Type.Record(Type.String(), Type.Object({ sha256: Type.String(), size: Type.Integer() })),
      ),
    },
    { additionalProperties: false },
  ),
);
export const VersionFileListResponse = defineSchema('VersionFileList', PageEnvelope(VersionFile));

export const ChannelSchema = Type.Object(
  { name: Type.String(), versionId: Type.String(), updatedAt: DateTime },
  { additionalProperties: false },
);
export const ChannelListResponse = defineSchema('ChannelList', DataEnvelope(Type.Array(ChannelSchema)));

export const ChannelMove = defineSchema(
  'ChannelMove',
  Type.Object(
    {
      id: Type.String(),
      channel: Type.String(),
      versionId: Type.String(),
      previousVersionId: Nullable(Type.String()),
      actor: Nullable(Type.String()),
      reason: Type.String({ description: '`publish` (finalize moved it) or `promote`' }),
      createdAt: DateTime,
    },
    { additionalProperties: false },
  ),
);
export const ChannelHistoryResponse = defineSchema('ChannelHistory', PageEnvelope(ChannelMove));

export const PromoteBody = defineSchema(
  'PromoteRequest',
  Type.Object(
    {
      channel: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: 'live' })),
      expectedVersionId: Type.Optional(
        Nullable(Type.String({ description: 'Compare-and-swap: the version the channel points at now' })),
      ),
    },
    { additionalProperties: false },
  ),
);
export const PromoteResponse = defineSchema(
  'PromoteResult',
  DataEnvelope(
    Type.Object(
      {
        channel: Type.String(),
        versionId: Type.String(),
        previousVersionId: Nullable(Type.String()),
        updatedAt: DateTime,
        version: Version,
      },
      { additionalProperties: false },
    ),
  ),
);

export const VersionDiffResponse = defineSchema(
  'VersionDiff',
  DataEnvelope(
    Type.Object(
      {
        versionId: Type.String(),
        againstVersionId: Type.String(),
        added: Type.Array(Type.String()),
        changed: Type.Array(Type.String()),
        removed: Type.Array(Type.String()),
      },
      { additionalProperties: false },
    ),
  ),
);

export const UploadResultResponse = defineSchema(
  'UploadResult',
  DataEnvelope(
    Type.Object(
      {
        versionId: Type.String(),
        received: Type.Integer({ description: 'Files in the request' }),
        stored: Type.Integer({ description: 'Blobs newly stored (the rest were held already)' }),
        bytes: Type.Integer({ description: 'Bytes newly stored' }),
        next: Type.Object(
          { action: Type.Literal('finalize'), url: Type.String({ format: 'uri' }) },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ),
);

export const VariableSchema = defineSchema(
  'Variable',
  Type.Object(
    {
      name: Type.String(),
      value: Nullable(Type.String({ description: 'null for secrets: they are write-only' })),
      secret: Type.Boolean(),
      createdAt: DateTime,
      updatedAt: DateTime,
    },
    { additionalProperties: false },
  ),
);
export const VariableResponse = defineSchema('VariableResponse', DataEnvelope(VariableSchema));
export const VariableListResponse = defineSchema('VariableList', DataEnvelope(Type.Array(VariableSchema)));
export const PutVariableBody = defineSchema(
  'PutVariableRequest',
  Type.Object(
    {
      value: Type.String({ maxLength: 65536 }),
      secret: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
);

export const InlinePublishBody = defineSchema(
  'InlinePublishRequest',
  Type.Object(
    {
      files: Type.Array(
        Type.Object(
          {
            path: Type.String({ minLength: 1, maxLength: 4096 }),
            content: Type.String(),
            encoding: Type.Optional(Type.Union([Type.Literal('utf8'), Type.Literal('base64')])),
          },
          { additionalProperties: false },
        ),
        { minItems: 1 },
      ),
      spaceId: Type.Optional(Type.String({ minLength: 1 })),
      slug: Type.Optional(Type.String({ minLength: 1 })),
      teamId: Type.Optional(Type.String({ minLength: 1 })),
      title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      target: Type.Optional(Target),
      message: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
    },
    { additionalProperties: false },
  ),
);

export const PublishPayload = Type.Object(
  {
    spaceId: Type.Optional(Type.String({ minLength: 1 })),
    slug: Type.Optional(Type.String({ minLength: 1 })),
    teamId: Type.Optional(Type.String({ minLength: 1 })),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    target: Type.Optional(Target),
    message: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
    access: Type.Optional(
      Type.Union([Type.Literal('private'), Type.Literal('team'), Type.Literal('public')], {
        description: 'Access of a space this call creates (default: the team’s)',
      }),
    ),
  },
  { additionalProperties: false },
);
