/** The mail area's tables (issue 25; migration 0031). */
export interface MailTables {
  /** One row per e-mail the service sends; delivered by the `mail.send` job. */
  mail_outbox: {
    id: string;
    tenant_id: string;
    /** What the message is (`team_invitation`, …): for logs and metrics. */
    kind: string;
    to_address: string;
    subject: string;
    /** Null once the message was sent (links in it must not outlive the delivery). */
    text_body: string | null;
    html_body: string | null;
    status: 'queued' | 'sent' | 'failed';
    attempts: number;
    last_error: string | null;
    /** The Message-ID the sender gave the message. */
    message_id: string | null;
    created_at: string;
    updated_at: string;
    sent_at: string | null;
  };
}
