import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { HostsResolver } from '../domain/hosts/resolve.ts';
import { teamTagsHtmlForSpace, teamTagsHtmlIfCached } from '../domain/tags/render.ts';
import type { Services } from '../services.ts';
import { locationValue } from '../site/field.ts';
import { normalisePath } from '../site/path.ts';
import type { RouteRequest } from '../site/rules.ts';
import type { ManifestEntry } from '../site/types.ts';
import { DOOR_COOKIE, DOOR_COOKIE_SECURE, verifySiteToken } from './access.ts';
import { EdgeAccessLog } from './access-log.ts';
import { BlobCache } from './blob-cache.ts';
import { cacheBudget } from './budget.ts';
import { registerCacheMetrics } from './cache-metrics.ts';
import { sendChallengePage, verifyChallengeCookie } from './challenge.ts';
import { ANONYMOUS_TYPES, HTML_TYPE } from './content-types.ts';
import { parseCookies } from './cookies.ts';
import {
  Decider,
  type Effective,
  isServicePath,
  MEMO_MAX_URL,
  type Memo,
  noindexOf,
  robotsHeaders,
  type SiteTarget,
  versionIdOf,
} from './decide.ts';
import { DIRECTORY_TTL_MS, type HostTarget, SiteDirectory } from './directory.ts';
import { answerFailure } from './edge-fail.ts';
import {
  enterGate,
  enterNoSpace,
  fastGate,
  gateVersion,
  privateHeaders,
  privateServe,
  sendUnseen,
} from './gate-entry.ts';
import { requestHostname } from './host.ts';
import { type Hsts, hstsValue } from './hsts.ts';
import { type Injection, makeInjection } from './inject.ts';
import { sendBlockedPage, sendSystemPage } from './pages.ts';
import { admitPlatformRequest, isPlatformRequest } from './platform-requests.ts';
import { createSafeDispatcher, parseProxyAllowList, proxyRequest } from './proxy.ts';
import { RequestContext } from './request-context.ts';
import { FileResponder } from './respond.ts';
import { serveWorker } from './runtime.ts';
import { servicePath } from './service-paths.ts';
import { SiteGate } from './site-gate.ts';
import { type ServableVersion, VersionCache } from './versions.ts';
import { parseTrustedHeaders, VisitorInfo } from './visitor.ts';
import { backendAuthorization } from './visitor-token-header.ts';
import type { WireAnswer, WireRequest } from './wire.ts';

/** How long a host answer is trusted when the change feed delivers other instances' writes. */
const FEED_DIRECTORY_TTL_MS = 60_000;

/**
 * The site edge: every request whose Host is not the API's lands here, on raw node:http (no Fastify
 * on the hot path). Host → space → channel → version (all cached in memory) → routing decision →
 * response. Nothing per request touches the database once caches are warm.
 *
 * The full path (`handle`) makes a {@link RequestContext} per request; the fast lane (`fast`, see
 * `wire.ts`) answers plain GET/HEADs from memory. Both decide with the same {@link Decider}.
 */
export class SiteEdge {
  readonly config: Config;
  readonly clock: Clock;
  readonly directory: SiteDirectory;
  readonly versions: VersionCache;
  private readonly responder: FileResponder;
  private readonly decider: Decider;
  private readonly blobCache: BlobCache;
  private readonly allow: ReturnType<typeof parseProxyAllowList>;
  private agent: ReturnType<typeof createSafeDispatcher> | null = null;
  private readonly visitor: VisitorInfo;
  private readonly tagInjections = new Map<string, Injection>();
  /** The fast lane's answers for remembered redirects, by the memo's header object (one per memo). */
  private readonly redirectAnswers = new WeakMap<Record<string, string>, WireAnswer>();
  /** Site access: grants, credentials and session epochs per space (site-gate.ts). */
  readonly gate: SiteGate;
  /** The access log (null with `SPACES_ACCESS_LOG=off`). */
  private readonly accessLog: EdgeAccessLog | null;
  /** Header refusals already logged, by host and message: one line each, not one per request. */
  private readonly refusedHeaders = new Set<string>();

