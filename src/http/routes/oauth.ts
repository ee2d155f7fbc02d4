import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SCOPES } from '../../domain/auth/scopes.ts';
import { OAuthError } from '../../domain/oauth/errors.ts';
import {
  ACCESS_TOKEN_TTL_S,
  AUTH_CODE_TTL_S,
  DEVICE_CODE_TTL_S,
  REFRESH_TOKEN_TTL_S,
} from '../../domain/oauth/lifetimes.ts';
import type { AuthorizeRequest, OAuthClient } from '../../domain/oauth/service.ts';
import { ApiError } from '../../errors/problem.ts';
import {
  OAuthDeviceResponse,
  OAuthErrorResponse,
  OAuthIntrospection,
  OAuthParams,
  OAuthServerMetadata,
  OAuthTokenResponse,
} from '../../schemas/oauth.ts';
import { httpStatusOf } from '../errors.ts';
import {
  csrfFor,
  csrfOk,
  esc,
  hidden,
  pageSession,
  safeReturnTo,
  scopeList,
  sendPage,
  sessionBinding,
  signInPage,
} from '../oauth-pages.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { addRoute } from '../route.ts';

const FORM = 'application/x-www-form-urlencoded';

/** OAuth parameters: each a single string (RFC 6749 §3.1: parameters must not repeat). */
function params(body: unknown): Record<string, string> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new OAuthError('invalid_request', 'The body must be form-encoded parameters.');
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (typeof v !== 'string')
      throw new OAuthError('invalid_request', `The parameter ${k} is repeated or not a string.`);
    out[k] = v;
  }
  return out;
}

/** `Authorization: Basic` client credentials (RFC 6749 §2.3.1: both parts form-urlencoded). */
function basicAuth(header: string | undefined): { id: string; secret: string } | null {
  if (!header || !/^basic\s/i.test(header)) return null;
  const invalid = new OAuthError('invalid_client', 'Malformed Basic credentials.', { basicChallenge: true });
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0) throw invalid;
  try {
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: dec(decoded.slice(0, i)), secret: dec(decoded.slice(i + 1)) };
  } catch {
    throw invalid;
  }
}

/** Runs an OAuth endpoint: JSON answers, `Cache-Control: no-store`, errors as `{error, error_description}`. */
async function oauthEndpoint(
  req: FastifyRequest,
  reply: FastifyReply,
  limiter: RateLimiter | null,
  fn: (p: Record<string, string>, basic: { id: string; secret: string } | null) => Promise<object | null>,
): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  try {
    const p = params(req.body);
    const basic = basicAuth(req.headers.authorization);
    await limiter?.take(`${req.ip}|${basic?.id ?? p.client_id ?? ''}`);
    const out = await fn(p, basic);
    if (out === null) return reply.code(200).send();
    return reply.code(200).type('application/json; charset=utf-8').send(out);
  } catch (err) {
    if (err instanceof OAuthError) {
      if (err.facts.basicChallenge) reply.header('www-authenticate', 'Basic realm="spaces"');
      return reply
        .code(err.error === 'invalid_client' ? 401 : 400)
        .type('application/json; charset=utf-8')
        .send({ error: err.error, error_description: err.description });
    }
    if (err instanceof ApiError && err.code === 'rate_limited') {
      reply.header('retry-after', String(err.facts.retryAfterSeconds ?? 60));
      return reply
        .code(429)
        .type('application/json; charset=utf-8')
        .send({ error: 'rate_limited', error_description: err.detail });
    }
    throw err;
  }
}

function redirectTo(uri: string, values: Record<string, string | null>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(values)) if (v !== null) u.searchParams.set(k, v);
  return u.toString();
}

