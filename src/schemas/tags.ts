import { type Static, Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, PageEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';

const FORMAT = 'service.tag_graph.v1';
const Item = Type.Object({}, { additionalProperties: true });

export const TAG_VERSION_STATUSES = ['draft', 'submitted', 'approved', 'published', 'abandoned'] as const;
export const TAG_ENVIRONMENTS = ['production', 'preview', 'development'] as const;
export type TagEnvironment = (typeof TAG_ENVIRONMENTS)[number];
export const TagEnvironment = Type.Union(TAG_ENVIRONMENTS.map((e) => Type.Literal(e)));

/**
 * The graph as a client sends it. Top level closed; the server limits (bytes, counts, depth, keys,
 * string bytes) and item shapes are checked by the tag domain so each failure has its own code.
 * No `default` keywords here: defaults are applied after the encoded size is measured.
 */
export const TagGraphInput = defineSchema(
  'TagGraphInput',
  Type.Object(
    {
      format: Type.Optional(
        Type.Literal(FORMAT, { description: `Graph format; default \`${FORMAT}\`, the only one accepted.` }),
      ),
      tags: Type.Optional(
        Type.Array(Item, { description: 'At most 256 tags; default empty. Shape: docs/guides/tag-manager.' }),
      ),
      triggers: Type.Optional(Type.Array(Item, { description: 'At most 256 triggers; default empty.' })),
      variables: Type.Optional(Type.Array(Item, { description: 'At most 256 variables; default empty.' })),
      systemModules: Type.Optional(
        Type.Record(Type.String(), Item, {
          description: 'At most 64 modules, name → object; default empty.',
        }),
      ),
      consentPolicy: Type.Optional(Item),
    },
    {
      additionalProperties: false,
      description:
        'Tag graph. Limits: 262144 bytes (compact UTF-8 JSON), 256 items per array, 64 keys per object, 65536 bytes per string, 16 nested levels.',
    },
  ),
);

export const ReplaceTagGraphBody = defineSchema(
  'ReplaceTagGraphBody',
  Type.Object({ graph: TagGraphInput }, { additionalProperties: false }),
);

/** The graph as the server returns it: every top-level member present; more may be added later. */
export const TagGraph = defineSchema(
  'TagGraph',
  Type.Object(
    {
      format: Type.String(),
      tags: Type.Array(Item, { maxItems: 256 }),
      triggers: Type.Array(Item, { maxItems: 256 }),
      variables: Type.Array(Item, { maxItems: 256 }),
      systemModules: Type.Record(Type.String(), Item, { maxProperties: 64 }),
      consentPolicy: Type.Optional(Item),
    },
    { additionalProperties: true },
  ),
);

export const TagGraphResponse = defineSchema(
  'TagGraphResponse',
  DataEnvelope(
    Type.Object(
      {
        versionId: Type.String(),
        graph: TagGraph,
        graphRevision: Type.Integer({ minimum: 1, maximum: 9007199254740991 }),
      },
      { additionalProperties: false },
    ),
  ),
);

export const TagVersion = defineSchema(
  'TagVersion',
  Type.Object(
    {
      id: Type.String(),
      teamId: Type.String(),
      status: Type.Union(TAG_VERSION_STATUSES.map((s) => Type.Literal(s))),
      baseVersionId: Nullable(Type.String()),
      graphRevision: Type.Integer({ minimum: 1, maximum: 9007199254740991 }),
      counts: Type.Object(
        { tags: Type.Integer(), triggers: Type.Integer(), variables: Type.Integer() },
        { additionalProperties: false },
      ),
      environments: Type.Array(TagEnvironment, { description: 'Environments whose release points here.' }),
      createdBy: Nullable(Type.String()),
      createdAt: DateTime,
      updatedAt: DateTime,
      submittedAt: Nullable(DateTime),
      submittedBy: Nullable(Type.String()),
      approvedAt: Nullable(DateTime),
      approvedBy: Nullable(Type.String()),
      publishedAt: Nullable(DateTime),
      publishedBy: Nullable(Type.String()),
      abandonedAt: Nullable(DateTime),
    },
    { additionalProperties: false },
  ),
);
export type TagVersionView = Static<typeof TagVersion>;

export const TagVersionResponse = defineSchema('TagVersionResponse', DataEnvelope(TagVersion));
export const TagVersionListResponse = defineSchema('TagVersionListResponse', PageEnvelope(TagVersion));

export const CreateTagVersionBody = defineSchema(
  'CreateTagVersionBody',
  Type.Object(
    {
      baseVersionId: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 64,
          description: 'Copy this version’s graph into the draft.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

export const PublishTagVersionBody = defineSchema(
  'PublishTagVersionBody',
  Type.Object(
    { environment: Type.Optional(TagEnvironment) },
    { additionalProperties: false, description: 'environment defaults to production.' },
  ),
);

export const TagRelease = defineSchema(
  'TagRelease',
  Type.Object(
    {
      environment: TagEnvironment,
      versionId: Type.String(),
      updatedAt: DateTime,
      updatedBy: Nullable(Type.String()),
    },
    { additionalProperties: false },
  ),
);
export const TagReleaseResponse = defineSchema('TagReleaseResponse', DataEnvelope(TagRelease));
export const TagReleaseListResponse = defineSchema(
  'TagReleaseListResponse',
  DataEnvelope(Type.Array(TagRelease)),
);
