import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, PageEnvelope, SchemaRef } from './common.ts';
import { defineSchema } from './registry.ts';

const Ref = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'A branch or tag name (no leading `-`, spaces, `..` or control characters)',
});

export const BuildSourceInput = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('upload', {
          description: 'The answer says where to PUT a zip or .tar.gz of the source',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('git'),
        url: Type.String({
          minLength: 1,
          maxLength: 2048,
          description: 'An `https://` clone URL (public addresses only unless the server allows more)',
        }),
        ref: Type.Optional(Nullable(Ref)),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'Where the build’s source comes from' },
);

export const CreateBuildBody = defineSchema(
  'CreateBuildBody',
  Type.Object(
    {
      source: BuildSourceInput,
      branch: Type.Optional(
        Nullable({
          ...Ref,
          description:
            'The branch the build is for: absent or null is the production branch (the output goes `live`); any other branch goes to the `br-<slug>` preview channel',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

const Setting = Type.Object(
  {
    value: Type.Union([Type.String(), Type.Number(), Type.Null()]),
    source: Type.Union(['space_config', 'repository', 'detected', 'default'].map((s) => Type.Literal(s))),
  },
  { additionalProperties: false },
);

export const BuildStatus = Type.Union(
  [
    'waiting_for_source',
    'uploading_source',
    'queued',
    'running',
    'succeeded',
    'failed',
    'canceled',
    'skipped',
  ].map((s) => Type.Literal(s)),
);

export const Build = Type.Object(
  {
    id: Type.String(),
    spaceId: Type.String(),
    status: BuildStatus,
    source: Type.Object(
      {
        type: Type.Union([Type.Literal('upload'), Type.Literal('git'), Type.Literal('push')]),
        url: Nullable(Type.String()),
        ref: Nullable(Type.String()),
        commitSha: Nullable(Type.String()),
      },
      { additionalProperties: false },
    ),
    branch: Nullable(Type.String()),
    channel: Nullable(Type.String({ description: '`live` or `br-<slug>`, once published' })),
    versionId: Nullable(Type.String()),
    settings: Nullable(
      Type.Record(Type.String(), Type.Union([Setting, Type.Record(Type.String(), Type.Unknown())]), {
        description:
          'Each setting the build ran with and where it came from; `detected` is what detection saw',
      }),
    ),
    error: Nullable(
      Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }),
    ),
    cancelRequested: Type.Boolean(),
    retryOf: Nullable(Type.String()),
    logBytes: Type.Integer(),
    createdAt: DateTime,
    startedAt: Nullable(DateTime),
    finishedAt: Nullable(DateTime),
  },
  { additionalProperties: false },
);

export const UploadInstruction = Type.Object(
  {
    method: Type.Literal('PUT'),
    url: Type.String({ format: 'uri' }),
    contentTypes: Type.Array(Type.String()),
    description: Type.String(),
  },
  { additionalProperties: false },
);

export const BuildResponse = defineSchema('BuildResponse', DataEnvelope(Build));
export const BuildCreatedResponse = defineSchema(
  'BuildCreatedResponse',
  Type.Object(
    { $schema: SchemaRef, data: Build, upload: Nullable(UploadInstruction) },
    { additionalProperties: false },
  ),
);
export const BuildListResponse = defineSchema('BuildList', PageEnvelope(Build));
export const BuildLogLine = Type.Object(
  {
    id: Type.String(),
    stream: Type.Union([Type.Literal('stdout'), Type.Literal('stderr'), Type.Literal('system')]),
    line: Type.String(),
    createdAt: DateTime,
  },
  { additionalProperties: false },
);
export const BuildLogsResponse = defineSchema('BuildLogs', PageEnvelope(BuildLogLine));
