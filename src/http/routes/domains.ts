import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PageQuery } from '../../schemas/common.ts';
import {
  CreateDomainBody,
  DomainDiagnosticsResponse,
  DomainListResponse,
  DomainPreflightBody,
  DomainPreflightResponse,
  DomainResponse,
  SpaceDomainListResponse,
  TeamDomainSettingsResponse,
  UpdateDomainBody,
  UpdateTeamDomainSettingsBody,
} from '../../schemas/domains.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { presentDomain } from '../presenters/domains.ts';
import { addRoute } from '../route.ts';

const DomainParams = Type.Object({
  domainId: Type.String({ minLength: 1, description: 'Domain id (`dom_…`)' }),
});
const SpaceDomainParams = Type.Object({
  spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }),
  domainId: Type.String({ minLength: 1, description: 'Domain id (`dom_…`)' }),
});
const TeamParams = Type.Object({ teamId: Type.String({ minLength: 1, description: 'Team id or slug' }) });
const TeamDomainParams = Type.Object({
  teamId: Type.String({ minLength: 1, description: 'Team id or slug' }),
  domainId: Type.String({ minLength: 1, description: 'Domain id (`dom_…`)' }),
});
const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const ListQuery = Type.Object(
  {
    ...PageQuery,
    team: Type.Optional(Type.String({ minLength: 1, description: 'Only this team’s domains' })),
  },
  { additionalProperties: false },
);

