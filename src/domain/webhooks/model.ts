import type { Executor } from '../../store/repos/index.ts';
import type { ActivityEvent } from '../events/model.ts';

/** The job that makes one delivery attempt (payload `{ deliveryId }`). */
export const WEBHOOK_DELIVERY_JOB = 'webhook.deliver';

/** The body's `version`: the date this payload shape was defined. */
export const WEBHOOK_PAYLOAD_VERSION = '2026-11-28';

/** Attempts per delivery before it is `exhausted` (about a day of retries, see `retryDelayMs`). */
export const MAX_DELIVERY_ATTEMPTS = 8;
/** Consecutive failed attempts (across deliveries) that make a webhook `failing`, then `disabled`. */
export const FAILING_AFTER = 8;
export const DISABLED_AFTER = 32;
export const DELIVERY_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** How long the previous secret keeps signing after a rotation (unless `expireNow`). */
export const SECRET_OVERLAP_MS = 24 * 3600_000;

const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 12 * 3600_000;

/**
 * The wait before attempt `failed + 1`, after `failed` failed attempts: 30 s, 2 min, 8 min, 32 min,
 * ~2 h, ~8.5 h, 12 h (× 4 each time, at most 12 h), each spread by ±20 % jitter so receivers that
 * came back are not hit by every retry at once. Eight attempts span about 23 hours.
 */
export function retryDelayMs(failed: number, random: () => number): number {
  const base = Math.min(RETRY_BASE_MS * 4 ** Math.max(0, failed - 1), RETRY_MAX_MS);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** An event to record (the event log assigns id, sequence and time). */
export interface EventInput {
  tenantId: string;
  spaceId: string | null;
  actor: ActivityEvent['actor'];
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** Records an event inside `tx` (the lead wires this to the event log's `record`). */
export type EmitEvent = (tx: Executor, input: EventInput) => Promise<void>;

/** Adds the delivery job for `deliveryId`, due at `runAt`, inside `tx`. */
export type EnqueueDelivery = (tx: Executor, deliveryId: string, runAt: Date) => Promise<void>;
