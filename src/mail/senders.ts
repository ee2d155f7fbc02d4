import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { MailSettings } from '../config.ts';
import type { MailSender, OutgoingMail } from '../domain/mail/model.ts';

/**
 * The senders `SPACES_MAIL` chooses from. Every one builds the message with nodemailer, so a file
 * written by `file` is byte for byte what `smtp` would have sent.
 */
export function openMailSender(settings: MailSettings, log: Logger): MailSender {
  if (settings.transport === 'smtp') return new SmtpSender(settings.url);
  if (settings.transport === 'log') return new LogSender(log);
  return new FileSender(settings.dir, log);
}

function envelope(mail: OutgoingMail): SendMailOptions {
  return {
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    ...(mail.html ? { html: mail.html } : {}),
    // A retried job sends the same Message-ID, so a receiving server can drop the duplicate.
    messageId: `<${mail.id}@spaces>`,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/** Sends through an SMTP server (`smtp://` with STARTTLS when offered, `smtps://` on TLS). */
class SmtpSender implements MailSender {
  readonly kind = 'smtp';
  private readonly transport: Transporter;

  constructor(url: string) {
    this.transport = nodemailer.createTransport(url, {
      connectionTimeout: 10_000,
      socketTimeout: 30_000,
    } as never);
  }

  async send(mail: OutgoingMail): Promise<{ messageId: string | null }> {
    const info = await this.transport.sendMail(envelope(mail));
    if (info.rejected?.length) throw new Error(`the SMTP server refused ${String(info.rejected.join(', '))}`);
    return { messageId: info.messageId ?? null };
  }

  close(): void {
    this.transport.close();
  }
}

/** Writes each message as `<dir>/<id>.eml` and logs where: the default, nothing to set up. */
class FileSender implements MailSender {
  readonly kind = 'file';
  private readonly build = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'unix',
  });

  constructor(
    private readonly dir: string,
    private readonly log: Logger,
  ) {}

  async send(mail: OutgoingMail): Promise<{ messageId: string | null }> {
    const info = await this.build.sendMail(envelope(mail));
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, `${mail.id}.eml`);
    const tmp = `${file}.tmp`;
    await fs.writeFile(tmp, info.message as Buffer, { mode: 0o600 });
    await fs.rename(tmp, file);
    this.log.info(
      { to: mail.to, subject: mail.subject, file },
      'e-mail written to a file (SPACES_MAIL=file)',
    );
    return { messageId: info.messageId ?? null };
  }

  close(): void {
    this.build.close();
  }
}

/** Prints each message in the log (development). */
class LogSender implements MailSender {
  readonly kind = 'log';

  constructor(private readonly log: Logger) {}

  async send(mail: OutgoingMail): Promise<{ messageId: string | null }> {
    this.log.info(
      { from: mail.from, to: mail.to, subject: mail.subject, text: mail.text },
      'e-mail (SPACES_MAIL=log)',
    );
    return { messageId: `<${mail.id}@spaces>` };
  }

  close(): void {}
}
