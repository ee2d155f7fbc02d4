import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { PersonView } from '../../domain/people/service.ts';
import {
  AccessRequestListQuery,
  AccessRequestListResponse,
  AccessRequestResponse,
  ApproveRequestBody,
  InvitePersonBody,
  PersonListQuery,
  PersonListResponse,
  PersonResponse,
  PutPersonGrantsBody,
} from '../../schemas/people.ts';
import type { AccessRequestRow } from '../../store/repos/people/requests.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const PersonParams = Type.Object({
  spaceId: Type.String({ minLength: 1 }),
  personId: Type.String({ minLength: 1 }),
});
const RequestParams = Type.Object({
  spaceId: Type.String({ minLength: 1 }),
  requestId: Type.String({ minLength: 1 }),
});
const READ = { accept: ['general'] as const, scope: 'spaces:read' as const };
const WRITE = { accept: ['general'] as const, scope: 'spaces:write' as const };

function presentPerson({ person, grants }: PersonView) {
  return {
    id: person.id,
    spaceId: person.space_id,
    email: person.email,
    name: person.name,
    status: person.status as 'invited' | 'active',
    grants: grants.map((g) => ({
      id: g.id,
      role: g.role,
      paths: JSON.parse(g.paths) as string[],
      target: g.target,
    })),
    invitedAt: person.created_at,
    lastSentAt: person.last_sent_at,
    acceptedAt: person.accepted_at,
    linkExpiresAt: person.token_expires_at,
  };
}

function presentRequest(r: AccessRequestRow) {
  return {
    id: r.id,
    spaceId: r.space_id,
    email: r.email,
    name: r.name,
    message: r.message,
    path: r.path,
    status: r.status as 'pending' | 'approved' | 'denied',
    personId: r.person_id,
    createdAt: r.created_at,
    verifiedAt: r.verified_at,
    resolvedAt: r.resolved_at,
  };
}

/** People of a space (invited by e-mail, no account needed) and visitors' access requests. */
export function peopleRoutes(app: FastifyInstance): void {
  const { spaces, people, cursors } = app.services;

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/people',
    operationId: 'listSpacePeople',
    summary: 'List the people of a space',
    description: 'People invited to this space by e-mail, oldest first, each with their grants.',
    tags: ['Access'],
    auth: READ,
    params: SpaceParams,
    querystring: PersonListQuery,
    responses: { 200: PersonListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const page = await keysetPage(
        cursors,
        `people:${space.id}`,
        req.query,
        async (after, n) => (await people.list(space, after, n)).map((v) => ({ ...v, id: v.person.id })),
        (v) => presentPerson(v),
      );
      return send(reply, PersonListResponse, page);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/people',
    operationId: 'inviteSpacePerson',
    summary: 'Invite someone to a space by e-mail',
    description:
      'Makes a person with one grant (default: `viewer` of `/**` on `live`) and e-mails them a link that signs them in to this space only — no account needed. The link works for 7 days; `resend` makes a new one.',
    tags: ['Access'],
    auth: WRITE,
    params: SpaceParams,
    body: InvitePersonBody,
    responses: { 201: PersonResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const view = await people.invite(p, space, req.body);
      return send(reply, PersonResponse, { data: presentPerson(view) }, 201);
    },
  });

  addRoute(app, {
    method: 'PUT',
    url: '/v1/spaces/:spaceId/people/:personId/grants',
    operationId: 'setSpacePersonGrants',
    summary: 'Set what a person may see',
    description: 'Replaces all of the person’s grants (roles on paths and targets).',
    tags: ['Access'],
    auth: WRITE,
    params: PersonParams,
    body: PutPersonGrantsBody,
    responses: { 200: PersonResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const view = await people.setGrants(p, space, req.params.personId, req.body.grants);
      return send(reply, PersonResponse, { data: presentPerson(view) });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/people/:personId/resend',
    operationId: 'resendSpacePersonInvitation',
    summary: 'E-mail a person a new sign-in link',
    description: 'The previous link stops working; the new one works for 7 days.',
    tags: ['Access'],
    auth: WRITE,
    params: PersonParams,
    responses: { 200: PersonResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      return send(reply, PersonResponse, {
        data: presentPerson(await people.resend(p, space, req.params.personId)),
      });
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/spaces/:spaceId/people/:personId',
    operationId: 'removeSpacePerson',
    summary: 'Remove a person from a space',
    description: 'Revokes their grants and their link: their next request is refused.',
    tags: ['Access'],
    auth: WRITE,
    params: PersonParams,
    responses: { 204: 'Removed' },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      await people.remove(p, space, req.params.personId);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/requests',
    operationId: 'listAccessRequests',
    summary: 'List access requests',
    description:
      'Requests visitors made from the page that refused them, once they confirmed their address by the mailed link; newest first.',
    tags: ['Access'],
    auth: READ,
    params: SpaceParams,
    querystring: AccessRequestListQuery,
    responses: { 200: AccessRequestListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const status = req.query.status ?? null;
      const page = await keysetPage(
        cursors,
        `requests:${space.id}:${status ?? ''}`,
        req.query,
        (before, n) => people.listRequests(space, status, before, n),
        presentRequest,
      );
      return send(reply, AccessRequestListResponse, page);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/requests/:requestId/approve',
    operationId: 'approveAccessRequest',
    summary: 'Approve an access request',
    description:
      'The requester becomes a person of the space with one grant (default: `viewer` of `/**` on `live`) and is e-mailed their sign-in link.',
    tags: ['Access'],
    auth: WRITE,
    params: RequestParams,
    body: ApproveRequestBody,
    bodyOptional: true,
    responses: { 200: AccessRequestResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const r = await people.resolveRequest(p, space, req.params.requestId, {
        approve: true,
        grant: req.body ?? {},
      });
      return send(reply, AccessRequestResponse, { data: presentRequest(r) });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/requests/:requestId/deny',
    operationId: 'denyAccessRequest',
    summary: 'Deny an access request',
    description: 'Closes the request; the visitor is not e-mailed.',
    tags: ['Access'],
    auth: WRITE,
    params: RequestParams,
    responses: { 200: AccessRequestResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const r = await people.resolveRequest(p, space, req.params.requestId, { approve: false });
      return send(reply, AccessRequestResponse, { data: presentRequest(r) });
    },
  });
}
