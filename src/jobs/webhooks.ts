import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { EventSubscriber } from '../domain/events/model.ts';
import type { SecretBox } from '../domain/publishing/secrets.ts';
import type { SpaceService } from '../domain/spaces/service.ts';
import type { TeamService } from '../domain/teams/service.ts';
import { createWebhookFanout, WebhookDeliverer } from '../domain/webhooks/delivery.ts';
import { type EmitEvent, type EnqueueDelivery, WEBHOOK_DELIVERY_JOB } from '../domain/webhooks/model.ts';
import { WebhookService } from '../domain/webhooks/service.ts';
import type { Services } from '../services.ts';
import type { Database } from '../store/db.ts';
import type { Store } from '../store/repos/index.ts';
import type { JobQueue } from './queue.ts';

/**
 * The webhooks area as the server builds it: the API service, the deliverer the job runs, and the
 * event log's subscriber (`eventLog.subscribe(webhookFanout)` once the log exists). Each delivery
 * attempt is one job, added in the caller's transaction.
 */
export function createWebhookArea(deps: {
  database: Database;
  store: Store;
  clock: Clock;
  config: Config;
  box: SecretBox;
  teams: TeamService;
  spaces: SpaceService;
  jobs: JobQueue;
  /** Where `webhook.*` events go (the event log's `record`). */
  emit: EmitEvent;
}): Pick<Services, 'webhooks' | 'webhookDeliverer' | 'webhookFanout'> {
  const { database, store, clock, config, box, teams, spaces, jobs, emit } = deps;
  const enqueue: EnqueueDelivery = async (tx, deliveryId, runAt) => {
    await jobs.enqueue(WEBHOOK_DELIVERY_JOB, { deliveryId }, { trx: tx, runAt, maxAttempts: 3 });
  };
  const policy = config.webhookAllow;
  const webhookFanout: EventSubscriber = createWebhookFanout({ database, clock, enqueue });
  return {
    webhooks: new WebhookService({ store, clock, box, teams, spaces, policy, emit, enqueue }),
    webhookDeliverer: new WebhookDeliverer({ database, clock, box, policy, emit, enqueue }),
    webhookFanout,
  };
}

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
