import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cliLoginCommand } from '../../config.ts';
import type { Principal } from '../../domain/auth/principal.ts';
import { prefers } from '../../domain/docs/render.ts';
import { ServiceIndexResponse } from '../../schemas/home.ts';
import { csrfFor, esc, hidden, pageSession, sendPage, sessionBinding, signInForm } from '../oauth-pages.ts';
import { API_VERSION } from '../openapi.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const ABOUT =
  'Spaces is a self-hostable publishing service: publish immutable versions of sites through its HTTP API or the `spaces` CLI, each site on its own hostname, and roll back by moving a channel.';

/**
 * `GET /` on the API host: the address the first start prints. A browser gets a page saying what the
 * server is, with a sign-in form (the same page session the other HTML flows use) and, once signed
 * in, the next steps; a program gets JSON with links. Until the dashboard exists this is the front door.
 */
export function homeRoutes(app: FastifyInstance): void {
  const services = app.services;
  const { config, accounts, teams } = services;

  const links = () => ({
    openapi: `${config.publicUrl}/v1/openapi.json`,
    docs: `${config.publicUrl}/docs`,
    docsIndex: `${config.publicUrl}/v1/docs`,
    llms: `${config.publicUrl}/llms.txt`,
    signIn: `${config.publicUrl}/v1/account/sessions`,
    account: `${config.publicUrl}/v1/account`,
    publish: `${config.publicUrl}/v1/publish`,
  });

  const reading = `<h2>Read on</h2>
<ul>
<li><a href="/docs/quickstart">Quickstart</a>: a first site in five minutes</li>
<li><a href="/docs">Documentation</a>, with the API reference</li>
<li><a href="/v1/openapi.json">OpenAPI document</a> of the API</li>
</ul>`;

  const signedOut = (req: FastifyRequest, reply: FastifyReply) =>
    sendPage(
      reply,
      200,
      'Spaces',
      `<p>${esc(ABOUT)}</p>
<h2>Sign in</h2>
${signInForm(services, req, reply, '/')}
${reading}`,
    );

  const signedIn = async (p: Principal, reply: FastifyReply) => {
    const user = await accounts.getUser(p.userId!);
    const views = await teams.listTeams(p, null, 100);
    const teamList = views
      .map(
        (v) =>
          `<li><strong>${esc(v.team.name)}</strong> (<code>${esc(v.team.slug)}</code>, ${esc(v.memberRole)}): new sites start <code>${esc(v.team.default_space_access)}</code></li>`,
      )
      .join('\n');
    return sendPage(
      reply,
      200,
      'Spaces',
      `<p>Signed in as <strong>${esc(user?.email ?? p.userId!)}</strong>.</p>
<h2>Your teams</h2>
<ul>
${teamList || '<li>None yet.</li>'}
</ul>
<h2>Next steps</h2>
<ol>
<li>Install the CLI from the clone of this server: <code>npm link</code> (once), then <code>${esc(cliLoginCommand(config.publicUrl))}</code> and approve it here.</li>
<li>Publish a folder: <code>spaces publish ./site</code>. It prints the site’s address.</li>
<li>New sites start with their team’s default access (<code>team</code>: members only, after signing in). For public sites: <code>spaces teams set-default-access public</code>, or <code>PATCH /v1/teams/{teamId}</code> with <code>{"defaultAccess":"public"}</code>.</li>
<li>For scripts and CI: an API key for one team, <code>POST /v1/account/api-keys</code> (see <a href="/docs/teams-and-api-keys">Teams and API keys</a>).</li>
</ol>
${reading}
<form method="post" action="/v1/auth/oauth2/signout">
${hidden({ csrf_token: csrfFor(services, sessionBinding(p)) })}
<button type="submit">Sign out</button>
</form>`,
    );
  };

  addRoute(app, {
    method: 'GET',
    url: '/',
    operationId: 'home',
    summary: 'What this server is, with links (JSON); a sign-in page for browsers',
    description:
      'Content negotiation on `Accept`: clients that rank `text/html` above `application/json` (browsers) get an HTML page with a sign-in form, and once signed in the next steps; everyone else gets this JSON with links to the OpenAPI document, the docs and the main entry points.',
    tags: ['Meta'],
    auth: null,
    responses: { 200: ServiceIndexResponse },
    handler: async (req, reply) => {
      reply.header('vary', 'Accept, Cookie');
      if (!prefers(req.headers.accept, 'text/html', 'application/json')) {
        return send(reply, ServiceIndexResponse, {
          data: { name: 'Spaces', description: ABOUT, apiVersion: API_VERSION, links: links() },
        });
      }
      const p = await pageSession(services, req);
      return p?.userId ? signedIn(p, reply) : signedOut(req, reply);
    },
  });
}
