import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { isEmailAddress } from '../../domain/accounts/email.ts';
import { HostsResolver } from '../../domain/hosts/resolve.ts';
import { ApiError } from '../../errors/problem.ts';
import { esc, sendPage } from '../oauth-pages.ts';
import { addRoute } from '../route.ts';

const FORM = 'application/x-www-form-urlencoded';
export const REQUEST_PAGE_PATH = '/v1/access/request';

const RequestForm = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    email: Type.String({ maxLength: 320 }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    message: Type.Optional(Type.String({ maxLength: 1000 })),
    return: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

function form(host: string, back: string, error: string | null): string {
  return `${error ? `<p role="alert" class="error">${esc(error)}</p>` : ''}
<p>Ask the owners of <strong>${esc(host)}</strong> to let you in. We e-mail you a link to confirm your address; only then do they see your request.</p>
<form method="post" action="${REQUEST_PAGE_PATH}">
<input type="hidden" name="host" value="${esc(host)}"><input type="hidden" name="return" value="${esc(back)}">
<label for="rq-email">Your e-mail</label><input id="rq-email" name="email" type="email" autocomplete="email" required>
<label for="rq-name">Your name (optional)</label><input id="rq-name" name="name" autocomplete="name" maxlength="200">
<label for="rq-msg">Message (optional)</label><input id="rq-msg" name="message" maxlength="1000">
<button type="submit">Request access</button>
</form>`;
}

/**
 * Access requests, the visitor's half (behaviour §3.4), on the API origin where a non-public site
 * sends its visitors: a form, the answer to it, and the confirmation link. Whether the host is a
 * private space, an unknown name or a public site, the form and its answer are the same page (and the
 * request is handled after the answer is sent): asking reveals nothing about the host.
 */
export function accessRequestRoutes(app: FastifyInstance): void {
  const services = app.services;
  const { store, config, people, log } = services;
  const hosts = new HostsResolver(store.repos.siteHosts, config.baseDomain);
  const backOf = (raw: string | undefined) =>
    raw?.startsWith('/') && !raw.startsWith('//') && !raw.includes('\\') ? raw : '/';

  addRoute(app, {
    method: 'GET',
    url: REQUEST_PAGE_PATH,
    operationId: 'accessRequestPage',
    summary: 'The page where a visitor asks for access to a site',
    description:
      'HTML form (e-mail, name, message). Linked from the sign-in page a non-public site sends visitors to.',
    tags: ['Access'],
    auth: null,
    querystring: Type.Object({
      host: Type.String({ minLength: 1, maxLength: 253 }),
      return: Type.Optional(Type.String({ maxLength: 1024 })),
    }),
    responses: { 200: 'HTML form' },
    handler: async (req, reply) =>
      sendPage(
        reply,
        200,
        'Request access',
        form(req.query.host.toLowerCase(), backOf(req.query.return), null),
      ),
  });

  addRoute(app, {
    method: 'POST',
    url: REQUEST_PAGE_PATH,
    operationId: 'submitAccessRequest',
    summary: 'Ask for access to a site (form post)',
    description:
      'Always answers the same page; when the host is a non-public space and the address is not one of its people yet, a confirmation link is e-mailed. Rate-limited per client address.',
    tags: ['Access'],
    auth: null,
    body: RequestForm,
    bodyContentTypes: [FORM],
    responses: { 200: 'HTML page: check your inbox', 429: 'Too many requests from this address' },
    handler: async (req, reply) => {
      const b = req.body;
      const host = b.host.toLowerCase();
      const back = backOf(b.return);
      const email = b.email.trim().toLowerCase();
      if (!isEmailAddress(email)) {
        return sendPage(reply, 422, 'Request access', form(host, back, 'That is not an e-mail address.'));
      }
      const ip = services.clientAddresses.clientAddress(req.raw);
      try {
        await services.rateLimits.accessRequestIp.take(ip);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        const retry = err.extras.facts?.retryAfterSeconds;
        if (retry) reply.header('retry-after', String(retry));
        return sendPage(
          reply,
          429,
          'Too many requests',
          '<p>Too many requests from your address. Try again later.</p>',
        );
      }
      // Answered before anything about the host is looked at; the work happens after.
      setImmediate(() => {
        void (async () => {
          const resolved = await hosts.resolve(host);
          if (resolved.kind === 'none' || resolved.space.deleted) return;
          const space = await store.repos.spaces.byId(resolved.space.id);
          if (!space || space.access === 'public' || space.anonymous) return;
          await services.rateLimits.accessRequestAddress.take(`${space.id}|${email}`);
          await people.request(space, {
            email,
            name: b.name ?? null,
            message: b.message ?? null,
            path: back,
          });
        })().catch((err) => {
          if (!(err instanceof ApiError)) log.warn({ err }, 'access request not recorded');
        });
      });
      return sendPage(
        reply,
        200,
        'Check your inbox',
        `<p>If <strong>${esc(host)}</strong> takes requests, we have e-mailed <strong>${esc(email)}</strong> a link to confirm it. Your request reaches the site's owners once you open it.</p>`,
      );
    },
  });

  addRoute(app, {
    method: 'GET',
    url: `${REQUEST_PAGE_PATH}/confirm`,
    operationId: 'confirmAccessRequest',
    summary: 'Confirm an access request (the mailed link)',
    description: 'Proves the requester’s inbox; the request then appears to the space’s team.',
    tags: ['Access'],
    auth: null,
    querystring: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }),
    responses: { 200: 'HTML page: request sent', 404: 'HTML page: the link is wrong or expired' },
    handler: async (req, reply) => {
      const r = await people.confirmByToken(req.query.token);
      if (!r) {
        return sendPage(
          reply,
          404,
          'Link not valid',
          '<p>This link is wrong, used already or expired. Ask again from the site.</p>',
        );
      }
      return sendPage(
        reply,
        200,
        'Request sent',
        `<p>Thank you. The site's owners now see your request; when they let you in, we e-mail <strong>${esc(r.email)}</strong> a link that signs you in.</p>`,
      );
    },
  });
}
