import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { BlobStore } from './blobs/port.ts';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { AccountService } from './domain/accounts/service.ts';
import type { AnonymousService } from './domain/anonymous/service.ts';
import type { CredentialResolver } from './domain/auth/credentials.ts';
import type { DomainEvents } from './domain/events.ts';
import type { PublishingService } from './domain/publishing/service.ts';
import type { VariableService } from './domain/publishing/variables.ts';
import type { SpaceService } from './domain/spaces/service.ts';
import type { TeamService } from './domain/teams/service.ts';
import type { Cursors } from './http/pagination.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import type { Database } from './store/db.ts';
import type { DB } from './store/schema.ts';

/** Everything a route or job needs, built once by `buildServer` and passed in (never imported). */
export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  database: Database;
  db: Kysely<DB>;
  blobs: BlobStore;
  cursors: Cursors;
  credentials: CredentialResolver;
  accounts: AccountService;
  teams: TeamService;
  spaces: SpaceService;
  anonymous: AnonymousService;
  events: DomainEvents;
  mainTenantId: string;
  rateLimits: {
    signIn: RateLimiter;
    signup: RateLimiter;
    anonymousPublish: RateLimiter;
  };
  publishing: PublishingService;
  variables: VariableService;
  /** Run on shutdown, last registered first. */
  onClose: Array<() => Promise<void>>;
}