  constructor(
    readonly services: Services,
    readonly siteSecret: Buffer,
  ) {
    const { config, clock, blobs, log, events } = services;
    this.config = config;
    this.clock = clock;
    const budget = cacheBudget(config.cacheBytes);
    this.directory = new SiteDirectory(
      new HostsResolver(services.store.repos.siteHosts, config.baseDomain),
      clock,
      {
        maxBytes: budget.hosts,
        // With the change feed live, every instance's writes reach this cache as invalidations (a
        // missed notification is caught up by sequence number): the TTL is only a safety net.
        ttlMs: services.shared.changes.active ? FEED_DIRECTORY_TTL_MS : DIRECTORY_TTL_MS,
      },
    );
    this.versions = new VersionCache(services.store.repos.servableVersions, budget.versions);
    this.decider = new Decider(budget.rules);
    this.blobCache = new BlobCache({ maxBytes: budget.blobs });
    const caches = {
      blobs: this.blobCache,
      versions: this.versions,
      hosts: this.directory,
      rules: this.decider,
    };
    registerCacheMetrics(services.metrics, caches);
    this.responder = new FileResponder({
      blobs,
      cache: this.blobCache,
      onError: (err, entry) => log.error({ err, sha256: entry.sha256 }, 'blob read failed'),
    });
    this.allow = parseProxyAllowList(config.proxyAllow);
    this.visitor = new VisitorInfo(config.geoipDb, parseTrustedHeaders(config.trustedProxyHeaders));
    this.gate = new SiteGate(services, siteSecret);
    this.accessLog = services.accessLog
      ? new EdgeAccessLog(
          services.accessLog,
          this.directory,
          services.clientAddresses,
          parseTrustedHeaders(config.trustedProxyHeaders).country ?? null,
        )
      : null;
    events.onSpaceChanged((id) => this.directory.invalidate(id));
    services.onClose.push(async () => {
      await this.agent?.close();
    });
  }

  /** The guarded pool proxy rewrites go through, made on the first one (it loads undici). */
  private get dispatcher(): ReturnType<typeof createSafeDispatcher> {
    this.agent ??= createSafeDispatcher({ allow: this.allow });
    return this.agent;
  }

  /** The cached version this site target serves (null when not in memory): the gate's early answer. */
  cachedVersion(ctx: RequestContext): ServableVersion | null {
    const id = versionIdOf(ctx.target as SiteTarget, ctx.space);
    return id ? (this.versions.peek(id) ?? null) : null;
  }

  protoOf(req: IncomingMessage): 'http' | 'https' {
    return this.services.clientAddresses.scheme(req, this.config.siteScheme);
  }

  /** A small HTML page for a refused request (blocked, expired link, bad address). */
  sendBlocked(ctx: RequestContext, status: number, title: string, detail: string): void {
    sendBlockedPage(ctx.req, ctx.res, status, title, detail);
  }

  /** node:http's handler: never throws, never rejects (failures answer 500 or end the socket). */
  readonly handler = (req: IncomingMessage, res: ServerResponse): void => {
    let out: Promise<void> | void;
    try {
      out = this.handle(req, res);
    } catch (err) {
      this.fail(req, res, err);
      return;
    }
    if (out instanceof Promise) out.catch((err) => this.fail(req, res, err));
  };

