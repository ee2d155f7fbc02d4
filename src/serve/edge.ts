import type { IncomingMessage, ServerResponse } from 'node:http';
import { HostsResolver } from '../domain/hosts/resolve.ts';
import { teamTagsHtmlForSpace, teamTagsHtmlIfCached } from '../domain/tags/render.ts';
import type { Services } from '../services.ts';
import { applyOverlay, compileSite, recompileWithConfig } from '../site/compile.ts';
import { locationValue } from '../site/field.ts';
import { normalisePath } from '../site/path.ts';
import type { CompiledRules } from '../site/rule-set.ts';
import { type Decision, type RouteRequest, route } from '../site/rules.ts';
import type { ManifestEntry } from '../site/types.ts';
import {
  ACCESS_COOKIE,
  ACCESS_TTL_MS,
  DOOR_COOKIE,
  DOOR_TTL_MS,
  signSiteToken,
  verifySiteToken,
} from './access.ts';
import { BlobCache } from './blob-cache.ts';
import {
  CHALLENGE_PATH,
  handleChallengeVerify,
  sendChallengePage,
  verifyChallengeCookie,
} from './challenge.ts';
import { parseCookies, serializeCookie } from './cookies.ts';
import { type HostTarget, SiteDirectory, type SiteSpace } from './directory.ts';
import { requestHostname } from './host.ts';
import { buildInjection, type Injection, makeInjection } from './inject.ts';
import { renderDocument, SYSTEM_PAGE_HEADERS, sendSystemPage } from './pages.ts';
import { createSafeDispatcher, parseProxyAllowList, proxyRequest } from './proxy.ts';
import { FileResponder, type ServeFileOptions } from './respond.ts';
import { type ServableVersion, VersionCache } from './versions.ts';
import { parseTrustedHeaders, VisitorInfo } from './visitor.ts';
import type { WireAnswer, WireRequest } from './wire.ts';

/** Web content an unclaimed anonymous space may serve; anything else waits for the claim. */
const ANONYMOUS_TYPES =
  /^(text\/|image\/|font\/|application\/(json|xml|javascript|ecmascript|gzip|manifest\+json|ld\+json|rss\+xml|atom\+xml|wasm)|[a-z]+\/[a-z0-9.+-]*\+xml)/;

/** Where the API's access hand-off lands on a site host. */
const HANDOFF_PATH = '/__service/access';

const COLLAB_CSS = '/* Spaces collaboration UI hooks: style [data-spaces-collab] elements here. */\n';

interface Effective {
  /** `<versionId>|<overlay key>`: what the rules and injection were built from. */
  key: string;
  rules: CompiledRules;
  injection: Injection;
  /** The effective settings (version file + overlay), for team-tag rendering. */
  config: Record<string, unknown> | null;
  /** The routing decision depends only on host, method class and URL: see {@link memoisable}. */
  memoisable: boolean;
  /** Team-tag render settings last used with these rules (kept: the lane asks on every HTML page). */
  tagSettings?: { teamId: string; config: never };
}

/**
 * Whether every routing decision under these rules is a pure function of (host, URL, GET/HEAD): no
 * firewall (client IP, headers, challenge cookie), no cache-bypass rules (traffic attributes) and no
 * `_redirects` conditions (country, language, cookie, agent). Query-dependent rules are fine: the
 * query is part of the memo key.
 */
function memoisable(rules: CompiledRules): boolean {
  return (
    rules.firewall.length === 0 &&
    rules.cacheBypass.length === 0 &&
    rules.routes.every((r) => r.conditions === null || r.conditions === undefined)
  );
}

/** A routing answer remembered for a (rules, robots, host, URL): a file to serve or a redirect. */
type Memo =
  | {
      type: 'file';
      entry: ManifestEntry;
      status: number;
      headers: Record<string, string | string[]>;
      /** The responder's options for this answer, built on first use (a memo lives under one version). */
      serve?: ServeFileOptions;
    }
  | { type: 'redirect'; status: number; headers: Record<string, string> };

/** Longest URL whose routing answer is remembered, and how many answers are kept. */
const MEMO_MAX_URL = 1024;
const MEMO_MAX_ENTRIES = 8192;

