import { WEBHOOK_DELIVERY_JOB } from '../domain/webhooks/model.ts';
import type { Services } from '../services.ts';

/**
 * Webhook deliveries run from the durable queue, one job per attempt. The attempt's outcome, the
 * webhook's failure count and the next attempt's job are written in the job's own transaction, so a
 * worker that dies mid-attempt leaves the job to run again (at least once) and a late second run
 * records nothing twice. Retries are scheduled by the deliverer (`retryDelayMs`), not by the queue:
 * the queue's own attempts only cover a worker's crash.
 */
export function registerWebhookJobs(services: Pick<Services, 'jobs' | 'webhookDeliverer'>): void {
  services.jobs.registerHandler<{ deliveryId: string }>(
    WEBHOOK_DELIVERY_JOB,
    async (job, ctx) => {
      await services.webhookDeliverer.attempt(job.payload.deliveryId, (fn) => ctx.transaction(fn));
    },
    { concurrency: 4, leaseMs: 60_000 },
  );
}
