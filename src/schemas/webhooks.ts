import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable, PageEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';

const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  description:
    'Event filters: `*` (every event), an exact code (`version.ready`) or a resource (`version.*`); omitted = every event',
});
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Where deliveries are POSTed: `https://` to a public address',
});
const Description = Type.String({ maxLength: 500 });
const Status = Type.Union(
  ['active', 'failing', 'disabled'].map((s) => Type.Literal(s)),
  {
    description:
      '`active`; `failing` after 8 consecutive failed attempts (still delivered); `disabled` after 32 (or by hand): nothing is sent until `PATCH` sets `active`',
  },
);

export const WebhookSchema = Type.Object(
  {
    id: Type.String({ description: '`whk_…`' }),
    teamId: Type.String(),
    url: Type.String(),
    description: Nullable(Type.String()),
    events: Type.Array(Type.String()),
    status: Status,
    consecutiveFailures: Type.Integer({ minimum: 0 }),
    disabledReason: Nullable(Type.Union([Type.Literal('failures'), Type.Literal('manual')])),
    previousSecretExpiresAt: Nullable(
      Type.String({
        format: 'date-time',
        description: 'During a rotation’s overlap: until when the previous secret also signs (a second `v1`)',
      }),
    ),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { additionalProperties: false },
);

const WebhookWithSecret = Type.Object(
  {
    ...WebhookSchema.properties,
    secret: Type.String({
      description: 'The signing secret (`whsec_…`): shown this once, store it now',
    }),
  },
  { additionalProperties: false },
);

const DeliveryState = Type.Union(
  ['pending', 'succeeded', 'failed', 'exhausted'].map((s) => Type.Literal(s)),
  {
    description:
      '`pending` (not tried yet); `succeeded` (a 2xx answer); `failed` (the last attempt failed, `nextAttemptAt` is the next); `exhausted` (no attempt left, or the webhook is disabled)',
  },
);

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ description: '`whd_…`; sent as `Service-Delivery-Id`' }),
    webhookId: Type.String(),
    eventId: Type.String({ description: 'Sent as `Service-Event-Id`; the same on redeliveries' }),
    eventCode: Type.String(),
    state: DeliveryState,
    attempts: Type.Integer({ minimum: 0 }),
    maxAttempts: Type.Integer(),
    nextAttemptAt: Nullable(DateTime),
    lastAttemptAt: Nullable(DateTime),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    responseExcerpt: Nullable(Type.String({ description: 'The first KiB of the last answer' })),
    durationMs: Nullable(Type.Integer()),
    redeliveryOf: Nullable(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
    event: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'The event as sent (the body’s `event`)' }),
    ),
  },
  { additionalProperties: false },
);

export const CreateWebhookBody = defineSchema(
  'CreateWebhookRequest',
  Type.Object(
    {
      url: Url,
      team: Type.Optional(
        Type.String({
          minLength: 1,
          description: 'Team id or slug; needed when the credential reaches several teams',
        }),
      ),
      events: Type.Optional(Events),
      description: Type.Optional(Nullable(Description)),
    },
    { additionalProperties: false },
  ),
);

export const UpdateWebhookBody = defineSchema(
  'UpdateWebhookRequest',
  Type.Object(
    {
      url: Type.Optional(Url),
      events: Type.Optional(Events),
      description: Type.Optional(Nullable(Description)),
      status: Type.Optional(
        Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
          description:
            '`active` re-enables a failing or disabled webhook (failures reset); `disabled` stops deliveries',
        }),
      ),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
);

export const RotateWebhookSecretBody = defineSchema(
  'RotateWebhookSecretRequest',
  Type.Object(
    {
      expireNow: Type.Optional(
        Type.Boolean({
          description: 'Stop signing with the previous secret at once (default: it signs 24 h more)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

export const WebhookResponse = defineSchema('WebhookResponse', DataEnvelope(WebhookSchema));
export const WebhookWithSecretResponse = defineSchema(
  'WebhookWithSecretResponse',
  DataEnvelope(WebhookWithSecret),
);
export const WebhookListResponse = defineSchema('WebhookList', PageEnvelope(WebhookSchema));
export const WebhookDeliveryResponse = defineSchema(
  'WebhookDeliveryResponse',
  DataEnvelope(WebhookDeliverySchema),
);
export const WebhookDeliveryListResponse = defineSchema(
  'WebhookDeliveryList',
  PageEnvelope(WebhookDeliverySchema),
);
