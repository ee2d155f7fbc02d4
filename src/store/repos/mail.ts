import type { RepoContext } from './index.ts';
import { MailOutboxRepository } from './mail/outbox.ts';

/** The mail group's repositories (see index.ts). */
export interface MailRepos {
  mailOutbox: MailOutboxRepository;
}

export function mailRepos(ctx: RepoContext): MailRepos {
  return { mailOutbox: new MailOutboxRepository(ctx) };
}
