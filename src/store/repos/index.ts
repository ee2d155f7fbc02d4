import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db.ts';
import type { DB } from '../schema.ts';
import { type AccessRepos, accessRepos } from './access.ts';
import { type AnalyticsRepos, analyticsRepos } from './analytics.ts';
import { type BuildRepos, buildsRepos } from './builds.ts';
import { type CronRepos, cronsRepos } from './crons.ts';
import { type DomainRepos, domainsRepos } from './domains.ts';
import { type EventRepos, eventsRepos } from './events.ts';
import { type IdentityRepos, identityRepos } from './identity.ts';
import { type JobRepos, jobsRepos } from './jobs.ts';
import { type MailRepos, mailRepos } from './mail.ts';
import { type PeopleRepos, peopleRepos } from './people.ts';
import { type PublishingRepos, publishingRepos } from './publishing.ts';
import { type RuntimeRepos, runtimeRepos } from './runtime.ts';
import { type ServingRepos, servingRepos } from './serving.ts';
import { type SpaceRepos, spacesRepos } from './spaces.ts';
import { type WebhookRepos, webhooksRepos } from './webhooks.ts';

/**
 * Repositories own every query: the domain asks them for what it needs by intent
 * (`spaces.bySlug`, `channels.move`), never writes SQL, and never sees the dialect.
 *
 * A repository is a class constructed over a {@link RepoContext}: the executor to run on (the
 * database, or one transaction) and the database it belongs to (dialect, and the SQLite handle for
 * bulk writes). `Store.repos` runs each query on its own; `Store.transaction(fn)` hands `fn` the
 * same repositories bound to one transaction, so a change and what must commit with it (an event,
 * a quota) commit together or not at all. Repositories are grouped by area, one file per group
 * (`identity.ts`, `spaces.ts`, `publishing.ts`, `serving.ts`), each listing its own.
 */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface RepoContext {
  exec: Executor;
  database: Database;
  /** True inside `Store.transaction`. */
  inTransaction: boolean;
  /** Inside `Store.transaction`: what runs once it committed (see `EventRepository.afterCommit`). */
  afterCommit?: Array<() => void>;
}

export type Repositories = IdentityRepos &
  SpaceRepos &
  PublishingRepos &
  ServingRepos &
  JobRepos &
  DomainRepos &
  BuildRepos &
  WebhookRepos &
  EventRepos &
  AnalyticsRepos &
  MailRepos &
  AccessRepos &
  PeopleRepos &
  RuntimeRepos &
  CronRepos;

/** The repositories over one executor (`Store.transaction` hands these out; an event subscriber builds them over its transaction). */
export function repositories(ctx: RepoContext): Repositories {
  return {
    ...identityRepos(ctx),
    ...spacesRepos(ctx),
    ...publishingRepos(ctx),
    ...servingRepos(ctx),
    ...jobsRepos(ctx),
    ...domainsRepos(ctx),
    ...buildsRepos(ctx),
    ...webhooksRepos(ctx),
    ...eventsRepos(ctx),
    ...analyticsRepos(ctx),
    ...mailRepos(ctx),
    ...accessRepos(ctx),
    ...peopleRepos(ctx),
    ...runtimeRepos(ctx),
    ...cronsRepos(ctx),
  };
}

/** The metadata store: repositories over one database (SQLite or PostgreSQL). */
export class Store {
  readonly repos: Repositories;

  constructor(readonly database: Database) {
    this.repos = repositories({ exec: database.db, database, inTransaction: false });
  }

  get dialect(): Database['dialect'] {
    return this.database.dialect;
  }

  /**
   * The repositories bound to a transaction someone else opened (a job's `JobContext.transaction`, a
   * subscriber's `tx`), e.g. to record an event in it. What runs after its commit runs at once here.
   */
  on(trx: Executor): Repositories {
    return repositories({ exec: trx, database: this.database, inTransaction: true });
  }

  /**
   * Runs `fn` with repositories bound to one transaction: all of its writes commit, or none. `exec`
   * is that transaction, for what must join it from outside the repositories (an event's subscribers).
   */
  async transaction<T>(fn: (repos: Repositories, exec: Executor) => Promise<T>): Promise<T> {
    const afterCommit: Array<() => void> = [];
    const result = await this.database.db
      .transaction()
      .execute((trx) =>
        fn(repositories({ exec: trx, database: this.database, inTransaction: true, afterCommit }), trx),
      );
    for (const f of afterCommit) f();
    return result;
  }
}