  /** Synchronous from memory (no promise); only a cold cache, a service path or a body returns one. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    const hostname = requestHostname(req);
    admitPlatformRequest(req); // this server's own (crons) passes access control; others lose x-service-cron
    if (this.accessLog) this.accessLog.onFinish(req, res, hostname);
    const cached = this.directory.peek(hostname);
    if (cached) return this.serveTarget(new RequestContext(req, res, hostname, cached));
    return this.directory
      .resolve(hostname)
      .then((target) => this.serveTarget(new RequestContext(req, res, hostname, target)));
  }

  serveTarget(ctx: RequestContext): Promise<void> | void {
    const { req, res, hostname, target, url, rawPath } = ctx;
    // No space here: the same work a private space's gate does for a visitor holding nothing.
    if (target.kind === 'none') return enterNoSpace(this, ctx);
    if (target.kind === 'moved') {
      if (!target.open) return this.unseen(ctx);
      res.writeHead(307, {
        location: locationValue(
          `${this.protoOf(req)}://${target.hostname}${this.config.sitePortSuffix}${url}`,
        ),
        'cache-control': 'no-store',
      });
      return void res.end();
    }
    if (target.kind === 'redirect') {
      // A redirect domain: every request to the target host, path and query kept.
      if (target.space.deleted || target.space.disabledReason) return this.unseen(ctx);
      const managed = this.directory.labelOf(target.hostname) !== null;
      res.writeHead(target.status, {
        location: locationValue(
          `${this.protoOf(req)}://${target.hostname}${managed ? this.config.sitePortSuffix : ''}${url}`,
        ),
        'cache-control': 'no-store',
      });
      return void res.end();
    }
    const { space } = target;
    ctx.space = space;
    if (space.disabledReason === 'deleted') return this.unseen(ctx);

    // A team/private space, to a visitor not signed in to it, is exactly an unknown host: no page,
    // service path or disabled notice. The hand-off (a token only the API gives) is the way in.
    if (!space.anonymous && space.access !== 'public' && !ctx.gate) {
      const entry = enterGate(this, ctx);
      if (entry !== 'pass')
        return entry === 'unseen' ? this.unseen(ctx) : entry === 'done' ? undefined : entry;
    }
    if (space.disabledReason)
      return sendSystemPage(req, res, { kind: 'disabled', reasonCode: space.disabledReason });

    ctx.noindex = noindexOf(target, space);
    // Service paths on every site host (`/__/…`, `/__service/…`).
    if (isServicePath(rawPath)) {
      const handled = servicePath(this, ctx);
      if (handled) return handled;
    }

    // Unclaimed anonymous spaces show their notice to all but their publisher (door cookie).
    if (space.anonymous) {
      const now = this.clock.now().getTime();
      const cookies = parseCookies(req.headers.cookie);
      const door = cookies.get(DOOR_COOKIE_SECURE) ?? cookies.get(DOOR_COOKIE);
      if (!verifySiteToken(this.siteSecret, 'door', hostname, door, now)) {
        return sendSystemPage(
          req,
          res,
          { kind: 'unclaimed', claimUrl: null },
          { headers: { 'X-Robots-Tag': 'noindex' } },
        );
      }
    }

    const versionId = versionIdOf(target, space);
    if (!versionId) return this.versionMissing(ctx);
    const version = this.versions.peek(versionId);
    if (version) return this.serveVersion(ctx, version);
    return this.versions
      .get(versionId)
      .then((v) => (v ? this.serveVersion(ctx, v) : this.versionMissing(ctx)));
  }

  private versionMissing(ctx: RequestContext): void {
    if (ctx.gate && !ctx.gate.identified) return void this.unseen(ctx);
    sendSystemPage(
      ctx.req,
      ctx.res,
      { kind: 'not-found', path: ctx.rawPath },
      { headers: { 'X-Robots-Tag': 'noindex' } },
    );
  }

  /** What a visitor who may not know about this hostname gets (see {@link sendUnseen}). */
  unseen(ctx: RequestContext): void {
    sendUnseen(this, ctx);
  }

  serveVersion(ctx: RequestContext, version: ServableVersion): Promise<void> | void {
    const { req, res, hostname, space, noindex, url, method } = ctx;
    if (version.spaceId !== space.id) return this.versionMissing(ctx);
    const eff = this.decider.effective(version, space);
    if (ctx.gate && !ctx.gateDone) {
      const gated = gateVersion(this, ctx, version, eff);
      if (gated !== null) return gated;
    }
    // HSTS, when the site opts in, on HTTPS answers only (never over plain HTTP: RFC 6797 §7.2).
    const hsts = (eff.config as { hsts?: Hsts } | null)?.hsts;
    if (hsts && (req.socket as TLSSocket).encrypted)
      res.setHeader('strict-transport-security', hstsValue(hsts));
    const memoise = this.decider.memoises(eff, method, url);
    if (memoise) {
      const m = this.decider.remembered(eff, noindex, hostname, url);
      if (m) {
        if (m.type === 'redirect') {
          res.writeHead(m.status, m.headers);
          return void res.end();
        }
        return this.serveEntry(ctx, version, eff, m.entry, m.status, m.headers);
      }
    }

    const norm = normalisePath(ctx.rawPath);
    if (!norm.ok) return this.sendBlocked(ctx, 400, 'Bad request', 'This address is not valid.');
    const now = this.clock.now().getTime();
    const cookies = Object.fromEntries(parseCookies(req.headers.cookie));
    const addresses = this.services.clientAddresses;
    const ip = addresses.clientAddress(req);
    const rr: RouteRequest = {
      method,
      path: norm.path,
      query: ctx.query(),
      host: hostname,
      headers: req.headers,
      cookies,
      ip,
      ...(this.visitor.active ? this.visitor.attributes(req, ip, addresses.fromTrustedProxy(req)) : {}),
      challengePassed:
        eff.rules.firewall.length > 0 &&
        (isPlatformRequest(req) || verifyChallengeCookie(req, hostname, this.siteSecret, new Date(now))),
    };
    const { decision: d, answer } = this.decider.decide(rr, eff, version, noindex, url, memoise);
    switch (d.type) {
      case 'block':
        return this.sendBlocked(
          ctx,
          d.status,
          'Access blocked',
          'The owner of this site blocks this request.',
        );
      case 'challenge':
        return sendChallengePage(req, res, {
          host: hostname,
          secret: this.siteSecret,
          now: new Date(now),
          returnTo: url,
        });
      case 'redirect': {
        const memo = answer as Memo & { type: 'redirect' };
        res.writeHead(memo.status, memo.headers);
        return void res.end();
      }
      case 'loop':
        return sendSystemPage(req, res, { kind: 'redirect-loop' }, { headers: robotsHeaders(noindex) });
      case 'proxy': {
        if (space.anonymous) return sendSystemPage(req, res, { kind: 'proxy-disabled', reason: 'anonymous' });
        return proxyRequest(req, res, {
          target: d.url,
          dispatcher: this.dispatcher,
          allow: this.allow,
          clientIp: rr.ip,
          proto: this.protoOf(req),
          host: hostname,
          cache: d.cacheShared ? 'shared' : 'private',
          serviceAuthorization: backendAuthorization(this.services, ctx),
        }).then((out) => {
          if (out.error && out.error !== 'upstream')
            this.services.log.warn({ target: d.url, error: out.error, detail: out.detail }, 'proxy refused');
        });
      }
      case 'listing':
        return sendSystemPage(
          req,
          res,
          {
            kind: 'listing',
            path: norm.path,
            entries: d.entries.map((e) => ({
              name: e.name,
              directory: e.kind === 'dir',
              size: e.entry?.size,
            })),
          },
          { headers: robotsHeaders(noindex) },
        );
      case 'worker':
        return serveWorker(this, ctx, version);
      case 'notFound':
      case 'file': {
        if (answer?.type !== 'file')
          return sendSystemPage(
            req,
            res,
            { kind: 'not-found', path: norm.path },
            { headers: robotsHeaders(noindex) },
          );
        return this.serveEntry(ctx, version, eff, answer.entry, answer.status, answer.headers);
      }
    }
  }

