import { verifyPassword } from '../domain/access/credentials.ts';
import { ApiError } from '../errors/problem.ts';
import type { Services } from '../services.ts';
import { locationValue } from '../site/field.ts';
import type { AccessCredentialRow } from '../store/repos/access/credentials.ts';
import { readBody } from './challenge.ts';
import { escapeHtml } from './inject.ts';
import { clientKind, renderDocument, SYSTEM_PAGE_HEADERS } from './pages.ts';
import type { RequestContext } from './request-context.ts';
import type { GateState } from './site-gate.ts';
import type { ServableVersion } from './versions.ts';
import { sessionCookie } from './visitor-session.ts';

/**
 * The password page (visitor page `access`, behaviour §4.3): shown instead of the site where a
 * password credential's grant covers the path; themeable with the nearest `_layout.html` (its
 * `<service-content>` element takes the form). The form posts to {@link PASSWORD_PATH}; attempts are
 * rate-limited per client address and per credential (the shared limiter: counted in the database
 * when instances share one), a lockout answering 429 with `Retry-After`.
 */
export const PASSWORD_PATH = '/__service/password';
const MAX_FORM_BYTES = 4096;
const SLOT = /<service-content\s*(?:\/>|>\s*<\/service-content>)/i;

const LAYOUT_CSP =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; script-src 'none'; form-action 'self'; frame-ancestors 'none'";

function form(returnTo: string, error: string | null): string {
  return (
    '<p>This page is protected. Enter the password to continue.</p>' +
    (error
      ? `<p role="alert" data-spaces-access-status="error"><strong>${escapeHtml(error)}</strong></p>`
      : '') +
    `<form method="post" action="${PASSWORD_PATH}" data-spaces-access-lane="password">` +
    `<input type="hidden" name="return" value="${escapeHtml(returnTo)}">` +
    '<label>Password <input type="password" name="password" autocomplete="current-password" required autofocus></label> ' +
    '<button type="submit">Continue</button></form>'
  );
}

async function layoutOf(
  services: Services,
  version: ServableVersion | null,
  path: string,
): Promise<string | null> {
  if (!version) return null;
  const dirs = path.split('/').filter(Boolean);
  dirs.pop();
  for (let i = dirs.length; i >= 0; i--) {
    const entry = version.files.get([...dirs.slice(0, i), '_layout.html'].join('/'));
    if (!entry || entry.size > 256 * 1024) continue;
    const chunks: Buffer[] = [];
    for await (const c of await services.blobs.get(entry.sha256)) chunks.push(c as Buffer);
    const html = Buffer.concat(chunks).toString('utf8');
    return SLOT.test(html) ? html : null;
  }
  return null;
}

export async function sendPasswordPage(
  services: Services,
  ctx: RequestContext,
  version: ServableVersion | null,
  opts: { status?: number; error?: string | null; returnTo?: string; retryAfter?: number } = {},
): Promise<void> {
  const { req, res } = ctx;
  const status = opts.status ?? 401;
  const returnTo = opts.returnTo ?? ctx.url;
  const title = status === 429 ? 'Too many attempts' : 'Password required';
  const headers: Record<string, string> = {
    ...SYSTEM_PAGE_HEADERS,
    Vary: 'Accept',
    'X-Robots-Tag': 'noindex',
  };
  if (opts.retryAfter) headers['Retry-After'] = String(opts.retryAfter);
  let body: string;
  if (clientKind(req) === 'json') {
    headers['Content-Type'] = 'application/problem+json';
    body = JSON.stringify({
      type: 'about:blank',
      title,
      status,
      detail: opts.error ?? 'A password is needed to see this page.',
      code: status === 429 ? 'password_rate_limited' : 'password_required',
      page: 'access',
    });
  } else {
    const content = form(returnTo, opts.error ?? null);
    const layout = await layoutOf(services, version, new URL(returnTo, 'http://x').pathname);
    if (layout) {
      headers['Content-Security-Policy'] = LAYOUT_CSP;
      body = layout.replace(SLOT, `<h1>${escapeHtml(title)}</h1>${content}`);
    } else {
      headers['Content-Security-Policy'] =
        `${SYSTEM_PAGE_HEADERS['Content-Security-Policy']}; form-action 'self'`;
      body = renderDocument({ status, title, content });
    }
    headers['Content-Type'] = 'text/html; charset=utf-8';
  }
  headers['Content-Length'] = String(Buffer.byteLength(body));
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** `POST /__service/password`: checks the password against the space's password credentials. */
export async function handlePasswordPost(
  services: Services,
  secret: Buffer,
  ctx: RequestContext,
  state: GateState,
  https: boolean,
  version: ServableVersion | null,
): Promise<void> {
  const raw = await readBody(ctx.req, MAX_FORM_BYTES);
  const fields = new URLSearchParams(raw ?? '');
  const back = fields.get('return') ?? '/';
  const returnTo = back.startsWith('/') && !back.startsWith('//') && !back.includes('\\') ? back : '/';
  const password = fields.get('password') ?? '';
  const ip = services.clientAddresses.clientAddress(ctx.req);
  const candidates: AccessCredentialRow[] = state.passwords;
  try {
    await services.rateLimits.sitePasswordIp.take(`${state.spaceId}|${ip}`);
    for (const c of candidates) await services.rateLimits.sitePasswordCredential.take(c.id);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return sendPasswordPage(services, ctx, version, {
      status: 429,
      returnTo,
      error: 'Too many attempts. Wait a while before trying again.',
      retryAfter: err.extras.facts?.retryAfterSeconds,
    });
  }
  let match: AccessCredentialRow | null = null;
  if (password && password.length <= 256) {
    for (const c of candidates) {
      if (await verifyPassword(c.secret_hash, password)) {
        match = c;
        break;
      }
    }
  }
  const grant = match ? state.byId.get(match.grant_id) : null;
  if (match && grant && grant.constraints.maxUses !== undefined) {
    if (!(await services.store.repos.grants.consumeUse(grant.id))) match = null;
  }
  if (!match) {
    return sendPasswordPage(services, ctx, version, {
      status: 401,
      returnTo,
      error: 'That password is not right.',
    });
  }
  const now = services.clock.now();
  void services.store.repos.accessCredentials.touch(match.id, now.toISOString()).catch(() => {});
  ctx.res.writeHead(303, {
    location: locationValue(returnTo),
    'set-cookie': sessionCookie(
      secret,
      ctx.hostname,
      https,
      {
        spaceId: state.spaceId,
        kind: 'password',
        credentialId: match.id,
        generation: match.generation,
        epoch: state.epoch,
      },
      now.getTime(),
    ),
    'cache-control': 'no-store',
  });
  ctx.res.end();
}
