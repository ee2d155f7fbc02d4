import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type MailRow = DB['mail_outbox'];

/** The mail outbox: messages written with the change that sends them, then delivered by a job. */
export class MailOutboxRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: MailRow): Promise<void> {
    await this.ctx.exec.insertInto('mail_outbox').values(row).execute();
  }

  async byId(id: string): Promise<MailRow | null> {
    return (
      (await this.ctx.exec.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst()) ??
      null
    );
  }

  /** A queued message becomes sent; its bodies are dropped. False when it was not queued any more. */
  async markSent(id: string, messageId: string | null, at: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('mail_outbox')
      .set((eb) => ({
        status: 'sent',
        message_id: messageId,
        sent_at: at,
        updated_at: at,
        text_body: null,
        html_body: null,
        last_error: null,
        attempts: eb('attempts', '+', 1),
      }))
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Records a failed attempt; `final` marks the message failed (its bodies dropped: nothing will send
   * them any more).
   */
  async recordFailure(id: string, error: string, at: string, final: boolean): Promise<void> {
    await this.ctx.exec
      .updateTable('mail_outbox')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        last_error: error,
        updated_at: at,
        ...(final ? { status: 'failed' as const, text_body: null, html_body: null } : {}),
      }))
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .execute();
  }

  /** Messages to one address, newest first (operators and tests). */
  listTo(tenantId: string, address: string, limit: number): Promise<MailRow[]> {
    return this.ctx.exec
      .selectFrom('mail_outbox')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('to_address', '=', address)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** Removes sent and failed messages last changed before `before`; returns how many. */
  async purgeFinished(before: string): Promise<number> {
    const r = await this.ctx.exec
      .deleteFrom('mail_outbox')
      .where('status', 'in', ['sent', 'failed'])
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
