import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../domain/auth/principal.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../domain/auth/scopes.ts';
import type { Services } from '../services.ts';

/**
 * Server-rendered pages of the authorization server (sign-in, consent, device verification).
 * Their cookie (`spaces_session`) is also the dashboard's browser session: the API accepts it when no
 * `Authorization` is sent, with the CSRF checks of session-cookie.ts.
 */
export const SESSION_COOKIE = 'spaces_session';
export const ANON_COOKIE = 'spaces_csrf';

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (!(k in out)) {
      try {
        out[k] = decodeURIComponent(v);
      } catch {
        out[k] = v;
      }
    }
  }
  return out;
}

export function cookie(services: Services, name: string, value: string, maxAgeS: number): string {
  const secure = services.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${name}=${encodeURIComponent(value)}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Lax${secure}`;
}

/** The signed-in person of a page request (the `spaces_session` cookie), or null. */
export async function pageSession(services: Services, req: FastifyRequest): Promise<Principal | null> {
  const token = parseCookies(req.headers.cookie)[SESSION_COOKIE];
  if (!token?.startsWith('sfs_')) return null;
  const p = await services.accounts.resolveSession(token);
  return p?.kind === 'session' ? p : null;
}

function mac(services: Services, binding: string): string {
  return createHmac('sha256', services.oauth.csrfKey).update(binding).digest('base64url');
}

/** CSRF token bound to the session (signed-in pages) or to the anonymous cookie (sign-in form). */
export function csrfFor(services: Services, binding: string): string {
  return mac(services, binding);
}

export function csrfOk(services: Services, binding: string, token: unknown): boolean {
  if (typeof token !== 'string') return false;
  const a = Buffer.from(mac(services, binding));
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function sessionBinding(p: Principal): string {
  return `ses:${p.credentialId}`;
}

/** The anonymous CSRF cookie value of this browser, set when missing. */
export function anonBinding(services: Services, req: FastifyRequest, reply: FastifyReply): string {
  let v = parseCookies(req.headers.cookie)[ANON_COOKIE];
  if (!v || !/^[A-Za-z0-9_-]{20,64}$/.test(v)) {
    v = randomBytes(24).toString('base64url');
    reply.header('set-cookie', cookie(services, ANON_COOKIE, v, 3600));
  }
  return `anon:${v}`;
}

/**
 * Sends a page with the anti-clickjacking and no-cache headers every one of them carries, in the
 * dashboard's design (its palette, header and card; no script).
 */
export function sendPage(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store');
  return reply.send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} — Spaces</title>
<style>
:root{--fg:#1b1f24;--muted:#57606a;--bg:#f6f8fa;--card:#fff;--line:#d0d7de;--accent:#0a5bc4;--bad:#b3001e}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--fg);background:var(--bg)}
header{padding:.6rem 1.25rem;background:#0d1117}header a{color:#e6edf3;font-weight:700;font-size:1.1rem;text-decoration:none}
main{max-width:30rem;margin:3rem auto;padding:1.25rem 1.5rem;background:var(--card);border:1px solid var(--line);border-radius:10px}
h1{font-size:1.5rem;margin-top:0}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{font:inherit;padding:.45rem .6rem;width:100%;box-sizing:border-box;border:1px solid #6e7781;border-radius:6px}
button{font:inherit;padding:.45rem 1rem;margin:.75rem .5rem 0 0;border-radius:6px;border:1px solid #6e7781;background:#fff;cursor:pointer}
button.primary{background:var(--accent);color:#fff;border-color:var(--accent);font-weight:600}
a{color:var(--accent)}:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.error{color:var(--bad);font-weight:600}code{font-size:1.05em}
</style>
</head>
<body>
<header><a href="/">Spaces</a></header>
<main>
<h1>${esc(title)}</h1>
${body}
</main>
</body>
</html>
`);
}

export function scopeList(scopes: readonly Scope[]): string {
  if (scopes.length === 0) return '<p>No access to your data.</p>';
  return `<ul>${scopes
    .map((s) => `<li><strong>${esc(SCOPE_DESCRIPTIONS[s])}</strong> (<code>${esc(s)}</code>)</li>`)
    .join('')}</ul>`;
}

export function hidden(fields: Record<string, string | null | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v!)}">`)
    .join('\n');
}

/**
 * The e-mail and password form of every page; it posts to `/v1/auth/oauth2/signin`, which sets the
 * page session cookie and comes back to `returnTo`.
 */
export function signInForm(
  services: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  returnTo: string,
  error?: string,
): string {
  const csrf = csrfFor(services, anonBinding(services, req, reply));
  return `${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/v1/auth/oauth2/signin">
${hidden({ csrf_token: csrf, return_to: returnTo })}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button class="primary" type="submit">Sign in</button>
</form>`;
}

/** The sign-in form shown by a page when nobody is signed in; comes back to `returnTo` after. */
export function signInPage(
  services: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  returnTo: string,
  message: string,
  error?: string,
  status = error ? 401 : 200,
  /** HTML after the form (already escaped), e.g. another way in. */
  after = '',
): FastifyReply {
  return sendPage(
    reply,
    status,
    'Sign in to Spaces',
    `<p>${esc(message)}</p>
${signInForm(services, req, reply, returnTo, error)}${after}`,
  );
}

/** Only our own pages may be returned to after signing in (no open redirect). */
export function safeReturnTo(raw: unknown): string {
  if (typeof raw !== 'string') return '/device';
  const ours = [
    /^\/$/,
    /^\/v1\/auth\/oauth2\/authorize(\?[^\s\\#]*)?$/,
    /^\/device(\?[^\s\\#]*)?$/,
    /^\/v1\/access\/acquire(\?[^\s\\#]*)?$/,
  ];
  return ours.some((re) => re.test(raw)) ? raw : '/device';
}
