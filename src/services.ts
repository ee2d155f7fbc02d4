import type { Logger } from 'pino';
import type { BlobStore } from './blobs/port.ts';
import type { ClientAddresses } from './client-address.ts';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { AccessArea } from './domain/access/area.ts';
import type { AccountService } from './domain/accounts/service.ts';
import type { AccessLogRecorder } from './domain/analytics/recorder.ts';
import type { AnalyticsService } from './domain/analytics/service.ts';
import type { AnonymousService } from './domain/anonymous/service.ts';
import type { CredentialResolver } from './domain/auth/credentials.ts';
import type { RepositoryConnectionService } from './domain/builds/connections.ts';
import type { BuildService } from './domain/builds/service.ts';
import type { CronService } from './domain/crons/service.ts';
import type { SpaceDbHost } from './domain/database/host.ts';
import type { DatabaseService } from './domain/database/service.ts';
import type { DocsService } from './domain/docs/service.ts';
import type { CertificateService } from './domain/domains/certificates.ts';
import type { DomainService } from './domain/domains/service.ts';
import type { ActivityService } from './domain/events/activity.ts';
import type { EventSubscriber } from './domain/events/model.ts';
import type { DomainEvents } from './domain/events.ts';
import type { MailOutbox } from './domain/mail/outbox.ts';
import type { OAuthService } from './domain/oauth/service.ts';
import type { PeopleService } from './domain/people/service.ts';
import type { Publisher } from './domain/publishing/publish.ts';
import type { PublishingService } from './domain/publishing/service.ts';
import type { Spool } from './domain/publishing/spool.ts';
import type { VariableService } from './domain/publishing/variables.ts';
import type { RuntimeLogService } from './domain/runtime/logs.ts';
import type { SpaceService } from './domain/spaces/service.ts';
import type { StorageService } from './domain/storage/service.ts';
import type { TagService } from './domain/tags/service.ts';
import type { TeamService } from './domain/teams/service.ts';
import type { ThumbnailService } from './domain/thumbnails/service.ts';
import type { VisitorTokenSigner } from './domain/visitor-tokens/tokens.ts';
import type { WebhookDeliverer } from './domain/webhooks/delivery.ts';
import type { WebhookService } from './domain/webhooks/service.ts';
import type { Cursors } from './http/pagination.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { Metrics } from './metrics.ts';
import type { ChangeFeed } from './store/change-feed.ts';
import type { Database } from './store/db.ts';
import type { RateWindows } from './store/rate-windows.ts';
import type { Store } from './store/repos/index.ts';

/** Everything a route or job needs, built once by `buildServer` and passed in (never imported). */
export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  database: Database;
  /** Repositories over the database: the only way to its tables (see store/repos/index.ts). */
  store: Store;
  blobs: BlobStore;
  cursors: Cursors;
  /** The client address rule (`SPACES_TRUSTED_PROXIES`) the API and the edge share. */
  clientAddresses: ClientAddresses;
  credentials: CredentialResolver;
  accounts: AccountService;
  teams: TeamService;
  spaces: SpaceService;
  anonymous: AnonymousService;
  events: DomainEvents;
  /** Reading the event log: activity feeds, the audit log, event streams. */
  activity: ActivityService;
  /** The product documentation (pages from `docs/` plus generated ones) and its search index. */
  docs: DocsService;
  oauth: OAuthService;
  tags: TagService;
  mainTenantId: string;
  /** The durable job queue: areas register handlers/schedules while building; started after ready. */
  jobs: JobQueue;
  rateLimits: {
    signIn: RateLimiter;
    signup: RateLimiter;
    anonymousPublish: RateLimiter;
    oauthToken: RateLimiter;
    oauthDevice: RateLimiter;
    deviceVerify: RateLimiter;
    /** Site password attempts per space and client address, and per password credential. */
    sitePasswordIp: RateLimiter;
    sitePasswordCredential: RateLimiter;
    /** Access-request form posts per client address, and per (space, address) e-mailed. */
    accessRequestIp: RateLimiter;
    accessRequestAddress: RateLimiter;
  };
  publishing: PublishingService;
  /** `publishFiles`: read a file source and publish it in one call (the publish route, builds, git push). */
  publisher: Publisher;
  /** Where request bodies too large for memory are written while they are read (`<dataDir>/tmp`). */
  spool: Spool;
  variables: VariableService;
  /** Builds from an uploaded source or a git repository, and their runner. */
  builds: BuildService;
  /** A space's repository connection (where its builds come from), and its analysis. */
  repositoryConnections: RepositoryConnectionService;
  /** Pictures of live front pages (headless Chromium), rendered by a job after channels move. */
  thumbnails: ThumbnailService;
  /** Custom domains: inventory, binding, DNS verification. */
  domains: DomainService;
  /** Certificates of verified custom domains (ACME), and the TLS listener's SNI map. */
  certificates: CertificateService;
  /** Team webhooks (API side) and their delivery attempts (the `webhook.deliver` job). */
  webhooks: WebhookService;
  /** Site access: grants, share links, password and machine credentials (src/domain/access/). */
  access: AccessArea;
  webhookDeliverer: WebhookDeliverer;
  /** Writes a delivery per matching webhook for an event, in the event's transaction. */
  webhookFanout: EventSubscriber;
  /** The mail outbox (invitations): written in the change's transaction, sent by the `mail.send` job. */
  mail: MailOutbox;
  /** Signs visitor tokens for sites' backends (Ed25519; public keys at `/.well-known/jwks.json`). */
  visitorTokens: VisitorTokenSigner;
  /** People of a space (invited by e-mail) and visitors' access requests. */
  people: PeopleService;
  /**
   * What instances on one database share beyond the domain: the change feed (PostgreSQL
   * LISTEN/NOTIFY; idle on SQLite) and the rate-limit counts (PostgreSQL only; null on SQLite, where
   * limits count in memory).
   */
  shared: { changes: ChangeFeed; rateWindows: RateWindows | null };
  /** Operational metrics for `GET /metrics` (src/metrics.ts); areas register what they measure. */
  metrics: Metrics;
  /** Run on shutdown, last registered first. */
  /** Access logs, analytics and usage reads. */
  analytics: AnalyticsService;
  /** The edge's access log ring (null with `SPACES_ACCESS_LOG=off`). */
  accessLog: AccessLogRecorder | null;
  onClose: Array<() => Promise<void>>;
  /**
   * False until `listen()` has finished start-up (the owner account exists, jobs run): `/readyz`
   * answers 503 until then, so a supervisor never sends traffic to a half-started server. `draining`
   * turns true on SIGTERM: `/readyz` answers 503 again while requests are still served.
   */
  lifecycle: {
    started: boolean;
    draining: boolean;
    /** This server's own HTTP listener once it listens (crons send their requests to it). */
    local: { host: string; port: number } | null;
  };
  /** Crons of live versions (behaviour §4.8). */
  crons: CronService;
  /** Functions' console lines and exceptions per request (issue 26). */
  runtimeLogs: RuntimeLogService;
  /** `env.STORAGE` of runtime spaces (behaviour §11). */
  storage: StorageService;
  /** Where each runtime space's SQLite database is reached (this instance, or the one that owns it). */
  spaceDbs: SpaceDbHost;
  /** The owner's API over space databases: inspect, dump, export, import, migrate, console. */
  databases: DatabaseService;
}
