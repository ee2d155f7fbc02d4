import { randomBytes } from 'node:crypto';
import { OPEN_LINK_PATH } from '../domain/anonymous/open-link.ts';
import { DOOR_COOKIE, DOOR_COOKIE_SECURE, DOOR_TTL_MS, signSiteToken, verifySiteToken } from './access.ts';
import { readBody } from './challenge.ts';
import { serializeCookie } from './cookies.ts';
import type { SiteEdge } from './edge.ts';
import { renderDocument, SYSTEM_PAGE_HEADERS } from './pages.ts';
import type { RequestContext } from './request-context.ts';

/**
 * Open links through the fragment handoff (behaviour §3.4): the publisher's link to an unclaimed
 * space is `https://<site>/__/open#<space key>`. The key rides in the fragment, so it is never in a
 * request line, an access log, a `Referer` or the server's history:
 *
 * 1. `GET /__/open` answers a small visitor page (no-store, no referrer, script pinned by nonce);
 *    its script reads the fragment, wipes it from the address bar and POSTs the key to the broker;
 * 2. `POST /__/open` (the handoff broker) checks the key opens this space and answers a short
 *    (60 s), host-bound handoff: `{ "next": "/__/open?handoff=…" }`;
 * 3. `GET /__/open?handoff=…` turns the handoff into the door cookie — `__Host-spaces-door`
 *    (Secure, host-only) over HTTPS — and redirects to the clean URL `/`.
 */

export const OPEN_PATH = OPEN_LINK_PATH;
export const OPEN_HANDOFF_TTL_MS = 60_000;
const MAX_BROKER_BODY = 4096;

/** The page's whole script: fragment → broker → handoff URL. */
const OPEN_SCRIPT =
  'var k=location.hash.slice(1);history.replaceState(null,"",location.pathname);' +
  'var p=document.getElementById("p");' +
  'function fail(){p.textContent="This open link is not valid (any more). Publish again to get a fresh one.";}' +
  'if(!k){fail();}else{fetch(location.pathname,{method:"POST",credentials:"same-origin",' +
  'headers:{"content-type":"application/x-www-form-urlencoded"},body:"key="+encodeURIComponent(decodeURIComponent(k))})' +
  '.then(function(r){if(!r.ok)throw r;return r.json();}).then(function(j){location.replace(j.next);}).catch(fail);}';

export async function serveOpenLink(edge: SiteEdge, ctx: RequestContext): Promise<void> {
  const { req, res, hostname, space } = ctx;
  const now = edge.clock.now().getTime();
  const secure = edge.protoOf(req) === 'https';
  if (ctx.method === 'POST') {
    const body = await readBody(req, MAX_BROKER_BODY);
    const key = body === null ? null : new URLSearchParams(body).get('key');
    if (!key || !space.anonymous || !(await edge.services.anonymous.keyOpensSpace(key, space.id))) {
      return json(ctx, 404, { error: 'open_link_invalid' });
    }
    const handoff = signSiteToken(
      edge.siteSecret,
      'door-handoff',
      hostname,
      space.id,
      '-',
      now + OPEN_HANDOFF_TTL_MS,
    );
    return json(ctx, 200, { next: `${OPEN_PATH}?handoff=${encodeURIComponent(handoff)}` });
  }
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
    res.writeHead(405, { ...SYSTEM_PAGE_HEADERS, allow: 'GET, HEAD, POST' });
    return void res.end();
  }
  const handoff = ctx.query().get('handoff');
  if (handoff !== null) {
    const ok = verifySiteToken(edge.siteSecret, 'door-handoff', hostname, handoff, now);
    if (!ok || ok.spaceId !== space.id) {
      return edge.sendBlocked(
        ctx,
        403,
        'Open link expired',
        'Open the link from your publish receipt again.',
      );
    }
    const door = signSiteToken(edge.siteSecret, 'door', hostname, space.id, '-', now + DOOR_TTL_MS);
    res.writeHead(303, {
      location: '/',
      'set-cookie': serializeCookie(secure ? DOOR_COOKIE_SECURE : DOOR_COOKIE, door, {
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
  const nonce = randomBytes(16).toString('base64url');
  const page = renderDocument({
    status: 200,
    title: 'Opening your site',
    content:
      '<p id="p" aria-live="polite">Opening…</p>' +
      '<noscript><p>JavaScript is needed to open this link.</p></noscript>' +
      `<script nonce="${nonce}">${OPEN_SCRIPT}</script>`,
  });
  res.writeHead(200, {
    ...SYSTEM_PAGE_HEADERS,
    'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; connect-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(page)),
    'X-Robots-Tag': 'noindex',
  });
  res.end(req.method === 'HEAD' ? undefined : page);
}

function json(ctx: RequestContext, status: number, body: object): void {
  const text = JSON.stringify(body);
  ctx.res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(text)),
    'referrer-policy': 'no-referrer',
  });
  ctx.res.end(text);
}
