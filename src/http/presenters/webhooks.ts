import type { Static } from '@sinclair/typebox';
import { MAX_DELIVERY_ATTEMPTS } from '../../domain/webhooks/model.ts';
import type { WebhookDeliverySchema, WebhookSchema } from '../../schemas/webhooks.ts';
import type { WebhookDeliveryRow } from '../../store/repos/webhooks/deliveries.ts';
import type { WebhookRow } from '../../store/repos/webhooks/webhooks.ts';

export function presentWebhook(r: WebhookRow): Static<typeof WebhookSchema> {
  return {
    id: r.id,
    teamId: r.team_id,
    url: r.url,
    description: r.description,
    events: JSON.parse(r.events) as string[],
    status: r.status as 'active' | 'failing' | 'disabled',
    consecutiveFailures: r.consecutive_failures,
    disabledReason: (r.disabled_reason as 'failures' | 'manual' | null) ?? null,
    previousSecretExpiresAt: r.previous_secret_sealed ? r.previous_secret_expires_at : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function presentDelivery(
  r: WebhookDeliveryRow,
  withEvent = false,
): Static<typeof WebhookDeliverySchema> {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventCode: r.event_code,
    state: r.state as 'pending' | 'succeeded' | 'failed' | 'exhausted',
    attempts: r.attempts,
    maxAttempts: MAX_DELIVERY_ATTEMPTS,
    nextAttemptAt: r.state === 'pending' || r.state === 'failed' ? r.next_attempt_at : null,
    lastAttemptAt: r.last_attempt_at,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    responseExcerpt: r.response_excerpt,
    durationMs: r.duration_ms,
    redeliveryOf: r.redelivery_of,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...(withEvent ? { event: JSON.parse(r.event) as Record<string, unknown> } : {}),
  };
}
