import { configGrants } from '../domain/access/config.ts';
import { firstMatch } from '../domain/access/matcher.ts';
import { PERSON_LINK_PATH } from '../domain/people/service.ts';
import { normalisePath } from '../site/path.ts';
import { markUnseen } from './access-log.ts';
import type { Effective, SiteTarget } from './decide.ts';
import { isServicePath } from './decide.ts';
import type { SiteEdge } from './edge.ts';
import { sendSystemPage } from './pages.ts';
import { handlePasswordPost, PASSWORD_PATH, sendPasswordPage } from './password-page.ts';
import { isPlatformRequest } from './platform-requests.ts';
import type { RequestContext } from './request-context.ts';
import type { ServeFileOptions } from './respond.ts';
import { acceptHandoff, HANDOFF_PATH } from './service-paths.ts';
import { type GateState, servedTarget, servedTargetOf } from './site-gate.ts';
import type { ServableVersion } from './versions.ts';
import type { WireRequest } from './wire.ts';

/**
 * Where a request to a space that is not public meets access control, in two steps:
 * {@link enterGate} before anything of the site is looked at (hand-off, password form, share-link
 * token, the visitor from cookies and headers), and {@link gateVersion} once the version is known
 * (the matcher over the space's access, the version's `access` key and the stored grants). A
 * visitor nothing lets in gets exactly what an unknown hostname gets (`unseen`), except where a
 * password credential covers the path: then the password page.
 */
export type GateEntry = 'pass' | 'unseen' | 'done' | Promise<void>;

export function enterGate(edge: SiteEdge, ctx: RequestContext): GateEntry {
  // The server's own requests (crons) run whatever the site's access.
  if (isPlatformRequest(ctx.req)) return 'pass';
  const { space, rawPath, method } = ctx;
  const state = edge.gate.peek(space.id);
  if (!state) return edge.gate.load(space.id).then(() => edge.serveTarget(ctx));
  const https = edge.protoOf(ctx.req) === 'https';
  if (rawPath === HANDOFF_PATH) return acceptHandoff(edge, ctx, state.epoch) ? 'done' : 'unseen';
  if (rawPath === PERSON_LINK_PATH) {
    const token = ctx.q === -1 ? null : ctx.query().get('token');
    if (!token) return 'unseen';
    return edge.gate
      .redeemPersonLink(ctx, state, token, https)
      .then((ok) => (ok ? undefined : edge.unseen(ctx)));
  }
  if (rawPath === PASSWORD_PATH && method === 'POST') {
    if (!state.passwords.length) return 'unseen';
    return handlePasswordPost(edge.services, edge.siteSecret, ctx, state, https, null);
  }
  if (ctx.q !== -1) {
    const query = ctx.query();
    for (const v of query.values()) {
      if (v.startsWith('smc_')) {
        edge.sendBlocked(
          ctx,
          400,
          'Credential in the address',
          'Machine credentials are sent in the X-Spaces-Access-Token header, never in the URL.',
        );
        return 'done';
      }
    }
    const link = query.get('__');
    if (link)
      return edge.gate.redeemLink(ctx, state, link, https).then((ok) => (ok ? undefined : edge.unseen(ctx)));
  }
  ctx.gate = edge.gate.visitorOf(ctx, state);
  if (ctx.gate.identified) return 'pass';
  if (isServicePath(rawPath) || space.disabledReason) return 'unseen';
  // Nothing could let in a visitor holding nothing (no public grant, no password, no public paths in
  // the version's settings): answer now, as early as for a hostname with no space.
  if (!state.publicGrant && state.passwords.length === 0) {
    const version = edge.cachedVersion(ctx);
    if (version && configGrants(version.config).length === 0) return 'unseen';
  }
  return 'pass';
}

/** The gate state of "no space": nothing stored, nothing that lets anyone in. */
const NO_SPACE_STATE: GateState = {
  spaceId: '',
  epoch: 0,
  grants: [],
  byId: new Map(),
  credentials: new Map(),
  byHash: new Map(),
  passwords: [],
  people: new Map(),
  network: false,
  publicGrant: false,
  loadedAt: 0,
};

/**
 * A hostname with no space, on the equal-cost path: before answering `unseen` it does the work
 * {@link enterGate} does for a private space's visitor holding nothing — the state look-up, the
 * visitor from cookies and headers, the query and service-path checks, the cached version and its
 * settings — so the two answers take the same time, not only the same bytes (behaviour §3.4:
 * unknown private spaces are never revealed). Always ends in `unseen`.
 */
export function enterNoSpace(edge: SiteEdge, ctx: RequestContext): void {
  edge.gate.peek(ctx.hostname);
  const gv = edge.gate.visitorFrom(ctx.req.headers, ctx.hostname, '', NO_SPACE_STATE);
  if (ctx.q !== -1) for (const v of ctx.query().values()) if (v.startsWith('smc_')) break;
  if (!gv.identified && !isServicePath(ctx.rawPath) && !NO_SPACE_STATE.publicGrant) {
    configGrants(edge.versions.peek(ctx.hostname)?.config);
  }
  edge.unseen(ctx);
}

