import type { RepoContext } from './index.ts';
import { WebhookDeliveryRepository } from './webhooks/deliveries.ts';
import { WebhookRepository } from './webhooks/webhooks.ts';

/** The webhooks group's repositories (see index.ts). */
export interface WebhookRepos {
  webhooks: WebhookRepository;
  webhookDeliveries: WebhookDeliveryRepository;
}

export function webhooksRepos(ctx: RepoContext): WebhookRepos {
  return {
    webhooks: new WebhookRepository(ctx),
    webhookDeliveries: new WebhookDeliveryRepository(ctx),
  };
}
