import type { FastifyInstance } from 'fastify';
import { isEmailAddress } from '../../domain/accounts/email.ts';
import { SESSION_TTL_MS } from '../../domain/accounts/service.ts';
import { ApiError } from '../../errors/problem.ts';
import { OAuthParams } from '../../schemas/oauth.ts';
import { httpStatusOf, problemHeaders } from '../errors.ts';
import {
  ANON_COOKIE,
  cookie,
  csrfOk,
  pageSession,
  parseCookies,
  SESSION_COOKIE,
  safeReturnTo,
  sessionBinding,
  signInPage,
} from '../oauth-pages.ts';
import { addRoute } from '../route.ts';

const FORM = 'application/x-www-form-urlencoded';

/**
 * The page session of the HTML pages (home, consent, device login, site access): signing in with the
 * pages' e-mail and password form sets the `spaces_session` cookie, signing out ends it. The same cookie
 * is the dashboard's browser session (session-cookie.ts), which the API accepts with CSRF checks.
 */
export function pageSessionRoutes(app: FastifyInstance): void {
  const services = app.services;
  const { rateLimits, accounts } = services;

  addRoute(app, {
    method: 'POST',
    url: '/v1/auth/oauth2/signin',
    operationId: 'oauthPageSignIn',
    summary: 'Sign-in form post of the authorization pages (sets the page session cookie)',
    description:
      'Posted by the sign-in forms of the HTML pages (`/`, consent, device, site access) with `email`, `password`, the form’s `csrf_token` and `return_to`. Sets the `spaces_session` cookie (the browser session of the pages and the dashboard) and redirects back; a wrong password shows the form again (401).',
    tags: ['OAuth'],
    auth: null,
    body: OAuthParams,
    bodyContentTypes: [FORM],
    responses: {
      303: 'Back to the page that asked',
      400: 'HTML form again: the e-mail address or password is missing or malformed',
      401: 'HTML form again: wrong e-mail address or password',
    },
    handler: async (req, reply) => {
      const b = (req.body ?? {}) as Record<string, unknown>;
      const returnTo = safeReturnTo(b.return_to);
      const anon = parseCookies(req.headers.cookie)[ANON_COOKIE];
      if (!anon || !csrfOk(services, `anon:${anon}`, b.csrf_token)) {
        return signInPage(
          services,
          req,
          reply,
          returnTo,
          'Sign in to continue.',
          'The form expired; please sign in again.',
        );
      }
      if (typeof b.email !== 'string' || typeof b.password !== 'string' || !isEmailAddress(b.email.trim())) {
        return signInPage(
          services,
          req,
          reply,
          returnTo,
          'Sign in to continue.',
          'Enter your e-mail address (name@host) and password.',
          400,
        );
      }
      try {
        await rateLimits.signIn.take(`${req.ip}|${b.email.toLowerCase()}`);
        const s = await accounts.signIn(b.email, b.password, req.headers['user-agent'] ?? null);
        reply.header(
          'set-cookie',
          cookie(services, SESSION_COOKIE, s.token, Math.floor(SESSION_TTL_MS / 1000)),
        );
        return reply.redirect(returnTo, 303);
      } catch (err) {
        if (err instanceof ApiError && (err.code === 'invalid_credentials' || err.code === 'rate_limited')) {
          for (const [k, v] of Object.entries(problemHeaders(err))) reply.header(k, v);
          return signInPage(
            services,
            req,
            reply,
            returnTo,
            'Sign in to continue.',
            err.detail,
            httpStatusOf(err),
          );
        }
        throw err;
      }
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/auth/oauth2/signout',
    operationId: 'oauthPageSignOut',
    summary: 'Sign-out form post of the HTML pages (ends the page session)',
    description:
      'Posted by the home page’s sign-out button with its `csrf_token`: revokes the page session, clears the `spaces_session` cookie and goes back to `/`.',
    tags: ['OAuth'],
    auth: null,
    body: OAuthParams,
    bodyContentTypes: [FORM],
    responses: { 303: 'Back to the home page' },
    handler: async (req, reply) => {
      const p = await pageSession(services, req);
      const b = (req.body ?? {}) as Record<string, unknown>;
      // Without a valid token nothing happens: a third-party page must not sign people out.
      if (p && csrfOk(services, sessionBinding(p), b.csrf_token)) {
        await accounts.revokeSession(p.credentialId);
        reply.header('set-cookie', cookie(services, SESSION_COOKIE, '', 0));
      }
      return reply.redirect('/', 303);
    },
  });
}
