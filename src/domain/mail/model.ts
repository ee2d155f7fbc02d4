import type { Repositories } from '../../store/repos/index.ts';

/** The mail area's vocabulary: a message to send, the port that sends it, and the job's kind. */

export const MAIL_SEND_JOB = 'mail.send';

/** A message as the domain writes it: plain text always, HTML optional. */
export interface MailMessage {
  tenantId: string;
  /** What the message is, for logs: `team_invitation`, `space_invitation`, … */
  kind: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** A message as a sender gets it, with its outbox id and the configured sender address. */
export interface OutgoingMail {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
}

/** Sends one message; throws when the message was not accepted (the job retries). */
export interface MailSender {
  /** `smtp`, `file` or `log`: what `SPACES_MAIL` chose. */
  readonly kind: string;
  send(mail: OutgoingMail): Promise<{ messageId: string | null }>;
  close(): void;
}

/** Adds the delivery job for an outbox row to the caller's transaction. */
export type EnqueueMail = (repos: Repositories, mailId: string) => Promise<void>;
