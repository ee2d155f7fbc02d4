import type { Agent } from 'undici';
import type { Clock } from '../../clock.ts';
import { newId } from '../../ids.ts';
import {
  type AllowList,
  createSafeDispatcher,
  type OutboundPolicy,
  type Resolver,
  refusedUrlReason,
} from '../../net/outbound.ts';
import type { Database } from '../../store/db.ts';
import { type Executor, type Repositories, repositories } from '../../store/repos/index.ts';
import type { WebhookDeliveryRow } from '../../store/repos/webhooks/deliveries.ts';
import type { WebhookRow } from '../../store/repos/webhooks/webhooks.ts';
import type { ActivityEvent, EventSubscriber } from '../events/model.ts';
import type { SecretBox } from '../publishing/secrets.ts';
import { filterMatches } from './catalogue.ts';
import {
  DELIVERY_TIMEOUT_MS,
  DISABLED_AFTER,
  type EmitEvent,
  type EnqueueDelivery,
  FAILING_AFTER,
  MAX_DELIVERY_ATTEMPTS,
  MAX_RESPONSE_BYTES,
  retryDelayMs,
  WEBHOOK_PAYLOAD_VERSION,
} from './model.ts';
import { postOnce, type SendOutcome } from './send.ts';
import { signatureHeader } from './signing.ts';

export interface WebhookDeliveryDeps {
  database: Database;
  clock: Clock;
  box: SecretBox;
  policy: OutboundPolicy;
  emit: EmitEvent;
  enqueue: EnqueueDelivery;
  /** Jitter source in [0, 1) (tests pin it). */
  random?: () => number;
  /** Name resolution (tests may inject one). */
  resolve?: Resolver;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

/** Runs `fn` in the transaction that also completes the delivery job. */
export type InJobTransaction = <T>(fn: (trx: Executor) => Promise<T>) => Promise<T>;

export const secretAad = (webhookId: string) => `webhook-secret:${webhookId}`;

function repos(database: Database, exec: Executor): Repositories {
  return repositories({ exec, database, inTransaction: true });
}

/** The one row a new delivery of `event` to `webhook` starts as. */
export function newDeliveryRow(
  webhook: Pick<WebhookRow, 'id' | 'team_id'>,
  event: Pick<ActivityEvent, 'id' | 'code'>,
  eventJson: string,
  now: string,
  redeliveryOf: string | null = null,
): WebhookDeliveryRow {
  return {
    id: newId('whd'),
    webhook_id: webhook.id,
    team_id: webhook.team_id,
    event_id: event.id,
    event_code: event.code,
    event: eventJson,
    state: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_attempt_at: null,
    last_status_code: null,
    last_error: null,
    response_excerpt: null,
    duration_ms: null,
    redelivery_of: redeliveryOf,
    created_at: now,
    updated_at: now,
  };
}

/**
 * The event subscriber: for each event, one delivery per receiving webhook (`active` or `failing`)
 * of the event's team whose filter matches, and its job, written in the event's own transaction (so
 * a delivery exists exactly when its event does).
 */
export function createWebhookFanout(
  deps: Pick<WebhookDeliveryDeps, 'database' | 'clock' | 'enqueue'>,
): EventSubscriber {
  return async (tx, event) => {
    const r = repos(deps.database, tx);
    const hooks = await r.webhooks.receivingInTeam(event.tenantId);
    if (hooks.length === 0) return;
    const eventJson = JSON.stringify(event);
    const now = deps.clock.now();
    for (const hook of hooks) {
      if (!filterMatches(JSON.parse(hook.events) as string[], event.code)) continue;
      const row = newDeliveryRow(hook, event, eventJson, now.toISOString());
      await r.webhookDeliveries.insert(row);
      await deps.enqueue(tx, row.id, now);
    }
  };
}

/**
 * Makes delivery attempts: signs and POSTs the body, then records the outcome, the webhook's
 * failure count and status, and the next attempt's job in the job's own transaction.
 */
export class WebhookDeliverer {
  private agent: Agent | null = null;
  private readonly random: () => number;

  constructor(private readonly deps: WebhookDeliveryDeps) {
    this.random = deps.random ?? Math.random;
  }

  /** The guarded connection pool, made on the first delivery (it loads undici). */
  get dispatcher(): Agent {
    this.agent ??= createSafeDispatcher({
      allow: this.deps.policy.allow as AllowList,
      resolve: this.deps.resolve,
      connectTimeoutMs: this.deps.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    });
    return this.agent;
  }

  /** Closes the pool if a delivery made one. */
  async close(): Promise<void> {
    await this.agent?.close();
    this.agent = null;
  }

