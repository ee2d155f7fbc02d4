/**
 * The web dashboard (issue 23): its page at `/` on the API host (for browsers; see home.ts), its
 * built assets under `/dashboard/assets/`, and the browser session it signs in with (a cookie; see
 * session-cookie.ts). The assets are the committed build in `dist/dashboard/` (docs/guides/dashboard.md
 * says why), read once at start; their gzip and brotli forms are made on first request.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, fail } from '../../errors/problem.ts';
import { SignInBody } from '../../schemas/account.ts';
import { BrowserSessionCreated } from '../../schemas/dashboard.ts';
import type { Services } from '../../services.ts';
import { principalOf } from '../auth.ts';
import { esc, pageSession } from '../oauth-pages.ts';
import { send } from '../present.ts';
import { presentUser } from '../presenters/account.ts';
import { addRoute } from '../route.ts';
import { clearSessionCookies, ensureXsrfCookie, setSessionCookies } from '../session-cookie.ts';

export const DASHBOARD_DIR = path.resolve(import.meta.dirname, '../../../dist/dashboard');

/**
 * Scripts and styles from this origin only (no inline script, no eval); API calls to this origin;
 * the hashing worker from this origin; images from here (and `data:` for none of ours, but browsers'
 * own form controls). Never framed.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; font-src 'self'; manifest-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

interface Asset {
  type: string;
  raw: Buffer;
  readonly gzip: Buffer;
  readonly br: Buffer;
}

/** The built dashboard, in memory: index.html and every asset with its compressed forms. */
export function loadDashboard(dir = DASHBOARD_DIR): { index: string; assets: Map<string, Asset> } | null {
  const indexFile = path.join(dir, 'index.html');
  if (!fs.existsSync(indexFile)) return null;
  const assets = new Map<string, Asset>();
  const assetDir = path.join(dir, 'assets');
  for (const name of fs.existsSync(assetDir) ? fs.readdirSync(assetDir) : []) {
    const raw = fs.readFileSync(path.join(assetDir, name));
    // Compressed on first request, once: done here it was ~90 ms of every cold start.
    let gzip: Buffer | undefined;
    let br: Buffer | undefined;
    assets.set(name, {
      type: TYPES[path.extname(name)] ?? 'application/octet-stream',
      raw,
      get gzip() {
        gzip ??= zlib.gzipSync(raw, { level: 9 });
        return gzip;
      },
      get br() {
        br ??= zlib.brotliCompressSync(raw, {
          params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 },
        });
        return br;
      },
    });
  }
  return { index: fs.readFileSync(indexFile, 'utf8'), assets };
}

let loaded: ReturnType<typeof loadDashboard> | undefined;
/** Read once per process (every server built in it serves the same files). */
function loadDashboardOnce() {
  if (loaded === undefined) loaded = loadDashboard();
  return loaded;
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cross-origin-opener-policy', 'same-origin');
}

export function dashboardRoutes(app: FastifyInstance): void {
  const services = app.services;
  const { accounts, rateLimits } = services;
  const built = loadDashboardOnce();

  addRoute(app, {
    method: 'GET',
    url: '/dashboard/assets/:file',
    operationId: 'dashboardAsset',
    summary: 'A built asset of the web dashboard',
    description: 'Scripts and styles of the dashboard page (`/` for browsers), named by their content hash.',
    tags: ['Meta'],
    hidden: true,
    auth: null,
    params: Type.Object({ file: Type.String({ minLength: 1, maxLength: 200 }) }),
    responses: { 200: 'The asset' },
    handler: async (req, reply) => {
      const asset = built?.assets.get(req.params.file);
      if (!asset) fail('not_found', `No dashboard asset ${req.params.file}.`);
      const accept = String(req.headers['accept-encoding'] ?? '');
      const [body, encoding] = /\bbr\b/.test(accept)
        ? [asset.br, 'br']
        : /\bgzip\b/.test(accept)
          ? [asset.gzip, 'gzip']
          : [asset.raw, null];
      securityHeaders(reply)
        .type(asset.type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('vary', 'Accept-Encoding');
      if (encoding) reply.header('content-encoding', encoding);
      return reply.send(body);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/account/browser-sessions',
    operationId: 'createBrowserSession',
    summary: 'Sign in a browser (session cookie)',
    description:
      'The dashboard’s sign-in: like `POST /v1/account/sessions`, but the session token goes into the `spaces_session` cookie (HttpOnly, SameSite=Lax, Secure on HTTPS, this host only) instead of the body, with the `spaces_xsrf` cookie whose value state-changing requests send back in `X-CSRF-Token`. Refused when the browser says another site sent it.',
    tags: ['Account'],
    auth: null,
    body: SignInBody,
    responses: { 201: BrowserSessionCreated },
    handler: async (req, reply) => {
      const site = req.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin')
        fail('csrf_failed', `Sign-in from another site (Sec-Fetch-Site: ${String(site)}) is refused.`);
      await rateLimits.signIn.take(`${req.ip}|${req.body.email.toLowerCase()}`);
      const s = await accounts.signIn(req.body.email, req.body.password, req.headers['user-agent'] ?? null);
      const p = await accounts.resolveSession(s.token);
      if (!p) throw new Error('a session just created does not resolve');
      setSessionCookies(reply, services, s.token, p);
      return send(
        reply,
        BrowserSessionCreated,
        { data: { expiresAt: s.expiresAt, user: presentUser(s.user) } },
        201,
      );
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/account/browser-sessions/current',
    operationId: 'deleteBrowserSession',
    summary: 'Sign a browser out',
    description:
      'Revokes the session that makes this request (the dashboard’s cookie, or a bearer session) and clears the session cookies.',
    tags: ['Account'],
    auth: { accept: ['general'], personOnly: true },
    responses: { 204: 'Signed out' },
    handler: async (req, reply) => {
      const p = principalOf(req);
      if (p.kind !== 'session') fail('forbidden', 'Only a session can sign out.');
      await accounts.revokeSession(p.credentialId);
      clearSessionCookies(reply, services);
      return reply.code(204).send();
    },
  });
}

/** The dashboard's page, for `GET /` when a browser asks (home.ts negotiates). */
export function dashboardPage(services: Services) {
  const built = loadDashboardOnce();
  const index = built?.index.replace(
    '<meta name="spaces-signup" content="closed">',
    `<meta name="spaces-signup" content="${esc(services.config.signup)}">`,
  );
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (!index) {
      throw new ApiError(
        'service_unavailable',
        'The dashboard is not built: run `npm run build:dashboard` (dist/dashboard/ is missing).',
      );
    }
    const p = await pageSession(services, req);
    if (p) ensureXsrfCookie(req, reply, services, p);
    securityHeaders(reply)
      .code(200)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('vary', 'Accept, Cookie');
    return reply.send(index);
  };
}