  private serveEntry(
    ctx: RequestContext,
    version: ServableVersion,
    eff: Effective,
    entry: ManifestEntry,
    status: number,
    headers: Record<string, string | string[]>,
  ): Promise<void> | void {
    const { space } = ctx;
    if (ctx.privateAnswer) headers = privateHeaders(headers);
    if (space.anonymous && !ANONYMOUS_TYPES.test(entry.contentType)) {
      return this.sendBlocked(
        ctx,
        403,
        'Not served before claim',
        'This kind of file is stored but only served once the space is claimed into an account.',
      );
    }
    if (space.teamId && HTML_TYPE.test(entry.contentType)) {
      return this.serveWithTeamTags(ctx, version, eff, entry, status, headers);
    }
    // The header object is reused for every request with this answer, so the responder's
    // per-object memo of the merged header list hits: no merging, no allocation per request.
    return this.responder.serve(ctx.req, ctx.res, {
      entry,
      lastModified: version.createdAt,
      status,
      headers,
      injection: eff.injection,
    });
  }

  /** HTML of a team space: the team's released tags (tag manager) join the snippets at the end of <body>. */
  private async serveWithTeamTags(
    ctx: RequestContext,
    version: ServableVersion,
    eff: Effective,
    entry: ManifestEntry,
    status: number,
    headers: Record<string, string | string[]>,
  ): Promise<void> {
    let injection = eff.injection;
    const tags = await teamTagsHtmlForSpace(this.services, {
      teamId: ctx.space.teamId,
      config: eff.config as never,
    });
    if (tags) {
      const k = `${injection.key}|${tags}`;
      let combined = this.tagInjections.get(k);
      if (!combined) {
        combined = makeInjection({
          head: injection.head,
          bodyStart: injection.bodyStart,
          bodyEnd: injection.bodyEnd + tags,
        });
        if (this.tagInjections.size > 512) this.tagInjections.clear();
        this.tagInjections.set(k, combined);
      }
      injection = combined;
    }
    await this.responder.serve(ctx.req, ctx.res, {
      entry,
      lastModified: version.createdAt,
      status,
      headers,
      injection,
    });
  }

  /**
   * The fast lane's question (see `wire.ts`): the answer to a plain GET/HEAD when everything it
   * depends on is already in memory — a warm host, a public space, a cached version, a remembered
   * routing answer and (for GET) a cached body. Exactly the answer {@link handle} would give; `null`
   * for anything else, and node:http then serves the request through `handle`. A host whose cache
   * entry has just expired is reloaded here (one shared query) rather than leaving the lane.
   */
  readonly fast = (
    req: WireRequest,
    hostname: string,
    secure = false,
  ): WireAnswer | null | Promise<WireAnswer | null> => {
    const out = this.fastAnswer(req, hostname, secure);
    return this.accessLog && out !== null ? this.accessLog.fastAnswered(req, hostname, out) : out;
  };