  /** The body, headers and signature a delivery is sent with at `now`. */
  request(
    delivery: WebhookDeliveryRow,
    webhook: WebhookRow,
    now: Date,
  ): { body: string; headers: Record<string, string> } {
    const body = `{"version":${JSON.stringify(WEBHOOK_PAYLOAD_VERSION)},"event":${delivery.event}}`;
    const secrets = [this.deps.box.open(webhook.secret_sealed, secretAad(webhook.id))];
    if (
      webhook.previous_secret_sealed &&
      webhook.previous_secret_expires_at &&
      webhook.previous_secret_expires_at > now.toISOString()
    ) {
      secrets.push(this.deps.box.open(webhook.previous_secret_sealed, secretAad(webhook.id)));
    }
    const t = Math.floor(now.getTime() / 1000);
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Spaces-Webhooks/1',
        'service-event-id': delivery.event_id,
        'service-delivery-id': delivery.id,
        'service-signature': signatureHeader(secrets, t, body),
      },
    };
  }

  /** One attempt of a delivery; idempotent (a second run after the attempt was recorded does nothing). */
  async attempt(deliveryId: string, inTransaction: InJobTransaction): Promise<void> {
    const { database, clock } = this.deps;
    const store = repositories({ exec: database.db, database, inTransaction: false });
    const delivery = await store.webhookDeliveries.byId(deliveryId);
    if (!delivery || delivery.state === 'succeeded' || delivery.state === 'exhausted') {
      await inTransaction(async () => {});
      return;
    }
    const webhook = await store.webhooks.byId(delivery.webhook_id);
    const now = clock.now();
    if (!webhook || webhook.status === 'disabled') {
      await inTransaction(async (trx) => {
        await repos(database, trx).webhookDeliveries.recordAttempt(delivery.id, delivery.attempts, {
          state: 'exhausted',
          attempts: delivery.attempts,
          next_attempt_at: null,
          last_attempt_at: delivery.last_attempt_at ?? now.toISOString(),
          last_status_code: delivery.last_status_code,
          last_error: 'Not sent: the webhook is disabled.',
          response_excerpt: delivery.response_excerpt,
          duration_ms: delivery.duration_ms ?? 0,
          updated_at: now.toISOString(),
        });
      });
      return;
    }
    const outcome = await this.send(delivery, webhook, now);
    await inTransaction((trx) => this.record(trx, delivery, webhook, outcome));
  }

  private async send(delivery: WebhookDeliveryRow, webhook: WebhookRow, now: Date): Promise<SendOutcome> {
    // The URL is checked again now (names may resolve elsewhere than at creation); the dispatcher
    // then checks the address it connects to, and connects to that one.
    const refused = await refusedUrlReason(webhook.url, this.deps.policy, this.deps.resolve);
    if (refused)
      return { ok: false, status: null, error: `Refused: ${refused}.`, excerpt: null, durationMs: 0 };
    const { body, headers } = this.request(delivery, webhook, now);
    return postOnce(webhook.url, headers, body, {
      dispatcher: this.dispatcher,
      timeoutMs: this.deps.timeoutMs ?? DELIVERY_TIMEOUT_MS,
      maxResponseBytes: this.deps.maxResponseBytes ?? MAX_RESPONSE_BYTES,
    });
  }

  private async record(
    trx: Executor,
    delivery: WebhookDeliveryRow,
    webhook: WebhookRow,
    outcome: SendOutcome,
  ): Promise<void> {
    const r = repos(this.deps.database, trx);
    const now = this.deps.clock.now();
    const at = now.toISOString();
    const attempts = delivery.attempts + 1;
    const retry = !outcome.ok && attempts < MAX_DELIVERY_ATTEMPTS;
    const next = retry ? new Date(now.getTime() + retryDelayMs(attempts, this.random)) : null;
    const recorded = await r.webhookDeliveries.recordAttempt(delivery.id, delivery.attempts, {
      state: outcome.ok ? 'succeeded' : retry ? 'failed' : 'exhausted',
      attempts,
      next_attempt_at: next?.toISOString() ?? null,
      last_attempt_at: at,
      last_status_code: outcome.status,
      last_error: outcome.error,
      response_excerpt: outcome.excerpt,
      duration_ms: outcome.durationMs,
      updated_at: at,
    });
    if (!recorded) return; // another run recorded this attempt already
    if (next) await this.deps.enqueue(trx, delivery.id, next);

    if (outcome.ok) {
      await r.webhooks.resetFailures(webhook.id, at);
      return;
    }
    const current = await r.webhooks.countFailure(webhook.id, at);
    if (!current) return;
    const failures = current.consecutive_failures;
    let status = current.status;
    if (status !== 'disabled' && failures >= DISABLED_AFTER) status = 'disabled';
    else if (status === 'active' && failures >= FAILING_AFTER) status = 'failing';
    if (status !== current.status) {
      await r.webhooks.update(webhook.id, {
        status,
        ...(status === 'disabled' ? { disabled_reason: 'failures' } : {}),
        updated_at: at,
      });
    }
    if (status === 'disabled' && current.status !== 'disabled') {
      await this.deps.emit(trx, {
        tenantId: current.team_id,
        spaceId: null,
        actor: { type: 'system', id: null },
        code: 'webhook.disabled',
        message: `Webhook ${current.id} was disabled after ${failures} consecutive failed deliveries.`,
        details: {
          webhookId: current.id,
          url: current.url,
          reason: 'failures',
          consecutiveFailures: failures,
        },
      });
    }
  }
}
