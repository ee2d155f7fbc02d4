import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type WebhookDeliveryRow = DB['webhook_deliveries'];

/** What one attempt writes. */
export interface DeliveryAttemptUpdate {
  state: string;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string;
  last_status_code: number | null;
  last_error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
  updated_at: string;
}

/** Deliveries of webhooks: one row per (event, webhook), plus one per redelivery. */
export class WebhookDeliveryRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: WebhookDeliveryRow): Promise<void> {
    await this.ctx.exec.insertInto('webhook_deliveries').values(row).execute();
  }

  async byId(id: string): Promise<WebhookDeliveryRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst()) ?? null
    );
  }

  async byIdInTeams(id: string, teamIds: readonly string[]): Promise<WebhookDeliveryRow | null> {
    if (teamIds.length === 0) return null;
    return (
      (await this.ctx.exec
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('id', '=', id)
        .where('team_id', 'in', teamIds)
        .executeTakeFirst()) ?? null
    );
  }

  /** A webhook's deliveries, newest first, keyset on id. */
  listForWebhook(webhookId: string, after: string | null, n: number): Promise<WebhookDeliveryRow[]> {
    let q = this.ctx.exec.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /**
   * Records an attempt if the delivery is still at `expectedAttempts` (a second run of the same job
   * after a lost lease changes nothing). True when it was recorded.
   */
  async recordAttempt(id: string, expectedAttempts: number, update: DeliveryAttemptUpdate): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('webhook_deliveries')
      .set(update)
      .where('id', '=', id)
      .where('attempts', '=', expectedAttempts)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
