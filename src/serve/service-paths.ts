import { locationValue } from '../site/field.ts';
import {
  ACCESS_COOKIE,
  ACCESS_TTL_MS,
  DOOR_COOKIE,
  DOOR_TTL_MS,
  signSiteToken,
  verifySiteToken,
} from './access.ts';
import { CHALLENGE_PATH, handleChallengeVerify } from './challenge.ts';
import { serializeCookie } from './cookies.ts';
import { robotsHeaders } from './decide.ts';
import type { SiteEdge } from './edge.ts';
import { OPEN_PATH, serveOpenLink } from './open-link.ts';
import { sendSystemPage } from './pages.ts';
import type { RequestContext } from './request-context.ts';

/** Where the API's access hand-off lands on a site host. */
export const HANDOFF_PATH = '/__service/access';

const COLLAB_CSS = '/* Spaces collaboration UI hooks: style [data-spaces-collab] elements here. */\n';

/** `/__service/access?token=…`: turns a valid hand-off into the site's cookie; false when invalid. */
export function acceptHandoff(edge: SiteEdge, ctx: RequestContext, epoch = 0): boolean {
  const { req, res, hostname, space } = ctx;
  const query = ctx.query();
  const at = edge.clock.now().getTime();
  const handoff = verifySiteToken(edge.siteSecret, 'handoff', hostname, query.get('token') ?? undefined, at);
  if (!handoff || handoff.spaceId !== space.id) return false;
  const token = signSiteToken(
    edge.siteSecret,
    'access',
    hostname,
    space.id,
    // The space's session epoch rides along: `sharing/logout-all` ends this cookie too.
    `${handoff.subject}:${epoch}`,
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
      secure: edge.protoOf(req) === 'https',
      maxAge: ACCESS_TTL_MS / 1000,
    }),
    'cache-control': 'no-store',
  });
  res.end();
  return true;
}

/** `/__/<key>`, the challenge, the access hand-off and the collab stylesheet; null when none matched. */
export function servicePath(edge: SiteEdge, ctx: RequestContext): Promise<void> | null {
  const { req, res, hostname, space, noindex, rawPath } = ctx;
  const now = () => edge.clock.now().getTime();
  const secure = () => edge.protoOf(req) === 'https';
  if (rawPath === OPEN_PATH) return serveOpenLink(edge, ctx);
  if (rawPath.startsWith('/__/')) {
    return (async () => {
      const key = decodedOrNull(rawPath.slice(4));
      if (key !== null && space.anonymous && (await edge.services.anonymous.keyOpensSpace(key, space.id))) {
        const token = signSiteToken(edge.siteSecret, 'door', hostname, space.id, '-', now() + DOOR_TTL_MS);
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
      secret: edge.siteSecret,
      now: new Date(now()),
      secure: secure(),
    }).then(() => undefined);
  }
  if (rawPath === HANDOFF_PATH) {
    if (!acceptHandoff(edge, ctx))
      edge.sendBlocked(ctx, 403, 'Access link expired', 'Open the site again to sign in.');
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

/** A malformed escape (`%ZZ`) is no key at all: the door answers as for a wrong key, never a 500. */
function decodedOrNull(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