export function oauthRoutes(app: FastifyInstance): void {
  const services = app.services;
  const { oauth, config, rateLimits, accounts } = services;
  const issuer = () => config.publicUrl;

  const tokenSpec = (url: string, operationId: string, summary: string, description: string) => ({
    method: 'POST' as const,
    url,
    operationId,
    summary,
    description,
    tags: ['OAuth'],
    auth: null,
    body: OAuthParams,
    bodyContentTypes: [FORM, 'application/json'],
    bodyOptional: true,
  });

  addRoute(app, {
    method: 'GET',
    url: '/.well-known/oauth-authorization-server',
    operationId: 'getOAuthMetadata',
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
    tags: ['OAuth'],
    auth: null,
    responses: { 200: OAuthServerMetadata },
    handler: async (_req, reply) => {
      const base = issuer();
      return reply
        .header('cache-control', 'public, max-age=300')
        .type('application/json; charset=utf-8')
        .send({
          issuer: base,
          authorization_endpoint: `${base}/v1/auth/oauth2/authorize`,
          token_endpoint: `${base}/v1/auth/oauth2/token`,
          device_authorization_endpoint: `${base}/v1/auth/oauth2/device`,
          revocation_endpoint: `${base}/v1/auth/oauth2/revoke`,
          introspection_endpoint: `${base}/v1/auth/oauth2/introspect`,
          scopes_supported: SCOPES,
          response_types_supported: ['code'],
          response_modes_supported: ['query'],
          grant_types_supported: [
            'authorization_code',
            'refresh_token',
            'client_credentials',
            'urn:ietf:params:oauth:grant-type:device_code',
          ],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
          revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
          introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          code_challenge_methods_supported: ['S256'],
          authorization_response_iss_parameter_supported: true,
          service_documentation: `${base}/docs/guides/oauth`,
        });
    },
  });

  // ----- Authorization endpoint + consent page -----------------------------------------------------

  const consentPage = (
    reply: FastifyReply,
    request: AuthorizeRequest,
    csrf: string,
    who: string,
    publisher: string | null,
  ) =>
    sendPage(
      reply,
      200,
      `Allow ${request.client.name} to use your Spaces account?`,
      `<p>Signed in as <strong>${esc(who)}</strong>.</p>
<p><strong>${esc(request.client.name)}</strong>${
        publisher
          ? ` (registered by the team ${esc(publisher)})`
          : request.client.builtIn
            ? ' (built into Spaces)'
            : ''
      } asks for:</p>
${scopeList(request.scopes)}
<p>After you decide you go back to <code>${esc(new URL(request.redirectUri).origin)}</code>.</p>
<form method="post" action="/v1/auth/oauth2/authorize">
${hidden({
  csrf_token: csrf,
  client_id: request.client.clientId,
  redirect_uri: request.redirectUri,
  response_type: 'code',
  scope: request.scopes.join(' '),
  state: request.state,
  code_challenge: request.codeChallenge,
  code_challenge_method: 'S256',
})}
<button class="primary" type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
    );

  const authorize = async (
    req: FastifyRequest,
    reply: FastifyReply,
    q: Record<string, unknown>,
    post: boolean,
  ) => {
    const check = await oauth.codes.checkRequest(q);
    if (!check.ok && 'fatal' in check) {
      return sendPage(
        reply,
        400,
        'This sign-in request can’t be used',
        `<p class="error" role="alert">${esc(check.fatal)}</p>
<p>Go back to the app and try again, or tell its developer.</p>`,
      );
    }
    if (!check.ok) {
      return reply.redirect(
        redirectTo(check.redirect, {
          error: check.error,
          error_description: check.description,
          state: check.state,
          iss: issuer(),
        }),
        303,
      );
    }
    const p = await pageSession(services, req);
    if (!p?.userId) {
      const back = post
        ? `/v1/auth/oauth2/authorize?${new URLSearchParams(
            Object.entries(q).filter(
              (e): e is [string, string] =>
                typeof e[1] === 'string' && e[0] !== 'csrf_token' && e[0] !== 'decision',
            ),
          )}`
        : req.url;
      return signInPage(services, req, reply, back, `Sign in to continue to ${check.request.client.name}.`);
    }
    if (!post) {
      const user = await accounts.getUser(p.userId);
      return consentPage(
        reply,
        check.request,
        csrfFor(services, sessionBinding(p)),
        user?.email ?? p.userId,
        await oauth.clients.publisherName(check.request.client),
      );
    }
    if (!csrfOk(services, sessionBinding(p), q.csrf_token)) {
      return sendPage(
        reply,
        403,
        'Request expired',
        '<p class="error" role="alert">The form could not be verified (CSRF). Go back to the app and start again.</p>',
      );
    }
    const r = check.request;
    if (q.decision !== 'approve') {
      return reply.redirect(
        redirectTo(r.redirectUri, {
          error: 'access_denied',
          error_description: 'The person denied the request.',
          state: r.state,
          iss: issuer(),
        }),
        303,
      );
    }
    const code = await oauth.codes.issue(r, { id: p.userId, tenantId: p.tenantId });
    return reply.redirect(redirectTo(r.redirectUri, { code, state: r.state, iss: issuer() }), 303);
  };

  addRoute(app, {
    method: 'GET',
    url: '/v1/auth/oauth2/authorize',
    operationId: 'oauthAuthorize',
    summary: 'OAuth 2.0 authorization endpoint (authorization code + PKCE S256)',
    description:
      'Shows a sign-in form, then a consent page naming the app and its scopes; redirects back to the exact registered redirect_uri with `code`, `state` and `iss`, or `error`.',
    tags: ['OAuth'],
    auth: null,
    querystring: Type.Object({}, { additionalProperties: true }),
    responses: {
      200: 'HTML sign-in or consent page',
      303: 'Redirect to the client',
      400: 'HTML error page: a request with an unknown client or redirect_uri is never redirected',
    },
    handler: async (req, reply) => authorize(req, reply, req.query as Record<string, unknown>, false),
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/auth/oauth2/authorize',
    operationId: 'oauthAuthorizeDecision',
    summary: 'Consent form post (approve or deny)',
    description:
      'Posted by the consent page of `GET /v1/auth/oauth2/authorize` with its CSRF token and `decision` (`approve` or `deny`); redirects to the client with `code` or `error`.',
    tags: ['OAuth'],
    auth: null,
    body: OAuthParams,
    bodyContentTypes: [FORM],
    responses: { 303: 'Redirect to the client' },
    handler: async (req, reply) => authorize(req, reply, (req.body ?? {}) as Record<string, unknown>, true),
  });

  // ----- Token endpoint ------------------------------------------------------------------------------
  // These four answer in OAuth's JSON error format even when the request fails before the handler
  // (unreadable body, wrong Content-Type): an encapsulated error handler renders those too.
  app.register(async (scope) => {
    scope.setErrorHandler((error: FastifyError, req, reply) => {
      reply.header('cache-control', 'no-store');
      const status = error instanceof ApiError ? httpStatusOf(error) : (error.statusCode ?? 500);
      if (status >= 500) {
        req.log.error({ err: error }, 'oauth endpoint failed');
        return reply.code(500).send({
          error: 'server_error',
          error_description: `Something went wrong; quote request ${req.id}.`,
        });
      }
      const description =
        error instanceof ApiError ? error.detail : 'The request could not be read as OAuth parameters.';
      return reply
        .code(status === 413 || status === 415 ? status : 400)
        .send({ error: 'invalid_request', error_description: description });
    });

    addRoute(scope, {
      ...tokenSpec(
        '/v1/auth/oauth2/token',
        'oauthToken',
        'OAuth 2.0 token endpoint',
        `Grants: authorization_code (PKCE S256), refresh_token (rotating; needs offline_access), client_credentials (confidential clients), urn:ietf:params:oauth:grant-type:device_code. Client authentication: client_secret_basic, client_secret_post, or none for public clients. Errors are RFC 6749 §5.2 JSON. Lifetimes: access ${ACCESS_TOKEN_TTL_S} s, refresh ${REFRESH_TOKEN_TTL_S} s, codes ${AUTH_CODE_TTL_S} s.`,
      ),
      responses: {
        200: OAuthTokenResponse,
        400: OAuthErrorResponse,
        401: OAuthErrorResponse,
        429: OAuthErrorResponse,
      },
      handler: async (req, reply) =>
        oauthEndpoint(req, reply, rateLimits.oauthToken, async (p, basic) => {
          const grant = p.grant_type;
          if (!grant) throw new OAuthError('invalid_request', 'grant_type is required.');
          const client: OAuthClient = await oauth.clients.authenticate(basic, p);
          switch (grant) {
            case 'authorization_code':
              return oauth.codes.exchange(client, p);
            case 'refresh_token':
              return oauth.tokens.refresh(client, p);
            case 'client_credentials':
              return oauth.tokens.clientCredentials(client, p);
            case 'urn:ietf:params:oauth:grant-type:device_code':
              return oauth.device.poll(client, p);
            default:
              throw new OAuthError('unsupported_grant_type', `The grant type ${grant} is not supported.`);
          }
        }),
    });

    addRoute(scope, {
      ...tokenSpec(
        '/v1/auth/oauth2/device',
        'oauthDeviceAuthorization',
        'OAuth 2.0 device authorization (RFC 8628)',
        `Starts a device login: returns a device_code to poll the token endpoint with, and a user_code the person enters at verification_uri. Codes live ${DEVICE_CODE_TTL_S} s.`,
      ),
      responses: {
        200: OAuthDeviceResponse,
        400: OAuthErrorResponse,
        401: OAuthErrorResponse,
        429: OAuthErrorResponse,
      },
      handler: async (req, reply) =>
        oauthEndpoint(req, reply, rateLimits.oauthDevice, async (p, basic) => {
          const client = await oauth.clients.authenticate(basic, p);
          const d = await oauth.device.start(client, p);
          const uri = `${issuer()}/device`;
          return {
            device_code: d.deviceCode,
            user_code: d.userCode,
            verification_uri: uri,
            verification_uri_complete: `${uri}?user_code=${encodeURIComponent(d.userCode)}`,
            expires_in: d.expiresIn,
            interval: d.interval,
          };
        }),
    });

    addRoute(scope, {
      ...tokenSpec(
        '/v1/auth/oauth2/revoke',
        'oauthRevoke',
        'OAuth 2.0 token revocation (RFC 7009)',
        'Revokes an access or refresh token of the calling client; a refresh token takes its whole grant with it. Unknown tokens answer 200 too.',
      ),
      responses: {
        200: 'Revoked (or unknown)',
        400: OAuthErrorResponse,
        401: OAuthErrorResponse,
        429: OAuthErrorResponse,
      },
      handler: async (req, reply) =>
        oauthEndpoint(req, reply, rateLimits.oauthToken, async (p, basic) => {
          const client = await oauth.clients.authenticate(basic, p);
          if (!p.token) throw new OAuthError('invalid_request', 'token is required.');
          await oauth.tokens.revoke(client, p.token);
          return null;
        }),
    });

    addRoute(scope, {
      ...tokenSpec(
        '/v1/auth/oauth2/introspect',
        'oauthIntrospect',
        'OAuth 2.0 token introspection (RFC 7662)',
        'For confidential clients, about their own tokens; any other token is reported as `{"active": false}`.',
      ),
      responses: {
        200: OAuthIntrospection,
        400: OAuthErrorResponse,
        401: OAuthErrorResponse,
        429: OAuthErrorResponse,
      },
      handler: async (req, reply) =>
        oauthEndpoint(req, reply, rateLimits.oauthToken, async (p, basic) => {
          const client = await oauth.clients.authenticate(basic, p, { requireConfidential: true });
          if (!p.token) throw new OAuthError('invalid_request', 'token is required.');
          return oauth.tokens.introspect(client, p.token);
        }),
    });
  });

  // ----- Device verification page ------------------------------------------------------------------

  const entryForm = (value = '') => `<form method="get" action="/device">
<label for="user_code">Code shown on your device</label>
<input id="user_code" name="user_code" value="${esc(value)}" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required>
<button class="primary" type="submit">Continue</button>
</form>`;

  addRoute(app, {
    method: 'GET',
    url: '/device',
    operationId: 'devicePage',
    summary: 'Device login verification page',
    tags: ['OAuth'],
    auth: null,
    hidden: true,
    querystring: Type.Object({}, { additionalProperties: true }),
    responses: { 200: 'HTML page' },
    handler: async (req, reply) => {
      const p = await pageSession(services, req);
      const q = req.query as Record<string, unknown>;
      if (!p?.userId) {
        return signInPage(
          services,
          req,
          reply,
          safeReturnTo(req.url),
          'Sign in to connect a device to your Spaces account.',
        );
      }
      const raw = typeof q.user_code === 'string' ? q.user_code : '';
      if (!raw)
        return sendPage(
          reply,
          200,
          'Connect a device',
          `<p>Enter the code your device shows.</p>${entryForm()}`,
        );
      try {
        await rateLimits.deviceVerify.take(p.credentialId);
      } catch (err) {
        if (err instanceof ApiError) {
          reply.header('retry-after', String(err.facts.retryAfterSeconds ?? 60));
          return sendPage(
            reply,
            429,
            'Too many attempts',
            `<p class="error" role="alert">${esc(err.detail)}</p>`,
          );
        }
        throw err;
      }
      const d = await oauth.device.find(raw);
      if (!d || d.expired || d.status !== 'pending') {
        return sendPage(
          reply,
          400,
          'Connect a device',
          `<p class="error" role="alert">That code is unknown, expired or used already. Check the code on your device.</p>${entryForm(raw)}`,
        );
      }
      const user = await accounts.getUser(p.userId);
      return sendPage(
        reply,
        200,
        `Allow ${d.clientName} on your device?`,
        `<p>Signed in as <strong>${esc(user?.email ?? p.userId)}</strong>.</p>
<p>Check that your device shows the code <strong><code>${esc(d.userCode)}</code></strong>. <strong>${esc(d.clientName)}</strong> asks for:</p>
${scopeList(d.scopes)}
<form method="post" action="/device">
${hidden({ csrf_token: csrfFor(services, sessionBinding(p)), user_code: d.userCode })}
<button class="primary" type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
      );
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/device',
    operationId: 'devicePageDecision',
    summary: 'Device login decision (form post)',
    tags: ['OAuth'],
    auth: null,
    hidden: true,
    body: OAuthParams,
    bodyContentTypes: [FORM],
    responses: { 200: 'HTML page' },
    handler: async (req, reply) => {
      const p = await pageSession(services, req);
      if (!p?.userId) {
        return signInPage(
          services,
          req,
          reply,
          '/device',
          'Sign in to connect a device to your Spaces account.',
        );
      }
      const b = (req.body ?? {}) as Record<string, unknown>;
      if (!csrfOk(services, sessionBinding(p), b.csrf_token)) {
        return sendPage(
          reply,
          403,
          'Request expired',
          `<p class="error" role="alert">The form could not be verified (CSRF). Enter the code again.</p>${entryForm()}`,
        );
      }
      const approve = b.decision === 'approve';
      const ok =
        typeof b.user_code === 'string' &&
        (await oauth.device.decide(b.user_code, { id: p.userId, tenantId: p.tenantId }, approve));
      if (!ok) {
        return sendPage(
          reply,
          400,
          'Connect a device',
          `<p class="error" role="alert">That code is unknown, expired or used already.</p>${entryForm()}`,
        );
      }
      return sendPage(
        reply,
        200,
        approve ? 'Device connected' : 'Request denied',
        approve
          ? '<p>You can close this page and go back to your device.</p>'
          : '<p>The device was not given access. You can close this page.</p>',
      );
    },
  });
}