/**
 * The site edge: every request whose Host is not the API's lands here, on raw node:http (no Fastify
 * on the hot path). Host → space → channel → version (all cached in memory) → routing decision →
 * response. Nothing per request touches the database once caches are warm.
 */
export function createSiteHandler(services: Services, siteSecret: Buffer) {
  const { config, clock, blobs, log, events } = services;
  const directory = new SiteDirectory(
    new HostsResolver(services.store.repos.siteHosts, config.baseDomain),
    clock,
  );
  const versions = new VersionCache(services.store.repos.servableVersions);
  const responder = new FileResponder({
    blobs,
    cache: new BlobCache({ maxBytes: 128 * 1024 * 1024 }),
    onError: (err, entry) => log.error({ err, sha256: entry.sha256 }, 'blob read failed'),
  });
  const allow = parseProxyAllowList(config.proxyAllow);
  const dispatcher = createSafeDispatcher({ allow });
  const visitor = new VisitorInfo(config.geoipDb, parseTrustedHeaders(config.trustedProxyHeaders));
  const effectiveCache = new Map<string, Effective>();
  const tagInjections = new Map<string, Injection>();
  /**
   * Routing answers for memoisable rule sets, by effective rule set, robots flag, host and URL.
   * Versions are immutable and the effective set changes with the overlay, so entries never go stale;
   * the memo is bounded by count (and URL length) and simply cleared when full.
   */
  const routeMemo = new RouteMemo(MEMO_MAX_ENTRIES);
  /** The effective rule set last used per version object, for the overlay key it was made with. */
  const lastEffective = new WeakMap<ServableVersion, { overlayKey: string; eff: Effective }>();
  events.onSpaceChanged((id) => directory.invalidate(id));
  services.onClose.push(async () => {
    await dispatcher.close();
  });

  const addresses = services.clientAddresses;
  const protoOf = (req: IncomingMessage) => addresses.scheme(req, config.siteScheme);

  const effective = (v: ServableVersion, space: SiteSpace): Effective => {
    const overlayKey = space.overlay ? space.overlayKey : '-';
    // The hot path: the same version object with the same overlay as last time (no key string).
    const last = lastEffective.get(v);
    if (last !== undefined && last.overlayKey === overlayKey) return last.eff;
    const key = `${v.id}|${overlayKey}`;
    let e = effectiveCache.get(key);
    if (e) {
      lastEffective.set(v, { overlayKey, eff: e });
      return e;
    }
    const config = applyOverlay(v.config, space.overlay) as Record<string, unknown> | null;
    let rules = v.rules as CompiledRules | null;
    if (!rules) rules = compileSite({ files: v.entries, config }).rules;
    else if (space.overlay) rules = recompileWithConfig(rules, { files: v.entries, config }).rules;
    e = { key, rules, injection: buildInjection(config as never), config, memoisable: memoisable(rules) };
    if (effectiveCache.size > 1024) {
      effectiveCache.clear();
      routeMemo.clear();
    }
    effectiveCache.set(key, e);
    lastEffective.set(v, { overlayKey, eff: e });
    return e;
  };

  const sendBlocked = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    title: string,
    detail: string,
  ) => {
    const body = renderDocument({ status, title, content: `<p>${detail}</p>` });
    res.writeHead(status, {
      ...SYSTEM_PAGE_HEADERS,
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  /**
   * The hot path is synchronous: host, version and routing answer all come from memory (no promise,
   * no microtask); only a cold cache, a service path or a streamed body returns a promise.
   */
  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    const hostname = requestHostname(req);
    const cached = directory.peek(hostname);
    if (cached) return serveTarget(req, res, hostname, cached);
    return directory.resolve(hostname).then((target) => serveTarget(req, res, hostname, target));
  }

  function serveTarget(
    req: IncomingMessage,
    res: ServerResponse,
    hostname: string,
    target: HostTarget,
  ): Promise<void> | void {
    const url = req.url ?? '/';
    if (target.kind === 'none') return unseen(req, res, hostname, url);
    if (target.kind === 'moved') {
      if (!target.open) return unseen(req, res, hostname, url);
      res.writeHead(307, {
        location: locationValue(`${protoOf(req)}://${target.hostname}${config.sitePortSuffix}${url}`),
        'cache-control': 'no-store',
      });
      return void res.end();
    }
    const { space } = target;
    if (space.disabledReason === 'deleted') return unseen(req, res, hostname, url);
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);

    // A team/private space, to a visitor not signed in to it, is exactly an unknown host: no page,
    // service path or disabled notice of its own. The hand-off, which needs a token only the API
    // gives to people it let in, is the one way in.
    if (!space.anonymous && space.access !== 'public') {
      const now = clock.now().getTime();
      const cookies = parseCookies(req.headers.cookie);
      const access = verifySiteToken(siteSecret, 'access', hostname, cookies.get(ACCESS_COOKIE), now);
      if (!access || access.spaceId !== space.id) {
        if (rawPath === HANDOFF_PATH && acceptHandoff(req, res, hostname, space, url, q)) return;
        return unseen(req, res, hostname, url);
      }
    }
    if (space.disabledReason)
      return sendSystemPage(req, res, { kind: 'disabled', reasonCode: space.disabledReason });

    const noindex = noindexOf(target, space);
    // Service paths on every site host (`/__/…`, `/__service/…`).
    if (rawPath.charCodeAt(1) === 0x5f && rawPath.charCodeAt(2) === 0x5f) {
      const handled = servicePath(req, res, hostname, space, noindex, url, q, rawPath);
      if (handled) return handled;
    }

    // Unclaimed anonymous spaces show their notice to all but their publisher (door cookie).
    if (space.anonymous) {
      const now = clock.now().getTime();
      const cookies = parseCookies(req.headers.cookie);
      if (!verifySiteToken(siteSecret, 'door', hostname, cookies.get(DOOR_COOKIE), now)) {
        return sendSystemPage(
          req,
          res,
          { kind: 'unclaimed', claimUrl: null },
          { headers: { 'X-Robots-Tag': 'noindex' } },
        );
      }
    }

    const versionId = versionIdOf(target, space);
    if (!versionId) return versionMissing(req, res, rawPath);
    const version = versions.peek(versionId);
    if (version) return serveVersion(req, res, hostname, space, noindex, url, q, rawPath, version);
    return versions
      .get(versionId)
      .then((v) =>
        v
          ? serveVersion(req, res, hostname, space, noindex, url, q, rawPath, v)
          : versionMissing(req, res, rawPath),
      );
  }

  const versionMissing = (req: IncomingMessage, res: ServerResponse, rawPath: string) =>
    sendSystemPage(
      req,
      res,
      { kind: 'not-found', path: rawPath },
      { headers: { 'X-Robots-Tag': 'noindex' } },
    );

  /**
   * What a visitor who may not know about this hostname gets. Under the base domain any name could be
   * a team/private space, so unknown, deleted and not-yet-entered spaces all send the visitor to
   * sign in (the API answers "no site" after sign-in to anyone the space is not for); other
   * hostnames can never be a space and get the "no site here" page.
   */
  function unseen(req: IncomingMessage, res: ServerResponse, hostname: string, url: string): void {
    if (directory.labelOf(hostname) === null) {
      sendSystemPage(req, res, { kind: 'unknown-host', host: hostname });
      return;
    }
    const acquire = new URL(`${config.publicUrl}/v1/access/acquire`);
    acquire.searchParams.set('host', hostname);
    acquire.searchParams.set('return', url);
    res.writeHead(302, {
      location: acquire.toString(),
      'cache-control': 'no-store',
      'x-robots-tag': 'noindex',
    });
    res.end();
  }

  /** `/__service/access?token=…`: turns a valid hand-off into the site's cookie; false when invalid. */
  function acceptHandoff(
    req: IncomingMessage,
    res: ServerResponse,
    hostname: string,
    space: SiteSpace,
    url: string,
    q: number,
  ): boolean {
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const at = clock.now().getTime();
    const handoff = verifySiteToken(siteSecret, 'handoff', hostname, query.get('token') ?? undefined, at);
    if (!handoff || handoff.spaceId !== space.id) return false;
    const token = signSiteToken(
      siteSecret,
      'access',
      hostname,
      space.id,
      handoff.subject,
      at + ACCESS_TTL_MS,
    );
    const back = query.get('return') ?? '/';
    res.writeHead(303, {
      // The return path is the visitor's query: decoded, so it may hold any character at all.
      location:
        back.startsWith('/') && !back.startsWith('//') && !back.includes('\\') ? locationValue(back) : '/',
      'set-cookie': serializeCookie(ACCESS_COOKIE, token, {
        path: '/',
        httpOnly: true,
        sameSite: 'Lax',
        secure: protoOf(req) === 'https',
        maxAge: ACCESS_TTL_MS / 1000,
      }),
      'cache-control': 'no-store',
    });
    res.end();
    return true;
  }

  /** `/__/<key>`, the challenge, the access hand-off and the collab stylesheet; null when none matched. */
  function servicePath(
    req: IncomingMessage,
    res: ServerResponse,
    hostname: string,
    space: SiteSpace,
    noindex: boolean,
    url: string,
    q: number,
    rawPath: string,
  ): Promise<void> | null {
    const now = () => clock.now().getTime();
    const secure = () => protoOf(req) === 'https';
    if (rawPath.startsWith('/__/')) {
      return (async () => {
        const key = decodedOrNull(rawPath.slice(4));
        if (key !== null && space.anonymous && (await services.anonymous.keyOpensSpace(key, space.id))) {
          const token = signSiteToken(siteSecret, 'door', hostname, space.id, '-', now() + DOOR_TTL_MS);
          res.writeHead(302, {
            location: '/',
            'set-cookie': serializeCookie(DOOR_COOKIE, token, {
              path: '/',
              httpOnly: true,
              sameSite: 'Lax',
              secure: secure(),
              maxAge: DOOR_TTL_MS / 1000,
            }),
            'cache-control': 'no-store',
            'referrer-policy': 'no-referrer',
          });
          return void res.end();
        }
        return sendSystemPage(
          req,
          res,
          { kind: 'not-found', path: '/__/' },
          { headers: robotsHeaders(noindex) },
        );
      })();
    }
    if (rawPath === CHALLENGE_PATH) {
      return handleChallengeVerify(req, res, {
        host: hostname,
        secret: siteSecret,
        now: new Date(now()),
        secure: secure(),
      }).then(() => undefined);
    }
    if (rawPath === HANDOFF_PATH) {
      if (!acceptHandoff(req, res, hostname, space, url, q))
        sendBlocked(req, res, 403, 'Access link expired', 'Open the site again to sign in.');
      return Promise.resolve();
    }
    if (rawPath === '/__service/collab.css') {
      res.writeHead(200, {
        'content-type': 'text/css; charset=utf-8',
        'cache-control': 'public, max-age=300',
      });
      res.end(req.method === 'HEAD' ? undefined : COLLAB_CSS);
      return Promise.resolve();
    }
    return null;
  }

  function serveVersion(
    req: IncomingMessage,
    res: ServerResponse,
    hostname: string,
    space: SiteSpace,
    noindex: boolean,
    url: string,
    q: number,
    rawPath: string,
    version: ServableVersion,
  ): Promise<void> | void {
    if (version.spaceId !== space.id) return versionMissing(req, res, rawPath);
    const eff = effective(version, space);
    const method = req.method ?? 'GET';
    const memoise = eff.memoisable && (method === 'GET' || method === 'HEAD') && url.length <= MEMO_MAX_URL;
    if (memoise) {
      const m = routeMemo.get(eff, noindex, hostname, url);
      if (m) {
        if (m.type === 'redirect') {
          res.writeHead(m.status, m.headers);
          return void res.end();
        }
        return serveEntry(req, res, space, version, eff, m.entry, m.status, m.headers);
      }
    }

    const norm = normalisePath(rawPath);
    if (!norm.ok) return sendBlocked(req, res, 400, 'Bad request', 'This address is not valid.');
    const now = clock.now().getTime();
    const cookies = Object.fromEntries(parseCookies(req.headers.cookie));
    const ip = addresses.clientAddress(req);
    const rr: RouteRequest = {
      method,
      path: norm.path,
      query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
      host: hostname,
      headers: req.headers,
      cookies,
      ip,
      ...(visitor.active ? visitor.attributes(req, ip, addresses.fromTrustedProxy(req)) : {}),
      challengePassed:
        eff.rules.firewall.length > 0 && verifyChallengeCookie(req, hostname, siteSecret, new Date(now)),
    };
    const d: Decision = route(rr, eff.rules, version.files);
    switch (d.type) {
      case 'block':
        return sendBlocked(
          req,
          res,
          d.status,
          'Access blocked',
          'The owner of this site blocks this request.',
        );
      case 'challenge':
        return sendChallengePage(req, res, {
          host: hostname,
          secret: siteSecret,
          now: new Date(now),
          returnTo: url,
        });
      case 'redirect': {
        const memo = memoOf(d, noindex) as Memo & { type: 'redirect' };
        if (memoise) routeMemo.set(eff, noindex, hostname, url, memo);
        res.writeHead(memo.status, memo.headers);
        return void res.end();
      }
      case 'loop':
        return sendSystemPage(req, res, { kind: 'redirect-loop' }, { headers: robotsHeaders(noindex) });
      case 'proxy': {
        if (space.anonymous) return sendSystemPage(req, res, { kind: 'proxy-disabled', reason: 'anonymous' });
        return proxyRequest(req, res, {
          target: d.url,
          dispatcher,
          allow,
          clientIp: rr.ip,
          proto: protoOf(req),
          host: hostname,
          cache: d.cacheShared ? 'shared' : 'private',
        }).then((out) => {
          if (out.error && out.error !== 'upstream')
            log.warn({ target: d.url, error: out.error, detail: out.detail }, 'proxy refused');
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
      case 'notFound':
      case 'file': {
        const memo = memoOf(d, noindex);
        if (memo?.type !== 'file')
          return sendSystemPage(
            req,
            res,
            { kind: 'not-found', path: norm.path },
            { headers: robotsHeaders(noindex) },
          );
        if (memoise) routeMemo.set(eff, noindex, hostname, url, memo);
        return serveEntry(req, res, space, version, eff, memo.entry, memo.status, memo.headers);
      }
    }
  }

  function serveEntry(
    req: IncomingMessage,
    res: ServerResponse,
    space: SiteSpace,
    version: ServableVersion,
    eff: Effective,
    entry: ManifestEntry,
    status: number,
    headers: Record<string, string | string[]>,
  ): Promise<void> | void {
    if (space.anonymous && !ANONYMOUS_TYPES.test(entry.contentType)) {
      return sendBlocked(
        req,
        res,
        403,
        'Not served before claim',
        'This kind of file is stored but only served once the space is claimed into an account.',
      );
    }
    if (space.teamId && HTML_TYPE.test(entry.contentType)) {
      return serveWithTeamTags(req, res, space, version, eff, entry, status, headers);
    }
    // The header object is reused for every request with this answer, so the responder's
    // per-object memo of the merged header list hits: no merging, no allocation per request.
    return responder.serve(req, res, {
      entry,
      lastModified: version.createdAt,
      status,
      headers,
      injection: eff.injection,
    });
  }

  /** HTML of a team space: the team's released tags (tag manager) join the snippets at the end of <body>. */
  async function serveWithTeamTags(
    req: IncomingMessage,
    res: ServerResponse,
    space: SiteSpace,
    version: ServableVersion,
    eff: Effective,
    entry: ManifestEntry,
    status: number,
    headers: Record<string, string | string[]>,
  ): Promise<void> {
    let injection = eff.injection;
    const tags = await teamTagsHtmlForSpace(services, { teamId: space.teamId, config: eff.config as never });
    if (tags) {
      const k = `${injection.key}|${tags}`;
      let combined = tagInjections.get(k);
      if (!combined) {
        combined = makeInjection({
          head: injection.head,
          bodyStart: injection.bodyStart,
          bodyEnd: injection.bodyEnd + tags,
        });
        if (tagInjections.size > 512) tagInjections.clear();
        tagInjections.set(k, combined);
      }
      injection = combined;
    }
    await responder.serve(req, res, { entry, lastModified: version.createdAt, status, headers, injection });
  }

  /** The fast lane's answers for remembered redirects, by the memo's header object (one per memo). */
  const redirectAnswers = new WeakMap<Record<string, string>, WireAnswer>();

  /**
   * The fast lane's question (see `wire.ts`): the answer to a plain GET/HEAD when everything it
   * depends on is already in memory — a warm host, a public space, a cached version, a remembered
   * routing answer and (for GET) a cached body. Exactly the answer {@link handle} would give; `null`
   * for anything else, and node:http then serves the request through `handle`. A host whose cache
   * entry has just expired is reloaded here (one shared query) rather than leaving the lane.
   */
  function fast(req: WireRequest, hostname: string): WireAnswer | null | Promise<WireAnswer | null> {
    const cached = directory.peek(hostname);
    if (cached) return fastTarget(req, hostname, cached);
    return directory.resolve(hostname).then((target) => fastTarget(req, hostname, target));
  }

  function fastTarget(
    req: WireRequest,
    hostname: string,
    target: HostTarget,
  ): WireAnswer | null | Promise<WireAnswer | null> {
    if (target.kind !== 'site') return null;
    const { space } = target;
    if (space.disabledReason || space.anonymous || space.access !== 'public') return null;
    const url = req.url;
    // Service paths (`/__…`) always take the full path.
    if (url.charCodeAt(1) === 0x5f && url.charCodeAt(2) === 0x5f) return null;
    const versionId = versionIdOf(target, space);
    if (!versionId) return null;
    const version = versions.peek(versionId);
    if (version) return fastVersion(req, hostname, target, space, version);
    return versions.get(versionId).then((v) => (v ? fastVersion(req, hostname, target, space, v) : null));
  }

  function fastVersion(
    req: WireRequest,
    hostname: string,
    target: HostTarget & { kind: 'site' },
    space: SiteSpace,
    version: ServableVersion,
  ): WireAnswer | null | Promise<WireAnswer | null> {
    const url = req.url;
    if (version.spaceId !== space.id) return null;
    const eff = effective(version, space);
    if (!eff.memoisable || url.length > MEMO_MAX_URL) return null;
    const noindex = noindexOf(target, space);
    let m = routeMemo.get(eff, noindex, hostname, url);
    if (!m) {
      // Memoisable rules decide from the host, path and query alone: route here, as `serveVersion` would.
      const q = url.indexOf('?');
      const norm = normalisePath(q === -1 ? url : url.slice(0, q));
      if (!norm.ok) return null;
      const d = route(
        {
          method: req.method,
          path: norm.path,
          query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
          host: hostname,
          headers: req.headers,
          cookies: {},
          ip: '',
          challengePassed: false,
        },
        eff.rules,
        version.files,
      );
      const memo = memoOf(d, noindex);
      if (!memo) return null;
      routeMemo.set(eff, noindex, hostname, url, memo);
      m = memo;
    }
    if (m.type === 'redirect') {
      let answer = redirectAnswers.get(m.headers);
      if (!answer) {
        answer = { status: m.status, headers: Object.entries(m.headers).flat(), body: null };
        redirectAnswers.set(m.headers, answer);
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
      const tags = teamTagsHtmlIfCached(services, settings);
      if (tags === undefined) {
        const file = m;
        return teamTagsHtmlForSpace(services, settings).then((html) =>
          html ? null : fastFile(req, version, eff, file),
        );
      }
      if (tags) return null;
    }
    return fastFile(req, version, eff, m);
  }

  function fastFile(
    req: WireRequest,
    version: ServableVersion,
    eff: Effective,
    m: Memo & { type: 'file' },
  ): WireAnswer | null | Promise<WireAnswer | null> {
    // The memo lives under this version's effective rule set, so these options stay right for it.
    m.serve ??= {
      entry: m.entry,
      lastModified: version.createdAt,
      status: m.status,
      headers: m.headers,
      injection: eff.injection,
    };
    return responder.answer(req.method, req.headers, m.serve);
  }

  /** Header refusals already logged, by host and message: one line each, not one per request. */
  const refusedHeaders = new Set<string>();
  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') {
      // node:http refused to write a header outside the field grammar (see field.ts): it stays unwritten
      // and the visitor gets a 500, as from the fast lane, which declines such an answer.
      const key = `${req.headers.host}|${(err as Error).message}`;
      if (!refusedHeaders.has(key)) {
        if (refusedHeaders.size >= 1024) refusedHeaders.clear();
        refusedHeaders.add(key);
        log.error({ err, host: req.headers.host, url: req.url }, 'response header refused: not valid HTTP');
      }
    } else log.error({ err, host: req.headers.host, url: req.url }, 'site request failed');
    if (!res.headersSent) sendSystemPage(req, res, { kind: 'error' });
    else res.destroy();
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    let out: Promise<void> | void;
    try {
      out = handle(req, res);
    } catch (err) {
      fail(req, res, err);
      return;
    }
    if (out instanceof Promise) out.catch((err) => fail(req, res, err));
  };
  return Object.assign(handler, { fast });
}

/** HTML, which a team space's released tags join (the edge then serves it with injection). */
const HTML_TYPE = /^text\/html|^application\/xhtml\+xml/;

/** Preview and version hostnames, and spaces that ask for it, are not to be indexed. */
function noindexOf(target: HostTarget & { kind: 'site' }, space: SiteSpace): boolean {
  return target.versionId !== null || target.channel !== 'live' || space.noindex;
}

/** The version a site hostname serves: the pinned one, or its channel's. */
function versionIdOf(target: HostTarget & { kind: 'site' }, space: SiteSpace): string | null {
  return target.versionId ?? space.channels[target.channel] ?? null;
}

/**
 * Remembered routing answers: effective rule set → robots flag → hostname → URL → answer. Nested maps
 * keyed by the strings the request already has, so a lookup builds no key. Bounded by count: cleared
 * when full.
 */
class RouteMemo {
  private byRules = new WeakMap<
    Effective,
    [Map<string, Map<string, Memo>>, Map<string, Map<string, Memo>>]
  >();
  private count = 0;

  constructor(private readonly max: number) {}

  get(eff: Effective, noindex: boolean, hostname: string, url: string): Memo | undefined {
    return this.byRules.get(eff)?.[noindex ? 1 : 0].get(hostname)?.get(url);
  }

  set(eff: Effective, noindex: boolean, hostname: string, url: string, memo: Memo): void {
    if (this.count >= this.max) this.clear();
    let byRobots = this.byRules.get(eff);
    if (!byRobots) {
      byRobots = [new Map(), new Map()];
      this.byRules.set(eff, byRobots);
    }
    const hosts = byRobots[noindex ? 1 : 0];
    let urls = hosts.get(hostname);
    if (!urls) {
      urls = new Map();
      hosts.set(hostname, urls);
    }
    if (!urls.has(url)) this.count++;
    urls.set(url, memo);
  }

  clear(): void {
    this.byRules = new WeakMap();
    this.count = 0;
  }
}

/**
 * The rememberable answer of a routing decision: a redirect, or a file (a custom 404 page included)
 * with its response headers. `null` for everything else (blocks, challenges, proxies, listings,
 * system 404 pages), which is answered per request.
 */
function memoOf(d: Decision, noindex: boolean): Memo | null {
  if (d.type === 'redirect') {
    return {
      type: 'redirect',
      status: d.status,
      headers: {
        // Rules build ASCII locations; this holds for rules stored before that and for any capture.
        location: locationValue(d.location),
        'cache-control': d.noStore ? 'no-store' : 'no-cache',
        ...robotsHeaders(noindex),
      },
    };
  }
  if ((d.type === 'file' || d.type === 'notFound') && d.entry) {
    const headers: Record<string, string | string[]> = { ...d.headers, ...robotsHeaders(noindex) };
    for (const name of d.removeHeaders) delete headers[name];
    if (d.noStore) headers['Cache-Control'] = 'no-store';
    return { type: 'file', entry: d.entry, status: d.status, headers };
  }
  return null;
}

/** `X-Robots-Tag: noindex` for preview/version hostnames and noindex spaces (a fresh object each time). */
function robotsHeaders(noindex: boolean): Record<string, string> {
  return noindex ? { 'X-Robots-Tag': 'noindex' } : {};
}

/** A malformed escape (`%ZZ`) is no key at all: the door answers as for a wrong key, never a 500. */
function decodedOrNull(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