/** Custom domains: a team's inventory, binding to spaces, DNS verification. */
export function domainRoutes(app: FastifyInstance): void {
  const { domains, cursors } = app.services;

  addRoute(app, {
    method: 'POST',
    url: '/v1/domains',
    operationId: 'createDomain',
    summary: 'Add a custom domain',
    description:
      'Adds a hostname to a team’s domain inventory, optionally bound to one of its spaces, and answers the DNS records to create: a TXT record at `_spaces-challenge.<host>` proves control, a CNAME (or A/AAAA for an apex) sends visitors here. Checks start at once and back off; `POST /v1/domains/{domainId}/verify` checks now.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:write' },
    body: CreateDomainBody,
    responses: { 201: DomainResponse },
    handler: async (req, reply) =>
      send(
        reply,
        DomainResponse,
        { data: presentDomain(await domains.create(principalOf(req), req.body)) },
        201,
      ),
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/domains',
    operationId: 'listDomains',
    summary: 'List custom domains',
    description: 'The domains of every team the credential reaches (or of `team`), newest first.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:read' },
    querystring: ListQuery,
    responses: { 200: DomainListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const team = req.query.team;
      const page = await keysetPage(
        cursors,
        `domains:${team ?? ''}`,
        req.query,
        (after, n) => domains.list(p, team, after, n),
        async (row) => presentDomain(await domains.view(row)),
      );
      return send(reply, DomainListResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/domains/:domainId',
    operationId: 'getDomain',
    summary: 'Get a custom domain',
    description: 'The domain, its status and the DNS records it needs with what the last check saw.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:read' },
    params: DomainParams,
    responses: { 200: DomainResponse },
    handler: async (req, reply) =>
      send(reply, DomainResponse, {
        data: presentDomain(await domains.get(principalOf(req), req.params.domainId)),
      }),
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/domains/:domainId',
    operationId: 'updateDomain',
    summary: 'Bind, unbind or change a custom domain',
    description:
      '`spaceId` binds the domain to a space of its team (null unbinds); `role` and `redirect` make it serve the space or redirect to another host.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:write' },
    params: DomainParams,
    body: UpdateDomainBody,
    responses: { 200: DomainResponse },
    handler: async (req, reply) =>
      send(reply, DomainResponse, {
        data: presentDomain(await domains.update(principalOf(req), req.params.domainId, req.body)),
      }),
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/domains/:domainId',
    operationId: 'deleteDomain',
    summary: 'Delete a custom domain from the inventory',
    description:
      'Only an unbound domain can be deleted (`domain_bound` otherwise). DNS records are left alone.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:write' },
    params: DomainParams,
    responses: { 204: 'Deleted' },
    handler: async (req, reply) => {
      await domains.delete(principalOf(req), req.params.domainId);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/domains/:domainId/verify',
    operationId: 'verifyDomain',
    summary: 'Check a custom domain’s DNS now',
    description:
      'Looks up the ownership and routing records now and answers the domain with its new status and what DNS holds. A domain another team has verified, whose record is still published, is `domain_in_use`.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:write' },
    params: DomainParams,
    responses: { 200: DomainResponse },
    handler: async (req, reply) =>
      send(reply, DomainResponse, {
        data: presentDomain(await domains.verify(principalOf(req), req.params.domainId)),
      }),
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/domains',
    operationId: 'listSpaceDomains',
    summary: 'List the domains bound to a space',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:read' },
    params: SpaceParams,
    responses: { 200: SpaceDomainListResponse },
    handler: async (req, reply) => {
      const views = await domains.listForSpace(principalOf(req), req.params.spaceId);
      return send(reply, SpaceDomainListResponse, { data: views.map(presentDomain) });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/domains/:domainId/diagnostics',
    operationId: 'getSpaceDomainDiagnostics',
    summary: 'What a bound domain still waits for',
    description:
      'The domain with what the last DNS check saw and its certificate, whether it is ready to serve, and what to fix first.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:read' },
    params: SpaceDomainParams,
    responses: { 200: DomainDiagnosticsResponse },
    handler: async (req, reply) => {
      const d = await domains.diagnostics(principalOf(req), req.params.spaceId, req.params.domainId);
      return send(reply, DomainDiagnosticsResponse, {
        data: { domain: presentDomain(d.view), serving: d.serving, problems: d.problems },
      });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/domains/:domainId/ssl/retry',
    operationId: 'retrySpaceDomainCertificate',
    summary: 'Ask for the domain’s certificate again now',
    description:
      'Cuts a failed certificate order’s back-off short: the certificate job tries again within a minute. The domain must be verified (`verification_required`).',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:write' },
    params: SpaceDomainParams,
    responses: { 202: DomainResponse },
    handler: async (req, reply) => {
      const v = await domains.retryCertificate(principalOf(req), req.params.spaceId, req.params.domainId);
      return send(reply, DomainResponse, { data: presentDomain(v) }, 202);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/teams/:teamId/domains/preflight',
    operationId: 'preflightTeamDomain',
    summary: 'Check a hostname before adding it',
    description:
      'Answers how the hostname would be stored and which DNS records it would need, whether the team already has it, or the problem adding it would answer (`invalid_domain_name`, `domain_reserved_suffix`, …). Changes nothing.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:read' },
    params: TeamParams,
    body: DomainPreflightBody,
    responses: { 200: DomainPreflightResponse },
    handler: async (req, reply) => {
      const r = await domains.preflight(principalOf(req), req.params.teamId, req.body.hostname);
      return send(reply, DomainPreflightResponse, {
        data: {
          hostname: r.name.unicode,
          asciiHostname: r.name.ascii,
          apex: r.name.apex,
          wildcard: r.name.wildcard,
          available: r.existingId === null,
          existingId: r.existingId,
          records: r.records.map((x) => ({
            purpose: x.purpose,
            type: x.type,
            name: x.name,
            value: x.value,
            ...(x.note ? { note: x.note } : {}),
          })),
        },
      });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/domain-settings',
    operationId: 'getTeamDomainSettings',
    summary: 'Get a team’s domain settings',
    description:
      'Whether the team may add wildcard domains (`wildcardEnabled`, off by default) and whether this server can serve them (`wildcardsSupported`).',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:read' },
    params: TeamParams,
    responses: { 200: TeamDomainSettingsResponse },
    handler: async (req, reply) =>
      send(reply, TeamDomainSettingsResponse, {
        data: await domains.teamSettings(principalOf(req), req.params.teamId),
      }),
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/teams/:teamId/domain-settings',
    operationId: 'updateTeamDomainSettings',
    summary: 'Change a team’s domain settings',
    description:
      'Owners and admins turn wildcard domains (`*.example.com`) on or off for the team. Turning them off refuses new wildcards; existing ones stay.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:write' },
    params: TeamParams,
    body: UpdateTeamDomainSettingsBody,
    responses: { 200: TeamDomainSettingsResponse },
    handler: async (req, reply) =>
      send(reply, TeamDomainSettingsResponse, {
        data: await domains.updateTeamSettings(principalOf(req), req.params.teamId, req.body),
      }),
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/teams/:teamId/domains/:domainId/check',
    operationId: 'checkTeamDomain',
    summary: 'Queue a DNS check of a domain',
    description:
      'The check job looks at the domain’s records within a minute (use `POST /v1/domains/{domainId}/verify` to check and wait). A domain whose verification failed is pending again.',
    tags: ['Domains'],
    auth: { accept: ['general'], scope: 'domains:write' },
    params: TeamDomainParams,
    responses: { 202: DomainResponse },
    handler: async (req, reply) => {
      const v = await domains.queueCheck(principalOf(req), req.params.teamId, req.params.domainId);
      return send(reply, DomainResponse, { data: presentDomain(v) }, 202);
    },
  });
}
