import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HostsResolver } from '../../domain/hosts/resolve.ts';
import { can, type Role } from '../../domain/teams/roles.ts';
import { HANDOFF_TTL_MS, signSiteToken } from '../../serve/access.ts';
import { esc, pageSession, sendPage, signInPage } from '../oauth-pages.ts';
import { addRoute } from '../route.ts';

/**
 * `GET /v1/access/acquire?host=<site host>&return=<path>`: where a non-public site sends visitors.
 * A signed-in person who may see the space is handed back to the site with a short-lived signed
 * token (the site then sets its own host-only cookie); others sign in first or are told no. A URL
 * alone never grants anything.
 */
export function siteAccessRoutes(app: FastifyInstance, siteSecret: Buffer): void {
  const services = app.services;
  const { store, config, clock } = services;
  const hosts = new HostsResolver(store.repos.siteHosts, config.baseDomain);

  addRoute(app, {
    method: 'GET',
    url: '/v1/access/acquire',
    operationId: 'acquireSiteAccess',
    summary: 'Sign a visitor into a team or private site',
    description:
      'Browser flow: checks the signed-in person (page session) against the space’s access and redirects back to the site with a one-minute hand-off token.',
    tags: ['Access'],
    auth: null,
    querystring: Type.Object({
      host: Type.String({ minLength: 1, maxLength: 253 }),
      return: Type.Optional(Type.String({ maxLength: 4096 })),
    }),
    responses: {
      200: 'HTML sign-in page (nobody signed in)',
      302: 'Back to the site with a hand-off token',
      403: 'HTML page: the signed-in person may not see the site',
      404: 'HTML page: no site at that host',
    },
    handler: async (req, reply) => {
      const host = req.query.host.toLowerCase();
      const back =
        req.query.return?.startsWith('/') && !req.query.return.startsWith('//') ? req.query.return : '/';
      // Before sign-in nothing about the host is looked at: an unknown host and a private space get
      // the same page (the edge sends visitors of both here alike).
      const person = await pageSession(services, req);
      if (!person?.userId) {
        const ask = `/v1/access/request?${new URLSearchParams({ host: req.query.host.toLowerCase(), return: back })}`;
        return signInPage(
          services,
          req,
          reply,
          req.url,
          'This site may be private. Sign in to see it.',
          undefined,
          200,
          `<p>No account here? <a href="${esc(ask)}">Ask the site's owners for access</a>.</p>`,
        );
      }
      const resolved = await hosts.resolve(host);
      const space = resolved.kind === 'none' || resolved.space.deleted ? null : resolved.space;
      // Signed in but not let in: the same answer as for no site at all (tenant isolation).
      const notFound = () =>
        sendPage(
          reply,
          404,
          'Site not found',
          '<p>There is no site at that address that your account can see.</p>',
        );
      if (!space) return notFound();
      const member = space.teamId ? await store.repos.teamMembers.get(space.teamId, person.userId) : null;
      const allowed =
        space.access === 'public' ||
        (member !== null &&
          (space.access === 'team' ||
            can(member.role as Role, 'team.update') ||
            space.createdBy === person.userId));
      if (!allowed) return notFound();
      // An old name of a renamed space: hand off to its current hostname (the token is bound to it).
      const siteHost = resolved.kind === 'moved' ? resolved.hostname : host;
      const token = signSiteToken(
        siteSecret,
        'handoff',
        siteHost,
        space.id,
        person.userId,
        clock.now().getTime() + HANDOFF_TTL_MS,
      );
      const target = new URL(`${config.siteScheme}://${siteHost}${config.sitePortSuffix}/__service/access`);
      target.searchParams.set('token', token);
      target.searchParams.set('return', back);
      return reply.header('cache-control', 'no-store').redirect(target.toString(), 302);
    },
  });
}
