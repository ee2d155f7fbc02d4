import type { IncomingMessage, ServerResponse } from 'node:http';
import ipaddr from 'ipaddr.js';
import { teamTagsHtmlForSpace } from '../domain/tags/render.ts';
import type { Services } from '../services.ts';
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
import { applyOverlay, compileSite, recompileWithConfig } from './compile.ts';
import type { CompiledRules } from './compiled.ts';
import { parseCookies, serializeCookie } from './cookies.ts';
import { SiteDirectory, type SiteSpace } from './directory.ts';
import { requestHostname } from './host.ts';
import { buildInjection, type Injection, makeInjection } from './inject.ts';
import { renderDocument, SYSTEM_PAGE_HEADERS, sendSystemPage } from './pages.ts';
import { normalisePath } from './path.ts';
import { createSafeDispatcher, parseProxyAllowList, proxyRequest } from './proxy.ts';
import { FileResponder } from './respond.ts';
import { type Decision, type RouteRequest, route } from './rules.ts';
import { type ServableVersion, VersionCache } from './versions.ts';
import { parseTrustedHeaders, VisitorInfo } from './visitor.ts';

/** Web content an unclaimed anonymous space may serve; anything else waits for the claim. */
const ANONYMOUS_TYPES =
  /^(text\/|image\/|font\/|application\/(json|xml|javascript|ecmascript|gzip|manifest\+json|ld\+json|rss\+xml|atom\+xml|wasm)|[a-z]+\/[a-z0-9.+-]*\+xml)/;

const COLLAB_CSS = '/* Spaces collaboration UI hooks: style [data-spaces-collab] elements here. */\n';

interface Effective {
  rules: CompiledRules;
  injection: Injection;
  config: Record<string, unknown> | null;
}

/**
 * The site edge: every request whose Host is not the API's lands here, on raw node:http (no Fastify
 * on the hot path). Host → space → channel → version (all cached in memory) → routing decision →
 * response. Nothing per request touches the database once caches are warm.
 */
