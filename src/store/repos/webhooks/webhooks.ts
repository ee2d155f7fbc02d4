import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type WebhookRow = DB['webhooks'];

export type WebhookPatch = Partial<
  Pick<
    WebhookRow,
    | 'url'
    | 'description'
    | 'events'
    | 'status'
    | 'consecutive_failures'
    | 'secret_sealed'
    | 'previous_secret_sealed'
    | 'previous_secret_expires_at'
    | 'disabled_reason'
  >
> & { updated_at: string };

/**
 * A team's webhooks. Reads a credential drives are scoped to the teams the caller reaches
 * (`teamIds`): another team's webhook is indistinguishable from one that does not exist.
 */
export class WebhookRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: WebhookRow): Promise<void> {
    await this.ctx.exec.insertInto('webhooks').values(row).execute();
  }

  async byId(id: string): Promise<WebhookRow | null> {
    return (
      (await this.ctx.exec.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()) ?? null
    );
  }

  async byIdInTeams(id: string, teamIds: readonly string[]): Promise<WebhookRow | null> {
    if (teamIds.length === 0) return null;
    return (
      (await this.ctx.exec
        .selectFrom('webhooks')
        .selectAll()
        .where('id', '=', id)
        .where('team_id', 'in', teamIds)
        .executeTakeFirst()) ?? null
    );
  }

  /** Newest first, keyset on id. */
  listInTeams(teamIds: readonly string[], after: string | null, n: number): Promise<WebhookRow[]> {
    if (teamIds.length === 0) return Promise.resolve([]);
    let q = this.ctx.exec.selectFrom('webhooks').selectAll().where('team_id', 'in', teamIds);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /** The webhooks of a team that receive deliveries now (`active` or `failing`), oldest first. */
  receivingInTeam(teamId: string): Promise<WebhookRow[]> {
    return this.ctx.exec
      .selectFrom('webhooks')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('status', 'in', ['active', 'failing'])
      .orderBy('id')
      .execute();
  }

  async update(id: string, patch: WebhookPatch): Promise<void> {
    await this.ctx.exec.updateTable('webhooks').set(patch).where('id', '=', id).execute();
  }

  /**
   * Counts one more failed attempt, atomically (concurrent deliveries of one webhook each add one;
   * the row stays locked to this transaction until it ends), and answers the row after it.
   */
  async countFailure(id: string, at: string): Promise<WebhookRow | null> {
    await this.ctx.exec
      .updateTable('webhooks')
      .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1), updated_at: at }))
      .where('id', '=', id)
      .execute();
    return this.byId(id);
  }

  /** A delivery succeeded: no consecutive failures, and a `failing` webhook is `active` again. */
  async resetFailures(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('webhooks')
      .set((eb) => ({
        consecutive_failures: 0,
        status: eb.case().when('status', '=', 'failing').then('active').else(eb.ref('status')).end(),
        updated_at: at,
      }))
      .where('id', '=', id)
      .where((eb) => eb.or([eb('consecutive_failures', '>', 0), eb('status', '=', 'failing')]))
      .execute();
  }

  /** Removes the webhook and its deliveries. */
  async delete(id: string): Promise<void> {
    await this.ctx.exec.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
    await this.ctx.exec.deleteFrom('webhooks').where('id', '=', id).execute();
  }
}
