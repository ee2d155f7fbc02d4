import { MAIL_SEND_JOB } from '../domain/mail/model.ts';
import type { Services } from '../services.ts';

/** Attempts per message: the queue backs off between them (5 s, 10 s, 20 s, … up to an hour). */
export const MAIL_MAX_ATTEMPTS = 8;

/**
 * The outbox's delivery: one `mail.send` job per message, added in the transaction that wrote it.
 * A refused message is retried by the queue with backoff; the last attempt marks it failed. Sent and
 * failed messages are purged after 30 days.
 */
export function registerMailJobs(services: Pick<Services, 'jobs' | 'mail' | 'log'>): void {
  const { jobs, mail, log } = services;
  jobs.registerHandler<{ mailId: string }>(
    MAIL_SEND_JOB,
    async (job) => {
      const final = job.attempt >= job.maxAttempts;
      try {
        await mail.deliver(job.payload.mailId, final);
      } catch (err) {
        log.warn({ err, mailId: job.payload.mailId, attempt: job.attempt, final }, 'e-mail not accepted');
        throw err;
      }
    },
    { concurrency: 2, leaseMs: 2 * 60_000 },
  );
  jobs.registerHandler('mail.purge', async () => {
    await mail.purge();
  });
  jobs.schedule('mail.purge', 24 * 3600_000);
}