export function createSiteHandler(services: Services, siteSecret: Buffer) {
  const { db, config, clock, blobs, log, events } = services;
  const directory = new SiteDirectory(db, config, clock);
  const versions = new VersionCache(db);
  const responder = new FileResponder({
    blobs,
    cache: new BlobCache({ maxBytes: 128 * 1024 * 1024 }),
    onError: (err, entry) => log.error({ err, sha256: entry.sha256 }, 'blob read failed'),
  });
  const allow = parseProxyAllowList(config.proxyAllow);
  const dispatcher = createSafeDispatcher({ allow });
  const trusted = config.trustedProxies.map((c) =>
    c.includes('/')
      ? ipaddr.parseCIDR(c)
      : ipaddr.parseCIDR(`${c}/${ipaddr.parse(c).kind() === 'ipv4' ? 32 : 128}`),
  );
  const visitor = new VisitorInfo(config.geoipDb, parseTrustedHeaders(config.trustedProxyHeaders));
  const effectiveCache = new Map<string, Effective>();
  const tagInjections = new Map<string, Injection>();
  events.onSpaceChanged((id) => directory.invalidate(id));
  services.onClose.push(async () => {
    await dispatcher.close();
  });

  const isTrustedPeer = (addr: string | undefined) => {
    if (!addr || trusted.length === 0) return false;
    try {
      const ip = ipaddr.process(addr);
      return trusted.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range, bits));
    } catch {
      return false;
    }
  };
  const clientIp = (req: IncomingMessage): string => {
    const peer = req.socket.remoteAddress ?? '';
    if (!isTrustedPeer(peer)) return peer;
    const xff = String(req.headers['x-forwarded-for'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    // Walk from the nearest hop back past trusted proxies: the first untrusted address is the client.
    for (let i = xff.length - 1; i >= 0; i--) if (!isTrustedPeer(xff[i])) return xff[i]!;
    return xff[0] ?? peer;
  };
  const protoOf = (req: IncomingMessage): 'http' | 'https' => {
    if (isTrustedPeer(req.socket.remoteAddress)) {
      const p = String(req.headers['x-forwarded-proto'] ?? '')
        .split(',')[0]!
        .trim();
      if (p === 'https' || p === 'http') return p;
    }
    return (req.socket as { encrypted?: boolean }).encrypted ? 'https' : config.siteScheme;
  };

  const effective = (v: ServableVersion, space: SiteSpace): Effective => {
    const key = `${v.id}|${space.overlay ? space.overlayKey : '-'}`;
    let e = effectiveCache.get(key);
    if (e) return e;
    const config = applyOverlay(v.config, space.overlay) as Record<string, unknown> | null;
    let rules = v.rules as CompiledRules | null;
    if (!rules) rules = compileSite({ files: v.entries, config }).rules;
    else if (space.overlay) rules = recompileWithConfig(rules, { files: v.entries, config }).rules;
    e = { rules, injection: buildInjection(config as never), config };
    if (effectiveCache.size > 1024) effectiveCache.clear();
    effectiveCache.set(key, e);
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

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const hostname = requestHostname(req);
    const target = await directory.resolve(hostname);
    if (target.kind === 'none') return sendSystemPage(req, res, { kind: 'unknown-host', host: hostname });
    if (target.kind === 'moved') {
      res.writeHead(307, {
        location: `${protoOf(req)}://${target.hostname}${config.sitePortSuffix}${req.url ?? '/'}`,
        'cache-control': 'no-store',
      });
      return void res.end();
    }
    const { space } = target;
    if (space.disabledReason === 'deleted')
      return sendSystemPage(req, res, { kind: 'unknown-host', host: hostname });
    if (space.disabledReason)
      return sendSystemPage(req, res, { kind: 'disabled', reasonCode: space.disabledReason });

    const isPreview = target.versionId !== null || target.channel !== 'live';
    const robots: Record<string, string> = isPreview || space.noindex ? { 'X-Robots-Tag': 'noindex' } : {};
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const now = clock.now().getTime();
    const cookies = Object.fromEntries(parseCookies(req.headers.cookie));
    const secure = protoOf(req) === 'https';

    // Service paths on every site host.
    if (rawPath.startsWith('/__/')) {
      const key = decodeURIComponent(rawPath.slice(4));
      if (space.anonymous && (await services.anonymous.keyOpensSpace(key, space.id))) {
        const token = signSiteToken(siteSecret, 'door', hostname, space.id, '-', now + DOOR_TTL_MS);
        res.writeHead(302, {
          location: '/',
          'set-cookie': serializeCookie(DOOR_COOKIE, token, {
            path: '/',
            httpOnly: true,
            sameSite: 'Lax',
            secure,
            maxAge: DOOR_TTL_MS / 1000,
          }),
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        });
        return void res.end();
      }
      return sendSystemPage(req, res, { kind: 'not-found', path: '/__/' }, { headers: robots });
    }
    if (rawPath === CHALLENGE_PATH) {
      await handleChallengeVerify(req, res, {
        host: hostname,
        secret: siteSecret,
        now: new Date(now),
        secure,
      });
      return;
    }
    if (rawPath === '/__service/access') {
      const handoff = verifySiteToken(siteSecret, 'handoff', hostname, query.get('token') ?? undefined, now);
      if (!handoff || handoff.spaceId !== space.id) {
        return sendBlocked(req, res, 403, 'Access link expired', 'Open the site again to sign in.');
      }
      const token = signSiteToken(
        siteSecret,
        'access',
        hostname,
        space.id,
        handoff.subject,
        now + ACCESS_TTL_MS,
      );
      const back = query.get('return') ?? '/';
      res.writeHead(303, {
        location: back.startsWith('/') && !back.startsWith('//') && !back.includes('\\') ? back : '/',
        'set-cookie': serializeCookie(ACCESS_COOKIE, token, {
          path: '/',
          httpOnly: true,
          sameSite: 'Lax',
          secure,
          maxAge: ACCESS_TTL_MS / 1000,
        }),
        'cache-control': 'no-store',
      });
      return void res.end();
    }
    if (rawPath === '/__service/collab.css') {
      res.writeHead(200, {
        'content-type': 'text/css; charset=utf-8',
        'cache-control': 'public, max-age=300',
      });
      return void res.end(req.method === 'HEAD' ? undefined : COLLAB_CSS);
    }

    // Who may see it: public spaces everyone; unclaimed anonymous spaces their publisher (door
    // cookie); team/private spaces signed-in members, through the API's access hand-off.
    if (space.anonymous) {
      if (!verifySiteToken(siteSecret, 'door', hostname, cookies[DOOR_COOKIE], now)) {
        return sendSystemPage(
          req,
          res,
          { kind: 'unclaimed', claimUrl: null },
          { headers: { 'X-Robots-Tag': 'noindex' } },
        );
      }
    } else if (space.access !== 'public') {
      const access = verifySiteToken(siteSecret, 'access', hostname, cookies[ACCESS_COOKIE], now);
      if (!access || access.spaceId !== space.id) {
        const acquire = new URL(`${config.publicUrl}/v1/access/acquire`);
        acquire.searchParams.set('host', hostname);
        acquire.searchParams.set('return', url);
        res.writeHead(302, {
          location: acquire.toString(),
          'cache-control': 'no-store',
          'x-robots-tag': 'noindex',
        });
        return void res.end();
      }
    }

    const versionId = target.versionId ?? space.channels[target.channel] ?? null;
    const version = versionId ? await versions.get(versionId) : null;
    if (!version || version.spaceId !== space.id) {
      return sendSystemPage(
        req,
        res,
        { kind: 'not-found', path: rawPath },
        { headers: { 'X-Robots-Tag': 'noindex' } },
      );
    }
    const eff = effective(version, space);

    const norm = normalisePath(rawPath);
    if (!norm.ok) return sendBlocked(req, res, 400, 'Bad request', 'This address is not valid.');
    const rr: RouteRequest = {
      method: req.method ?? 'GET',
      path: norm.path,
      query,
      host: hostname,
      headers: req.headers,
      cookies,
      ip: clientIp(req),
      ...(visitor.active
        ? visitor.attributes(req, clientIp(req), isTrustedPeer(req.socket.remoteAddress))
        : {}),
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
      case 'redirect':
        res.writeHead(d.status, {
          location: d.location,
          'cache-control': d.noStore ? 'no-store' : 'no-cache',
          ...robots,
        });
        return void res.end();
      case 'proxy': {
        if (space.anonymous) return sendSystemPage(req, res, { kind: 'proxy-disabled', reason: 'anonymous' });
        const out = await proxyRequest(req, res, {
          target: d.url,
          dispatcher,
          allow,
          clientIp: rr.ip,
          proto: protoOf(req),
          host: hostname,
          cache: d.cacheShared ? 'shared' : 'private',
        });
        if (out.error && out.error !== 'upstream')
          log.warn({ target: d.url, error: out.error, detail: out.detail }, 'proxy refused');
        return;
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
          { headers: robots },
        );
      case 'notFound':
      case 'file': {
        const entry = d.entry;
        if (!entry)
          return sendSystemPage(req, res, { kind: 'not-found', path: norm.path }, { headers: robots });
        if (space.anonymous && !ANONYMOUS_TYPES.test(entry.contentType)) {
          return sendBlocked(
            req,
            res,
            403,
            'Not served before claim',
            'This kind of file is stored but only served once the space is claimed into an account.',
          );
        }
        const headers: Record<string, string | string[]> = { ...d.headers, ...robots };
        for (const name of d.removeHeaders) delete headers[name];
        if (d.noStore) headers['Cache-Control'] = 'no-store';
        let injection = eff.injection;
        if (space.teamId && /^text\/html|^application\/xhtml\+xml/.test(entry.contentType)) {
          // Released team tags (tag manager) join the space's own snippets at the end of <body>.
          const tags = await teamTagsHtmlForSpace(services, {
            teamId: space.teamId,
            config: eff.config as never,
          });
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
        }
        await responder.serve(req, res, {
          entry,
          lastModified: version.createdAt,
          status: d.status,
          headers,
          injection,
        });
        return;
      }
    }
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err) => {
      log.error({ err, host: req.headers.host, url: req.url }, 'site request failed');
      if (!res.headersSent) sendSystemPage(req, res, { kind: 'error' });
      else res.destroy();
    });
  };
}
