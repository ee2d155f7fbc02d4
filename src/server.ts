import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { openBlobStore } from './blobs/index.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { type BootstrapResult, bootstrapOwner, ensureMainTenant } from './domain/accounts/bootstrap.ts';
import { AccountService, API_KEY_PREFIX, SESSION_PREFIX } from './domain/accounts/service.ts';
import { AnonymousService, SPACE_KEY_PREFIX } from './domain/anonymous/service.ts';
import { CredentialResolver } from './domain/auth/credentials.ts';
import { DomainEvents } from './domain/events.ts';
import { SecretBox } from './domain/publishing/secrets.ts';
import { PublishingService } from './domain/publishing/service.ts';
import { UploadTokens } from './domain/publishing/tokens.ts';
import { VariableService } from './domain/publishing/variables.ts';
import { SpaceService } from './domain/spaces/service.ts';
import { TeamService } from './domain/teams/service.ts';
import { makeAuthenticate } from './http/auth.ts';
import { installErrorHandling } from './http/errors.ts';
import { Cursors } from './http/pagination.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { accountRoutes } from './http/routes/account.ts';
import { claimRoutes } from './http/routes/claim.ts';
import { metaRoutes } from './http/routes/meta.ts';
import { publishRoutes } from './http/routes/publish.ts';
import { spaceRoutes } from './http/routes/spaces.ts';
import { teamRoutes } from './http/routes/teams.ts';
import { variableRoutes } from './http/routes/variables.ts';
import { versionRoutes } from './http/routes/versions.ts';
import './http/types.ts';
import { compileValidator, type HttpPart, toValidationError } from './http/validation.ts';
import { createSiteHandler } from './serve/edge.ts';
import type { Services } from './services.ts';
import { migrate, openDatabase } from './store/db.ts';
import { serverSecret } from './store/meta.ts';

export interface BuildOptions {
  clock?: Clock;
  logger?: Logger;
  /** PostgreSQL only: keep every table in this schema (tests isolate runs this way). */
  databaseSchema?: string;
}

export interface SpacesServer {
  app: FastifyInstance;
  services: Services;
  /** Set on the first start of an empty database: the owner's credentials, to print once. */
  bootstrap: BootstrapResult | null;
  listen(): Promise<{ port: number; url: string }>;
  close(): Promise<void>;
}

/** Route modules, one per area, each registering its routes through `addRoute`. */
const areas: Array<(app: FastifyInstance) => void> = [
  metaRoutes,
  accountRoutes,
  teamRoutes,
  spaceRoutes,
  claimRoutes,
];
areas.push(versionRoutes, publishRoutes, variableRoutes);

/** The request's hostname without port, lowercased (`[::1]:8080` → `::1`). */
export function requestHostname(req: IncomingMessage): string {
  const host = (req.headers.host ?? '').toLowerCase();
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

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

  const database = await openDatabase(config.databaseUrl, { schema: options.databaseSchema });
  await migrate(database);
  const db = database.db;
  const blobs = await openBlobStore(config.blobUrl);
  const mainTenantId = await ensureMainTenant(db, clock);
  const cursors = new Cursors(await serverSecret(db, 'cursor'));
  const teams = new TeamService(db, clock);
  const accounts = new AccountService(db, clock, teams, async () => mainTenantId);
  const events = new DomainEvents();
  const spaces = new SpaceService(db, clock, config, teams, events);
  const anonymous = new AnonymousService(db, clock, config, spaces, teams, mainTenantId, config.anonymous);
  const credentials = new CredentialResolver();
  credentials.register(SPACE_KEY_PREFIX, anonymous.resolveKey);
  credentials.register(SESSION_PREFIX, accounts.resolveSession);
  credentials.register(API_KEY_PREFIX, accounts.resolveApiKey);

  const variables = new VariableService(db, clock, new SecretBox(config.secretKey, config.dataDir));
  const publishing = new PublishingService({
    db,
    clock,
    config,
    blobs,
    spaces,
    tokens: new UploadTokens(await serverSecret(db, 'uploads')),
    variables,
    log,
  });
  const services: Services = {
    config,
    clock,
    log,
    database,
    db,
    blobs,
    cursors,
    credentials,
    accounts,
    teams,
    spaces,
    anonymous,
    events,
    publishing,
    variables,
    mainTenantId,
    rateLimits: {
      signIn: new RateLimiter(clock, 10, 60_000),
      signup: new RateLimiter(clock, 5, 3600_000),
      anonymousPublish: new RateLimiter(
        clock,
        config.anonymous.publishesPerHourPerIp,
        3600_000,
        'anonymous_publish_rate_limited',
      ),
    },
    onClose: [],
  };

  const apiHost = new URL(config.publicUrl).hostname.replace(/^\[|\]$/g, '');
  const isApiRequest = (req: IncomingMessage) => {
    const h = requestHostname(req);
    return h === apiHost || h === 'localhost' || h === '' || isIP(h) !== 0;
  };
  let siteHandler: (req: IncomingMessage, res: ServerResponse) => void = () => {};

  const app = Fastify({
    loggerInstance: log as unknown as FastifyBaseLogger,
    genReqId: () => `req_${Math.random().toString(36).slice(2, 10)}${Date.now().toString(36)}`,
    bodyLimit: config.bodyLimit,
    // Path parameters like variable names (≤128) and version refs exceed find-my-way's default 100.
    routerOptions: { maxParamLength: 1024 },
    // One listener for both faces: API hosts go to Fastify, every other Host to the site edge.
    serverFactory: (handler) =>
      http.createServer((req, res) => {
        if (isApiRequest(req)) handler(req, res);
        else siteHandler(req, res);
      }),
  }) as unknown as FastifyInstance;

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

  for (const area of areas) area(app);
  siteHandler = createSiteHandler(services);

  const bootstrap = await bootstrapOwner(db, config, accounts);
  await app.ready();

  let closed = false;
  return {
    app,
    services,
    bootstrap,
    async listen() {
      await app.listen({ port: config.port, host: config.host });
      const addr = app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : config.port;
      if (config.publicUrlFromPort) {
        config.publicUrl = `http://localhost:${port}`;
        if (!process.env.SPACES_SITE_URL) config.sitePortSuffix = `:${port}`;
      }
      return { port, url: `http://127.0.0.1:${port}` };
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      for (const fn of services.onClose.reverse()) await fn();
      await blobs.close();
      await database.close();
    },
  };
}