  private fastAnswer(
    req: WireRequest,
    hostname: string,
    secure: boolean,
  ): WireAnswer | null | Promise<WireAnswer | null> {
    const cached = this.directory.peek(hostname);
    if (cached) return this.fastTarget(req, hostname, cached, secure);
    return this.directory.resolve(hostname).then((target) => this.fastTarget(req, hostname, target, secure));
  }

  private fastTarget(
    req: WireRequest,
    hostname: string,
    target: HostTarget,
    secure: boolean,
  ): WireAnswer | null | Promise<WireAnswer | null> {
    if (target.kind !== 'site') return null;
    const { space } = target;
    if (space.disabledReason || space.anonymous) return null;
    // Service paths (`/__…`) always take the full path.
    if (isServicePath(req.url)) return null;
    const versionId = versionIdOf(target, space);
    if (!versionId) return null;
    const version = this.versions.peek(versionId);
    if (version) return this.fastVersion(req, hostname, target, version, secure);
    return this.versions
      .get(versionId)
      .then((v) => (v ? this.fastVersion(req, hostname, target, v, secure) : null));
  }

  private fastVersion(
    req: WireRequest,
    hostname: string,
    target: SiteTarget,
    version: ServableVersion,
    secure: boolean,
  ): WireAnswer | null | Promise<WireAnswer | null> {
    const url = req.url;
    const { space } = target;
    if (version.spaceId !== space.id) return null;
    const eff = this.decider.effective(version, space);
    // A space that is not public: the lane answers a visitor the matcher lets in from memory alone.
    const priv = space.access === 'public' ? false : fastGate(this, req, hostname, target, version, eff);
    if (priv === null) return null;
    // HSTS answers (HTTPS, and the site opted in) take the full path, which adds the header.
    if (secure && (eff.config as { hsts?: unknown } | null)?.hsts) return null;
    if (!eff.memoisable || url.length > MEMO_MAX_URL) return null;
    const noindex = noindexOf(target, space);
    let m = this.decider.remembered(eff, noindex, hostname, url);
    if (!m) {
      // Memoisable rules decide from the host, path and query alone: route here, as `serveVersion` would.
      const q = url.indexOf('?');
      const norm = normalisePath(q === -1 ? url : url.slice(0, q));
      if (!norm.ok) return null;
      const rr: RouteRequest = {
        method: req.method,
        path: norm.path,
        query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
        host: hostname,
        headers: req.headers,
        cookies: {},
        ip: '',
        challengePassed: false,
      };
      const { answer } = this.decider.decide(rr, eff, version, noindex, url, true);
      if (!answer) return null;
      m = answer;
    }
    if (m.type === 'redirect') {
      let answer = this.redirectAnswers.get(m.headers);
      if (!answer) {
        answer = { status: m.status, headers: Object.entries(m.headers).flat(), body: null };
        this.redirectAnswers.set(m.headers, answer);
      }
      return answer;
    }
    if (space.teamId && HTML_TYPE.test(m.entry.contentType)) {
      // A team's released tags join the page: the lane serves it only when there are none to add.
      let settings = eff.tagSettings;
      if (settings?.teamId !== space.teamId) {
        settings = { teamId: space.teamId, config: eff.config as never };
        eff.tagSettings = settings;
      }
      const tags = teamTagsHtmlIfCached(this.services, settings);
      if (tags === undefined) {
        const file = m;
        return teamTagsHtmlForSpace(this.services, settings).then((html) =>
          html ? null : this.fastFile(req, version, eff, file, priv),
        );
      }
      if (tags) return null;
    }
    return this.fastFile(req, version, eff, m, priv);
  }

  private fastFile(
    req: WireRequest,
    version: ServableVersion,
    eff: Effective,
    m: Memo & { type: 'file' },
    priv: boolean,
  ): WireAnswer | null | Promise<WireAnswer | null> {
    // The memo lives under this version's effective rule set, so these options stay right for it.
    m.serve ??= {
      entry: m.entry,
      lastModified: version.createdAt,
      status: m.status,
      headers: m.headers,
      injection: eff.injection,
    };
    return this.responder.answer(req.method, req.headers, priv ? privateServe(m.serve) : m.serve);
  }

  private fail(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    answerFailure(this.services.log, this.refusedHeaders, req, res, err);
  }
}

/** The site edge as node:http's handler, with the fast lane's question as `.fast`. */
export function createSiteHandler(services: Services, siteSecret: Buffer) {
  const edge = new SiteEdge(services, siteSecret);
  return Object.assign(edge.handler, { fast: edge.fast });
}
