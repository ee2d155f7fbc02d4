import { Type } from '@sinclair/typebox';
import { DataEnvelope, Nullable, PageEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';

export const AccessLogQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Lines at or after this time' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Lines before this time' })),
    status: Type.Optional(
      Type.String({
        pattern: '^([1-5][0-9][0-9]|[1-5]xx)$',
        description: 'An exact status (`404`) or a class (`4xx`)',
      }),
    ),
    pathPrefix: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: '^/' })),
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    follow: Type.Optional(
      Type.Boolean({
        description:
          'Stream new lines as NDJSON (`application/x-ndjson`), one JSON line each, polling every 2 s; filters other than `since` do not apply',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AccessLogLineSchema = defineSchema(
  'AccessLogLine',
  Type.Object(
    {
      id: Type.String(),
      time: Type.String({ format: 'date-time' }),
      host: Type.String(),
      method: Type.String(),
      path: Type.String(),
      status: Type.Integer(),
      bytes: Type.Integer(),
      durationMs: Type.Integer(),
      referrer: Nullable(Type.String()),
      userAgent: Nullable(Type.String()),
      country: Nullable(Type.String()),
      requestId: Nullable(Type.String()),
      versionId: Nullable(Type.String()),
      visitor: Type.String({ description: 'Daily-salted hash of IP + user agent' }),
    },
    { additionalProperties: false },
  ),
);
export const AccessLogListResponse = defineSchema('AccessLogListResponse', PageEnvelope(AccessLogLineSchema));

export const AnalyticsQuery = Type.Object(
  { window: Type.Optional(Type.Union([Type.Literal('48h'), Type.Literal('7d'), Type.Literal('30d')])) },
  { additionalProperties: false },
);

const Top = Type.Array(
  Type.Object({ key: Type.String(), requests: Type.Integer() }, { additionalProperties: false }),
);
export const AnalyticsResponse = defineSchema(
  'AnalyticsResponse',
  DataEnvelope(
    Type.Object(
      {
        window: Type.Union([Type.Literal('48h'), Type.Literal('7d'), Type.Literal('30d')]),
        from: Type.String({ format: 'date-time' }),
        to: Type.String({ format: 'date-time' }),
        requests: Type.Integer(),
        visitors: Type.Integer({ description: 'Distinct visitors per day, summed over the window' }),
        bytes: Type.Integer(),
        statusClasses: Type.Object(
          { '2xx': Type.Integer(), '3xx': Type.Integer(), '4xx': Type.Integer(), '5xx': Type.Integer() },
          { additionalProperties: false },
        ),
        series: Type.Array(
          Type.Object(
            { at: Type.String({ format: 'date-time' }), requests: Type.Integer(), bytes: Type.Integer() },
            { additionalProperties: false },
          ),
        ),
        topPaths: Top,
        topReferrers: Top,
        topCountries: Top,
      },
      { additionalProperties: false },
    ),
  ),
);

export const SpaceUsageResponse = defineSchema(
  'SpaceUsageResponse',
  DataEnvelope(
    Type.Object(
      {
        spaceId: Type.String(),
        periodStart: Type.String({ format: 'date-time' }),
        usage: Nullable(
          Type.Object(
            { storageBytes: Type.Integer(), bandwidthBytes: Type.Integer(), requests: Type.Integer() },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  ),
);

export const TeamUsageResponse = defineSchema(
  'TeamUsageResponse',
  DataEnvelope(
    Type.Object(
      {
        teamId: Type.String(),
        periodStart: Type.String({ format: 'date-time' }),
        spaces: Type.Integer(),
        members: Type.Integer(),
        storageBytes: Type.Integer(),
        publishesThisMonth: Type.Integer(),
        bandwidthBytes: Type.Integer(),
        requests: Type.Integer(),
      },
      { additionalProperties: false },
    ),
  ),
);
