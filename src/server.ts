import http, { type IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import path from 'node:path';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import pino, { type Logger } from 'pino';
import { openBlobStore } from './blobs/index.ts';
import { InlineBlobStore } from './blobs/inline.ts';
import { ClientAddresses } from './client-address.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { createAccessArea } from './domain/access/area.ts';
import { type BootstrapResult, bootstrapOwner, ensureMainTenant } from './domain/accounts/bootstrap.ts';
import { AccountService, API_KEY_PREFIX, SESSION_PREFIX } from './domain/accounts/service.ts';
import { AccessLogRecorder } from './domain/analytics/recorder.ts';
import { AnalyticsService } from './domain/analytics/service.ts';
import { AnonymousService, SPACE_KEY_PREFIX } from './domain/anonymous/service.ts';
import { CredentialResolver } from './domain/auth/credentials.ts';
import { RepositoryConnectionService } from './domain/builds/connections.ts';
import { BUILD_JOB, BuildService } from './domain/builds/service.ts';
import { DEFAULT_DOCS_CACHE, DEFAULT_DOCS_DIR } from './domain/docs/loader.ts';
import { DocsService } from './domain/docs/service.ts';
import { CertificateService } from './domain/domains/certificates.ts';
import { NodeDnsLookups } from './domain/domains/dns.ts';
import { DomainService } from './domain/domains/service.ts';
import { ActivityService } from './domain/events/activity.ts';
import { DomainEvents } from './domain/events.ts';
import { MAIL_SEND_JOB } from './domain/mail/model.ts';
import { MailOutbox } from './domain/mail/outbox.ts';
import { ACCESS_TOKEN_PREFIX } from './domain/oauth/lifetimes.ts';
import { OAuthService } from './domain/oauth/service.ts';
import { PeopleService } from './domain/people/service.ts';
import { Publisher } from './domain/publishing/publish.ts';
import { SecretBox } from './domain/publishing/secrets.ts';
import { PublishingService } from './domain/publishing/service.ts';
import { Spool } from './domain/publishing/spool.ts';
import { UploadTokens } from './domain/publishing/tokens.ts';
import { VariableService } from './domain/publishing/variables.ts';
import { SpaceService } from './domain/spaces/service.ts';
import { TagService } from './domain/tags/service.ts';
import { TeamService } from './domain/teams/service.ts';
import { VisitorTokenSigner } from './domain/visitor-tokens/tokens.ts';
import type { EmitEvent } from './domain/webhooks/model.ts';
import { ApiError } from './errors/problem.ts';
import { makeAuthenticate } from './http/auth.ts';
import { clientErrorResponder, installErrorHandling } from './http/errors.ts';
import {
  ACME_CHALLENGE_PATH,
  answerAcmeChallenge,
  createHttpsListener,
  type HttpsListener,
  toHttps,
} from './http/https.ts';
import { Cursors } from './http/pagination.ts';
import { createRateLimits } from './http/rate-limits.ts';
import { routeAreas } from './http/routes/index.ts';
import { siteAccessRoutes } from './http/routes/site-access.ts';
import './http/types.ts';
import { newId } from './ids.ts';
import { registerBuildJobs } from './jobs/builds.ts';
import { createFunctionServices, registerFunctionJobs } from './jobs/crons.ts';
import { MAIL_MAX_ATTEMPTS, registerMailJobs } from './jobs/mail.ts';
import { registerMaintenanceJobs, sweepSpool } from './jobs/maintenance.ts';
import { JobQueue } from './jobs/queue.ts';
import { createThumbnails, loopbackOf, registerThumbnailJobs } from './jobs/thumbnails.ts';
import { createWebhookArea, registerWebhookJobs } from './jobs/webhooks.ts';
import { openMailSender } from './mail/senders.ts';
import { Metrics } from './metrics.ts';
import { compileValidator, type HttpPart, toValidationError } from './schemas/validation.ts';
import { ACCESS_COOKIE, signSiteToken } from './serve/access.ts';
import { createSiteHandler } from './serve/edge.ts';
import { checkRequestHost, hostnameOf, requestHostname } from './serve/host.ts';
import { type FastLane, installFastLane, type WireHandler } from './serve/wire.ts';
import { registerServerMetrics } from './server-metrics.ts';
import type { Services } from './services.ts';
import { checkSharedKey } from './shared-key.ts';
import { ChangeFeed } from './store/change-feed.ts';
import { migrate, openDatabase } from './store/db.ts';
import { RateWindows } from './store/rate-windows.ts';
import { Store } from './store/repos/index.ts';

/**
 * Fastify logs two lines per request at `info`, which bury everything else (the first-start banner
 * among them). Here a request is one line at `debug` (`SPACES_LOG_LEVEL=debug` shows them); a request
 * that failed is still an `error`.
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(
    error: Error | null | undefined,
    _req: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error)
      reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
  override routeNotFound(request: FastifyRequest): void {
    request.log.debug(`Route ${request.method}:${request.url} not found`);
  }
}

/** A host that could be an IPv4 literal. Hoisted: a regex literal in a function is a new object per call. */
const DIGITS_AND_DOTS = /^[0-9.]+$/;

export interface BuildOptions {
  clock?: Clock;
  logger?: Logger;
  /** PostgreSQL only: keep every table in this schema (tests isolate runs this way). */
  databaseSchema?: string;
  /** Where the Markdown pages live; the repository's `docs/` by default. */
  docsDir?: string;
  /** Tests: also told of each `webhook.*` event the webhooks area records (in its transaction). */
  webhookEvents?: EmitEvent;
}

/** A route as Fastify serves it, however it was registered (see the OpenAPI coverage test). */
export interface ServedRoute {
  method: string;
  url: string;
  params?: unknown;
}

export interface SpacesServer {
  app: FastifyInstance;
  /** Every method and path the API answers, collected as Fastify registers them. */
  readonly servedRoutes: readonly ServedRoute[];
  services: Services;
  /**
   * Set by `listen()` on the first start of an empty database: the owner's credentials, to print once.
   * Created only once the port is bound, so a start that can't listen loses nothing: the next one
   * creates and prints them.
   */
  readonly bootstrap: BootstrapResult | null;
  /** The HTTPS listener's port once `listen()` started it (SPACES_HTTPS_PORT), else null. */
  readonly httpsPort: number | null;
  /** Changes other instances on the same PostgreSQL make, heard at once (idle on SQLite). */
  readonly changeFeed: ChangeFeed;
  /** The edge's fast lane once listening (see `serve/wire.ts`): counters for tests and diagnostics. */
  readonly fastLane: FastLane | null;
  listen(): Promise<{ port: number; url: string }>;
  close(options?: CloseOptions): Promise<void>;
}

export interface CloseOptions {
  /**
   * How long requests in flight and running jobs may take to finish; then the connections still open
   * are cut (an upload that never ends) and the jobs abandoned (their leases run out and they run
   * again). Without it, closing waits for them.
   */
  graceMs?: number;
}

export { requestHostname } from './serve/host.ts';

/** Builds the whole service from a config: storage, domain services, the API and the site edge. */
export async function buildServer(config: Config, options: BuildOptions = {}): Promise<SpacesServer> {
  const clock = options.clock ?? systemClock;
  const log =
    options.logger ??
    pino({
      level: config.logLevel,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
        censor: '[redacted]',
      },
    });

  // Read (and validate) the docs first: a broken page stops start-up before anything is opened.
  const docs = options.docsDir
    ? new DocsService(options.docsDir)
    : new DocsService(DEFAULT_DOCS_DIR, { cacheFile: DEFAULT_DOCS_CACHE });
  const database = await openDatabase(config.databaseUrl, { schema: options.databaseSchema });
  await migrate(database);
  const store = new Store(database);
  // Small blobs live in the database, the rest in the configured store (see src/blobs/inline.ts).
  const blobs = new InlineBlobStore(store, await openBlobStore(config.blobUrl), {
    maxBytes: config.inlineBlobBytes,
    clock,
    sqliteFile: database.dialect === 'sqlite' ? config.databaseUrl.slice('sqlite:'.length) : undefined,
  });
  const mainTenantId = await ensureMainTenant(store, clock);
  const cursors = new Cursors(await store.repos.meta.secret('cursor'));
  const clientAddresses = new ClientAddresses(config.trustedProxies);
  const events = new DomainEvents(clock);
  const metrics = new Metrics();
  const jobs = new JobQueue({ database, clock, log, pollIntervalMs: config.jobPollMs });
  const mail = new MailOutbox({
    store,
    clock,
    sender: openMailSender(config.mail, log.child({ area: 'mail' })),
    from: config.mail.from,
    enqueue: async (repos, mailId) => {
      await jobs.enqueue(MAIL_SEND_JOB, { mailId }, { trx: repos, maxAttempts: MAIL_MAX_ATTEMPTS });
    },
  });
  const teams = new TeamService(store, clock, events.log, {
    outbox: mail,
    publicUrl: () => config.publicUrl,
    signupOpen: config.signup === 'open',
  });
  const accounts = new AccountService(store, clock, teams, async () => mainTenantId, events.log);
  // Other instances on the same PostgreSQL hear of every change at once (nothing on SQLite).
  const changeFeed = new ChangeFeed({
    database,
    instanceId: newId('inst'),
    log: log.child({ area: 'change-feed' }),
  });
  events.announceTo((kind, subject) => {
    changeFeed
      .announce(kind, subject, clock.now())
      .catch((err) => log.warn({ err, kind, subject }, 'could not announce a change to other instances'));
  });
  changeFeed.subscribe((c) => events.applyRemote(c.kind, c.subject));
  // Instances on one PostgreSQL database count rate limits together.
  const rateWindows = database.dialect === 'postgres' ? new RateWindows(database) : null;
  const spaces = new SpaceService(store, clock, config, teams, events);
  const anonymous = new AnonymousService(
    store,
    clock,
    config,
    spaces,
    teams,
    accounts,
    mainTenantId,
    config.anonymous,
    events,
  );
  const credentials = new CredentialResolver();
  credentials.register(SPACE_KEY_PREFIX, anonymous.resolveKey);
  credentials.register(SESSION_PREFIX, accounts.resolveSession);
  credentials.register(API_KEY_PREFIX, accounts.resolveApiKey);
  const oauth = new OAuthService(store, clock, teams, await store.repos.meta.secret('oauth_csrf'));
  credentials.register(ACCESS_TOKEN_PREFIX, oauth.tokens.resolveAccessToken);

  const secretBox = new SecretBox(config.secretKey, config.dataDir);
  await checkSharedKey(store, secretBox).catch(async (err) => {
    await database.close();
    throw err;
  });
  const variables = new VariableService(store, clock, secretBox, events.log);
  const publishing = new PublishingService({
    store,
    clock,
    config,
    blobs,
    tokens: new UploadTokens(await store.repos.meta.secret('uploads')),
    variables,
    log,
    events,
  });
  const spool = new Spool(path.join(config.dataDir, 'tmp'));
  // The one-call publish entry: the publish route, builds and git push share it.
  const publisher = new Publisher({ store, clock, config, spaces, anonymous, publishing, spool, log });
  const repositoryConnections = new RepositoryConnectionService(store, clock, config, secretBox);
  const builds = new BuildService({
    store,
    clock,
    config,
    spaces,
    variables,
    publishing,
    publisher,
    spool,
    connections: repositoryConnections,
    enqueue: async (buildId) => {
      await jobs.enqueue(BUILD_JOB, { buildId }, { maxAttempts: 2 });
    },
    log: log.child({ area: 'builds' }),
    eventLog: events.log,
  });
  const webhookArea = createWebhookArea({
    database,
    store,
    clock,
    config,
    box: secretBox,
    teams,
    spaces,
    jobs,
    // webhook.* events go to the event log in the webhook change's transaction (a test may also watch them).
    emit: async (tx, input) => {
      await events.log.record(store.on(tx), input);
      await options.webhookEvents?.(tx, input);
    },
  });
  // Every event fans out to the team's matching webhooks in its own transaction (the outbox).
  events.log.subscribe(webhookArea.webhookFanout);
  const thumbnails = createThumbnails({ config, store, clock, blobs, spaces, jobs, log });
  publishing.channels.onMoved.push((spaceId) => thumbnails.schedule(spaceId));
  const functions = createFunctionServices(
    { store, blobs, clock, log, jobs, spaces, publishing, config, database, secretBox },
    () => services,
  );
  const services: Services = {
    config,
    clock,
    log,
    database,
    store,
    blobs,
    cursors,
    clientAddresses,
    credentials,
    accounts,
    teams,
    spaces,
    anonymous,
    events,
    publishing,
    publisher,
    spool,
    variables,
    builds,
    repositoryConnections,
    thumbnails,
    domains: new DomainService(
      store,
      clock,
      config,
      teams,
      spaces,
      new NodeDnsLookups(config.dnsServers),
      events,
    ),
    certificates: new CertificateService(store, clock, config, secretBox, log),
    ...webhookArea,
    access: createAccessArea({ store, clock, events, config, box: secretBox }),
    docs,
    oauth,
    tags: new TagService(store, clock, teams, events),
    activity: new ActivityService(store, clock, spaces, teams, events),
    mainTenantId,
    jobs,
    mail,
    people: new PeopleService({
      store,
      clock,
      events,
      mail,
      siteUrlOf: (s) => spaces.liveUrlOf(s),
      apiUrl: () => config.publicUrl,
    }),
    // Every instance derives the same signing key from the seed they share in the database.
    visitorTokens: new VisitorTokenSigner(
      await store.repos.meta.secret('visitor_tokens'),
      () => config.publicUrl,
    ),
    rateLimits: createRateLimits(clock, config),
    shared: { changes: changeFeed, rateWindows },
    metrics,
    analytics: new AnalyticsService(store, clock),
    accessLog: config.accessLog.enabled
      ? new AccessLogRecorder(store, { onError: (err) => log.error({ err }, 'access log flush failed') })
      : null,
    onClose: [],
    lifecycle: { started: false, draining: false, local: null },
    ...functions,
  };
  if (rateWindows) {
    for (const [name, limiter] of Object.entries(services.rateLimits)) limiter.shareWith(rateWindows, name);
  }
  registerServerMetrics(metrics, { changes: changeFeed, jobs });

  const apiHost = new URL(config.publicUrl).hostname.replace(/^\[|\]$/g, '');
  const isApiRequest = (req: IncomingMessage) => isApiHost(requestHostname(req));
  const isApiHost = (h: string) => {
    // Only a host with ':' or made of digits and dots can be an IP literal: skip isIP's regexes otherwise.
    return (
      h === apiHost ||
      h === 'localhost' ||
      h === '' ||
      ((h.includes(':') || DIGITS_AND_DOTS.test(h)) && isIP(h) !== 0)
    );
  };
  let siteHandler: ReturnType<typeof createSiteHandler> | null = null;
  /** Requests with two `Host` fields or a `Host` the absolute-form target contradicts. */
  const ambiguousHost = new WeakSet<IncomingMessage>();

  const newRequestId = () => `req_${Math.random().toString(36).slice(2, 10)}${Date.now().toString(36)}`;
  /** Every request of both listeners (HTTP and, when configured, HTTPS) goes through this. */
  let dispatch: http.RequestListener = () => {};
  let httpsPortSuffix = '';
  const app = Fastify({
    loggerInstance: log as unknown as FastifyBaseLogger,
    logController: new RequestLog(),
    genReqId: newRequestId,
    // Bytes Node's parser refuses before there is a request still get a problem document.
    clientErrorHandler: clientErrorResponder(() => config.publicUrl, newRequestId),
    bodyLimit: config.bodyLimit,
    // `req.ip` (quotas, rate limits, logs) follows the edge's client-address rule: see client-address.ts.
    trustProxy: clientAddresses.isTrustedProxy,
    // Path parameters like variable names (≤128) and version refs exceed find-my-way's default 100.
    routerOptions: { maxParamLength: 1024 },
    // One listener for both faces: API hosts go to Fastify, every other Host to the site edge.
    serverFactory: (handler) => {
      dispatch = (req, res) => {
        if (req.url?.startsWith(ACME_CHALLENGE_PATH)) {
          answerAcmeChallenge(services.certificates, req, res);
          return;
        }
        if (services.certificates.enabled && toHttps(services.certificates, req, res, httpsPortSuffix))
          return;
        // An ambiguous host is nobody's: the API answers it with its 400 problem (hook below).
        if (!checkRequestHost(req)) {
          ambiguousHost.add(req);
          handler(req, res);
        } else if (isApiRequest(req) || !siteHandler) handler(req, res);
        else siteHandler(req, res);
      };
      return http.createServer(dispatch);
    },
  }) as unknown as FastifyInstance;

  const servedRoutes: ServedRoute[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat())
      servedRoutes.push({ method, url: r.url, params: r.schema?.params });
  });
  app.decorate('services', services);
  app.decorate('routeSpecs', []);
  app.decorateRequest('principal', null);
  app.decorate('authenticate', makeAuthenticate(services));

  app.setValidatorCompiler(({ schema, httpPart }) => {
    const part = (httpPart ?? 'body') as HttpPart;
    const fn = compileValidator(schema as never, part);
    return (data: unknown) => {
      // Fastify hands an absent body over as null; an absent body means "all defaults".
      const value = data === null || data === undefined ? {} : data;
      return fn(value) ? { value } : { error: toValidationError(fn.errors ?? [], part) };
    };
  });

  // JSON with an empty body is "no body" (POST /v1/spaces takes one), not a parse error.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    jsonParser(req, body as string, done);
  });
  await app.register(formbody);
  await app.register(multipart, {
    limits: { fileSize: config.limits.maxFileBytes, files: config.limits.maxFilesPerVersion },
  });
  installErrorHandling(app);

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    if (ambiguousHost.has(req.raw)) {
      throw new ApiError(
        'invalid_request',
        'The request names its host more than once: two Host headers, or a Host that differs from the absolute request target.',
      );
    }
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const spec = req.routeOptions.config?.spec;
    if (spec?.deprecated) {
      reply.header('deprecation', `@${Math.floor(Date.parse(spec.deprecated.since) / 1000)}`);
      reply.header('sunset', new Date(spec.deprecated.sunset).toUTCString());
      reply.header(
        'link',
        [reply.getHeader('link'), `<${config.publicUrl}/docs/deprecation-policy>; rel="deprecation"`]
          .filter(Boolean)
          .join(', '),
      );
    }
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });

  // A purged space loses its versions (their blobs are then collected by the sweep) and variables.
  spaces.purgeHooks.push(async (repos, spaceId) => {
    await repos.versions.purgeForSpace(spaceId, clock.now().toISOString());
    await repos.variables.deleteForSpace(spaceId);
    await repos.builds.deleteForSpace(spaceId);
    await repos.repositoryConnections.deleteForSpace(spaceId);
  });
  const siteSecret = await store.repos.meta.secret('site');
  siteAccessRoutes(app, siteSecret);
  // The thumbnail renderer sees non-public sites as a member would: a short access cookie per page.
  thumbnails.siteCookie = (hostname, spaceId) =>
    `${ACCESS_COOKIE}=${signSiteToken(siteSecret, 'access', hostname, spaceId, 'thumbnails', clock.now().getTime() + 5 * 60_000)}`;
  for (const area of routeAreas) area(app);
  registerMaintenanceJobs(services);
  registerBuildJobs(services);
  registerWebhookJobs(services);
  services.onClose.push(() => services.webhookDeliverer.close());
  registerThumbnailJobs(services);
  registerMailJobs(services);
  registerFunctionJobs(services, services.crons);
  services.onClose.push(async () => services.mail.close());
  const swept = await sweepSpool(services);
  if (swept) log.info({ removed: swept }, 'removed spool files a previous run left behind');
  siteHandler = createSiteHandler(services, siteSecret);

  await app.ready();
  // Before the database closes: what the ring still holds is written.
  const accessLog = services.accessLog;
  if (accessLog) services.onClose.push(() => accessLog.close());
  // Registered last so it runs first on close: no handler runs while other areas shut down.
  services.onClose.push(() => services.jobs.stop());
  services.onClose.unshift(() => services.thumbnails.close());

  let closed = false;
  let lane: FastLane | null = null;
  let secureLane: WireHandler | null = null;
  let bootstrap: BootstrapResult | null = null;
  let httpsListener: HttpsListener | null = null;
  return {
    app,
    servedRoutes,
    get fastLane() {
      return lane;
    },
    services,
    changeFeed,
    get bootstrap() {
      return bootstrap;
    },
    get httpsPort() {
      return httpsListener?.port ?? null;
    },
    async listen() {
      // Plain GET/HEADs of site hosts answered from memory skip node:http's per-request machinery.
      const edge = siteHandler;
      if (edge && !lane) {
        lane = installFastLane(app.server, (req) => {
          const hostname = hostnameOf(req.headers.host ?? '');
          if (isApiHost(hostname) || req.url.startsWith(ACME_CHALLENGE_PATH)) return null;
          if (services.certificates.hasCertificate(hostname)) return null; // moved to HTTPS by node:http
          return edge.fast(req, hostname);
        });
        secureLane = (req) => {
          const hostname = hostnameOf(req.headers.host ?? '');
          return isApiHost(hostname) ? null : edge.fast(req, hostname, true);
        };
      }
      await app.listen({ port: config.port, host: config.host });
      const addr = app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : config.port;
      services.thumbnails.local = { host: loopbackOf(config.host), port };
      services.lifecycle.local = { host: loopbackOf(config.host), port };
      if (config.publicUrlFromPort) {
        config.publicUrl = `http://localhost:${port}`;
        if (!process.env.SPACES_SITE_URL) config.sitePortSuffix = `:${port}`;
      }
      // Only once the port is ours: a start that can't listen leaves no owner (so the next start
      // creates one and prints its credentials) and runs no jobs.
      if (config.httpsPort !== null) {
        await services.certificates.reload();
        httpsListener = await createHttpsListener({
          certs: services.certificates,
          port: config.httpsPort,
          host: config.host,
          tlsCert: config.tlsCert,
          tlsKey: config.tlsKey,
          dispatch,
          fast: secureLane ?? undefined,
          http2: config.http2,
        });
        httpsPortSuffix = httpsListener.port === 443 ? '' : `:${httpsListener.port}`;
        config.httpsPortSuffix = httpsPortSuffix;
      }
      bootstrap = await bootstrapOwner(store, config, accounts);
      await changeFeed.start();
      if (config.worker) await services.jobs.start();
      metrics.start();
      services.lifecycle.started = true;
      return { port, url: `http://127.0.0.1:${port}` };
    },
    async close(options: CloseOptions = {}) {
      if (closed) return;
      closed = true;
      const { graceMs } = options;
      // Fastify's close ends idle keep-alive connections (the fast lane's too) and waits for the rest.
      const cut = graceMs === undefined ? null : setTimeout(() => app.server.closeAllConnections(), graceMs);
      await Promise.all([
        app.close(),
        httpsListener?.close(),
        graceMs === undefined ? null : services.jobs.stop(graceMs),
      ]);
      if (cut) clearTimeout(cut);
      await changeFeed.stop();
      metrics.stop();
      for (const fn of services.onClose.reverse()) await fn();
      await blobs.close();
      await database.close();
    },
  };
}
