import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, PageEnvelope, PageQuery } from './common.ts';
import { defineSchema } from './registry.ts';

export const ActivityEvent = Type.Object(
  {
    id: Type.String({ description: '`evt_…`; webhook receivers dedupe on it' }),
    sequence: Type.Integer({
      minimum: 1,
      description: 'Per tenant (team), from 1, increasing in commit order; the SSE `id:`',
    }),
    tenantId: Type.String({
      description: 'The team the event belongs to; for an unclaimed anonymous space, the space id',
    }),
    spaceId: Nullable(Type.String()),
    actor: Type.Object(
      {
        type: Type.Union(
          ['user', 'api_key', 'oauth_app', 'space_key', 'anonymous', 'system'].map((s) => Type.Literal(s)),
        ),
        id: Nullable(Type.String()),
      },
      { additionalProperties: false },
    ),
    code: Type.String({ description: 'A code of the event catalogue, e.g. `version.ready`' }),
    message: Type.String({ description: 'One human sentence' }),
    details: Type.Record(Type.String(), Type.Unknown()),
    createdAt: DateTime,
  },
  { additionalProperties: false },
);

const CodeFilter = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'Catalogue codes (`version.ready`) or resource wildcards (`version.*`), comma-separated or repeated',
});

export const ActivityQuery = Type.Object(
  {
    ...PageQuery,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    code: Type.Optional(Type.Union([CodeFilter, Type.Array(CodeFilter, { maxItems: 64 })])),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Events at or after this time' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Events before this time' })),
  },
  { additionalProperties: false },
);

export const StreamQuery = Type.Object(
  {
    since: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,15}$',
        description: 'Replay events after this sequence number (as `Last-Event-ID` does; the header wins)',
      }),
    ),
    follow: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'false: send the events after the replay point, then end the stream (catch up and stop)',
      }),
    ),
    heartbeatSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 60,
        default: 15,
        description: 'Seconds between heartbeat comments',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ActivityList = defineSchema('ActivityList', PageEnvelope(ActivityEvent));