/** null: let the request through (`ctx.privateAnswer` says whether only this visitor may cache it). */
export function gateVersion(
  edge: SiteEdge,
  ctx: RequestContext,
  version: ServableVersion,
  eff: Effective,
): Promise<void> | void | null {
  const g = ctx.gate!;
  ctx.gateDone = true;
  const norm = normalisePath(ctx.rawPath);
  if (!norm.ok) return edge.unseen(ctx);
  const grants = edge.gate.grantsFor(ctx.space.access, eff.config, g.state);
  const target = servedTarget(ctx, version.id);
  const hit = firstMatch(grants, g.visitor, {
    path: norm.path,
    target,
    capability: 'page.view',
    now: edge.clock.now(),
  });
  if (hit) {
    ctx.grant = hit;
    ctx.privateAnswer = hit.audience.type !== 'public';
    if (hit.audience.type === 'machine' && hit.constraints.maxUses !== undefined) {
      return edge.gate
        .countMachineUse(hit)
        .then((ok) => (ok ? edge.serveVersion(ctx, version) : edge.unseen(ctx)));
    }
    return null;
  }
  if (edge.gate.passwordsFor(g, grants, norm.path, target).length)
    return sendPasswordPage(edge.services, ctx, version);
  return edge.unseen(ctx);
}

const privateCopies = new WeakMap<object, Record<string, string | string[]>>();

/** The routing answer's headers with `Cache-Control: private` (one copy per answer object). */
export function privateHeaders(
  headers: Record<string, string | string[]>,
): Record<string, string | string[]> {
  let copy = privateCopies.get(headers);
  if (!copy) {
    copy = { ...headers };
    for (const k of Object.keys(copy)) if (k.toLowerCase() === 'cache-control') delete copy[k];
    copy['Cache-Control'] = 'private, no-cache';
    privateCopies.set(headers, copy);
  }
  return copy;
}

const privateServes = new WeakMap<ServeFileOptions, ServeFileOptions>();

/** The responder's options with private headers (one copy per answer, so its header memo hits). */
export function privateServe(o: ServeFileOptions): ServeFileOptions {
  let copy = privateServes.get(o);
  if (!copy) {
    copy = { ...o, headers: privateHeaders(o.headers as Record<string, string | string[]>) };
    privateServes.set(o, copy);
  }
  return copy;
}

/**
 * The fast lane's access question for a space that is not public: true (let in, answer private),
 * false (let in by a public grant), null (the full path decides: nothing cached, a visitor nothing
 * lets in, an address-bound grant, a counted machine use).
 */
export function fastGate(
  edge: SiteEdge,
  req: WireRequest,
  hostname: string,
  target: SiteTarget,
  version: ServableVersion,
  eff: Effective,
): boolean | null {
  const state = edge.gate.peek(target.space.id);
  if (!state || state.network) return null;
  const url = req.url;
  const q = url.indexOf('?');
  if (q !== -1 && (url.includes('__=', q) || url.includes('smc_', q))) return null;
  const gv = edge.gate.visitorFrom(req.headers, hostname, target.space.id, state);
  if (!gv.identified) return null;
  const norm = normalisePath(q === -1 ? url : url.slice(0, q));
  if (!norm.ok) return null;
  const hit = firstMatch(edge.gate.grantsFor(target.space.access, eff.config, state), gv.visitor, {
    path: norm.path,
    target: servedTargetOf(target, version.id),
    capability: 'page.view',
    now: edge.clock.now(),
  });
  if (!hit || (hit.audience.type === 'machine' && hit.constraints.maxUses !== undefined)) return null;
  return hit.audience.type !== 'public';
}

/**
 * What a visitor who may not know about this hostname gets. Under the base domain any name could be
 * a team/private space, so unknown, deleted and not-yet-entered spaces all send the visitor to
 * sign in (the API answers "no site" after sign-in to anyone the space is not for); other
 * hostnames can never be a space and get the "no site here" page. Not in the space's access log.
 */
export function sendUnseen(edge: SiteEdge, ctx: RequestContext): void {
  const { req, res, hostname } = ctx;
  markUnseen(res);
  // A custom domain of a known space sends its visitors to sign in like the managed host does.
  if (edge.directory.labelOf(hostname) === null && ctx.target.kind !== 'site') {
    sendSystemPage(req, res, { kind: 'unknown-host', host: hostname });
    return;
  }
  const acquire = new URL(`${edge.config.publicUrl}/v1/access/acquire`);
  acquire.searchParams.set('host', hostname);
  acquire.searchParams.set('return', ctx.url);
  res.writeHead(302, {
    location: acquire.toString(),
    'cache-control': 'no-store',
    'x-robots-tag': 'noindex',
  });
  res.end();
}
