import type { Clock } from '../../clock.ts';
import { newId } from '../../ids.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import type { EnqueueMail, MailMessage, MailSender } from './model.ts';

/** How long sent and failed messages stay in the outbox (their bodies are gone already). */
export const MAIL_RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * The outbox: a change that sends mail writes the message in its own transaction (`queue`), so a
 * rolled-back invitation sends nothing and a committed one is sent at least once, by the `mail.send`
 * job (`deliver`), whatever happens to the process in between.
 */
export class MailOutbox {
  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      sender: MailSender;
      /** The `From` of every message (`SPACES_MAIL_FROM`). */
      from: string;
      enqueue: EnqueueMail;
    },
  ) {}

  get senderKind(): string {
    return this.deps.sender.kind;
  }

  /** Writes the message and its delivery job in the caller's transaction; returns the message id. */
  async queue(repos: Repositories, message: MailMessage): Promise<string> {
    const now = this.deps.clock.now().toISOString();
    const id = newId('mail');
    await repos.mailOutbox.insert({
      id,
      tenant_id: message.tenantId,
      kind: message.kind,
      to_address: message.to,
      // One line: a header never carries a line break an author slipped into a name.
      subject: oneLine(message.subject),
      text_body: message.text,
      html_body: message.html ?? null,
      status: 'queued',
      attempts: 0,
      last_error: null,
      message_id: null,
      created_at: now,
      updated_at: now,
      sent_at: null,
    });
    await this.deps.enqueue(repos, id);
    return id;
  }

  /**
   * One delivery attempt of a queued message. A message sent already (a second run after a lost
   * lease) is not sent again. `final` says this is the last attempt: a failure then marks the
   * message failed. Throws when the sender refused, so the job is retried.
   */
  async deliver(id: string, final: boolean): Promise<'sent' | 'skipped'> {
    const { store, clock, sender, from } = this.deps;
    const row = await store.repos.mailOutbox.byId(id);
    if (row?.status !== 'queued' || row.text_body === null) return 'skipped';
    let messageId: string | null;
    try {
      ({ messageId } = await sender.send({
        id: row.id,
        from,
        to: row.to_address,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
      }));
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      await store.repos.mailOutbox.recordFailure(id, reason.slice(0, 500), clock.now().toISOString(), final);
      throw err;
    }
    await store.repos.mailOutbox.markSent(id, messageId, clock.now().toISOString());
    return 'sent';
  }

  /** Drops finished messages past retention; returns how many. */
  purge(): Promise<number> {
    const before = new Date(this.deps.clock.now().getTime() - MAIL_RETENTION_MS).toISOString();
    return this.deps.store.repos.mailOutbox.purgeFinished(before);
  }

  close(): void {
    this.deps.sender.close();
  }
}

function oneLine(s: string): string {
  return s
    .replace(/[\r\n\t\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, 250);
}
