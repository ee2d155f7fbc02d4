import { type Static, Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, PageEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';

const Trigger = Type.Union([Type.Literal('schedule'), Type.Literal('manual')], {
  description:
    '`schedule`: sent by the scheduler with `x-service-cron`; `manual`: a run asked for through the API (no cron header)',
});

/** A cron of the live version (behaviour §4.8) and what it last did. */
export const Cron = defineSchema(
  'Cron',
  Type.Object(
    {
      key: Type.String({
        description: 'The path lowercased, other characters as `-` (`/api/digest` → `api-digest`)',
      }),
      path: Type.String({
        description: 'What is requested: `GET <path>` on the live version, through normal routing',
      }),
      schedule: Type.String({
        description:
          'As written in the settings file: `hourly`, `daily`, `twicedaily`, `weekly`, `Nh`, `Nd`, `Nw` or a five-field crontab line, in UTC',
      }),
      versionId: Type.String({ description: 'The live version that declares it' }),
      nextRunAt: Nullable(DateTime),
      lastRun: Nullable(
        Type.Object(
          {
            at: DateTime,
            status: Nullable(Type.Integer({ description: 'HTTP status of the answer; null when none came' })),
            trigger: Trigger,
            durationMs: Type.Integer({ minimum: 0 }),
          },
          { additionalProperties: false },
        ),
      ),
      lastFailure: Nullable(
        Type.Object(
          {
            at: DateTime,
            status: Nullable(Type.Integer()),
            trigger: Trigger,
            message: Type.String({
              description: 'The status and the start of the answer’s body, or why no answer came',
            }),
          },
          {
            additionalProperties: false,
            description:
              'The most recent failed run (a status ≥ 400 or no answer); kept until the next failure',
          },
        ),
      ),
    },
    { additionalProperties: false },
  ),
);
export type Cron = Static<typeof Cron>;

export const CronListResponse = defineSchema('CronListResponse', DataEnvelope(Type.Array(Cron)));

export const CronRunResponse = defineSchema(
  'CronRunResponse',
  DataEnvelope(
    Type.Object(
      {
        cron: Cron,
        run: Type.Object(
          {
            status: Nullable(Type.Integer()),
            durationMs: Type.Integer({ minimum: 0 }),
            ok: Type.Boolean({ description: 'The answer’s status was below 400' }),
            failure: Nullable(Type.String()),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ),
);

export const RuntimeLogQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Lines at or after this time' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Lines before this time' })),
    requestId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'One request’s lines (its `x-request-id`)' }),
    ),
    level: Type.Optional(Type.Union(['log', 'info', 'debug', 'warn', 'error'].map((l) => Type.Literal(l)))),
    handler: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'One handler’s lines: a route pattern (`/api/:id`) or the single entry (`handler.ts`)',
      }),
    ),
    follow: Type.Optional(
      Type.Boolean({
        description:
          'Stream new lines as NDJSON (`application/x-ndjson`), oldest first, polling every 2 s until the client disconnects; `requestId` and `level` still filter',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RuntimeLogLine = defineSchema(
  'RuntimeLogLine',
  Type.Object(
    {
      id: Type.String(),
      at: DateTime,
      level: Type.String({
        description:
          '`log`, `info`, `debug`, `warn` or `error` (uncaught exceptions and failed requests are `error`)',
      }),
      message: Type.String({
        description:
          'The console call’s arguments (non-strings as JSON), or an exception with its stack; up to 8,192 characters',
      }),
      requestId: Nullable(
        Type.String({
          description: 'The request’s id: the `x-request-id` the edge gave it, also in its answer',
        }),
      ),
      handler: Nullable(
        Type.String({
          description:
            'What answered: the route module’s pattern (`/api/:id`) or the single entry (`handler.ts`)',
        }),
      ),
      method: Nullable(Type.String()),
      path: Nullable(Type.String({ description: 'The request’s path and query' })),
      status: Nullable(Type.Integer({ description: 'The status the function answered' })),
      outcome: Nullable(
        Type.String({ description: 'How the request ended in workerd: `ok`, `exception`, `canceled`, …' }),
      ),
      versionId: Type.String(),
    },
    { additionalProperties: false },
  ),
);

export const RuntimeLogListResponse = defineSchema('RuntimeLogListResponse', PageEnvelope(RuntimeLogLine));

/** An object of a runtime space's store (`env.STORAGE`, behaviour §11). */
export const StorageObject = defineSchema(
  'StorageObject',
  Type.Object(
    {
      id: Type.String({ pattern: '^[0-9a-f]{32}$', description: '128 bits, 32 hex characters' }),
      contentType: Type.String(),
      size: Type.Integer({ minimum: 1, maximum: 5 * 1024 * 1024 }),
      url: Type.String({
        description: 'Read URL signed with the space’s read key; rotating the key ends it',
      }),
      createdAt: DateTime,
      versionId: Nullable(Type.String({ description: 'The version whose code uploaded it' })),
    },
    { additionalProperties: false },
  ),
);

export const StorageListResponse = defineSchema('StorageListResponse', PageEnvelope(StorageObject));

export const StorageKeyRotatedResponse = defineSchema(
  'StorageKeyRotatedResponse',
  DataEnvelope(Type.Object({ rotatedAt: DateTime }, { additionalProperties: false })),
);
