import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Role } from '../../domain/teams/roles.ts';
import { PageQuery } from '../../schemas/common.ts';
import {
  CreateInvitationBody,
  CreateTeamBody,
  InvitationListResponse,
  InvitationResponse,
  MemberListResponse,
  MemberResponse,
  TeamCreateResponse,
  TeamDetailResponse,
  TeamListResponse,
  UpdateMemberBody,
  UpdateTeamBody,
} from '../../schemas/teams.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import {
  presentInvitation,
  presentTeamCreated,
  presentTeamDetail,
  presentTeamListItem,
} from '../presenters/teams.ts';
import { addRoute } from '../route.ts';

const TeamParams = Type.Object({ teamId: Type.String({ minLength: 1, description: 'Team id or slug' }) });
const MemberParams = Type.Object({
  teamId: Type.String({ minLength: 1 }),
  userId: Type.String({ minLength: 1 }),
});
const InvitationParams = Type.Object({
  teamId: Type.String({ minLength: 1 }),
  invitationId: Type.String({ minLength: 1 }),
});
const Page = Type.Object(PageQuery, { additionalProperties: false });

export function teamRoutes(app: FastifyInstance): void {
  const { teams, cursors } = app.services;

  addRoute(app, {
    method: 'POST',
    url: '/v1/teams',
    operationId: 'createTeam',
    summary: 'Create a team',
    description: 'Creates a team in the main tenant, owned by the credential’s user.',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:create' },
    body: CreateTeamBody,
    responses: { 201: TeamCreateResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const team = await teams.createTeam(p, req.body);
      return send(
        reply,
        TeamCreateResponse,
        {
          data: presentTeamCreated({
            team,
            role: p.kind === 'session' ? 'owner' : 'member',
            memberRole: 'owner',
          }),
        },
        201,
      );
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams',
    operationId: 'listTeams',
    summary: 'List teams',
    description: 'The teams the credential can act for, newest first.',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:read' },
    querystring: Page,
    responses: { 200: TeamListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const page = await keysetPage(
        cursors,
        `teams:${p.credentialId}`,
        req.query,
        (after, n) => teams.listTeams(p, after, n).then((vs) => vs.map((v) => ({ ...v, id: v.team.id }))),
        (v) => presentTeamListItem(v),
      );
      return send(reply, TeamListResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId',
    operationId: 'getTeam',
    summary: 'Get a team',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: TeamParams,
    responses: { 200: TeamDetailResponse },
    handler: async (req, reply) => {
      const view = await teams.resolve(principalOf(req), req.params.teamId);
      return send(reply, TeamDetailResponse, { data: presentTeamDetail(view) });
    },
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/teams/:teamId',
    operationId: 'updateTeam',
    summary: 'Update a team',
    description:
      'Owners and admins change the name, slug, logo, metadata, default data location or `defaultAccess` (the access new spaces start with: `private`, `team` or `public`).',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: TeamParams,
    body: UpdateTeamBody,
    responses: { 200: TeamDetailResponse },
    handler: async (req, reply) => {
      const view = await teams.updateTeam(principalOf(req), req.params.teamId, req.body);
      return send(reply, TeamDetailResponse, { data: presentTeamDetail(view) });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/members',
    operationId: 'listTeamMembers',
    summary: 'List a team’s members',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: TeamParams,
    querystring: Page,
    responses: { 200: MemberListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const page = await keysetPage(
        cursors,
        `members:${req.params.teamId}`,
        req.query,
        (after, n) => teams.listMembers(p, req.params.teamId, after, n),
        (m: Awaited<ReturnType<typeof teams.listMembers>>[number]) => ({
          userId: m.user_id,
          email: m.email,
          name: m.name,
          role: m.role as Role,
          createdAt: m.created_at,
          updatedAt: m.updated_at,
        }),
      );
      return send(reply, MemberListResponse, page);
    },
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/teams/:teamId/members/:userId',
    operationId: 'updateTeamMember',
    summary: 'Change a member’s role',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: MemberParams,
    body: UpdateMemberBody,
    responses: { 200: MemberResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      await teams.setRole(p, req.params.teamId, req.params.userId, req.body.role);
      const [m] = (await teams.listMembers(p, req.params.teamId, null, 1000)).filter(
        (x) => x.user_id === req.params.userId,
      );
      return send(reply, MemberResponse, {
        data: {
          userId: m!.user_id,
          email: m!.email,
          name: m!.name,
          role: m!.role as Role,
          createdAt: m!.created_at,
          updatedAt: m!.updated_at,
        },
      });
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/teams/:teamId/members/:userId',
    operationId: 'removeTeamMember',
    summary: 'Remove a member (or leave the team)',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: MemberParams,
    responses: { 204: 'Removed' },
    handler: async (req, reply) => {
      await teams.removeMember(principalOf(req), req.params.teamId, req.params.userId);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/teams/:teamId/invitations',
    operationId: 'inviteTeamMember',
    summary: 'Invite someone by e-mail',
    description:
      'The invitee accepts with `POST /v1/account/invitations/{invitationId}/accept` once signed in.',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: TeamParams,
    body: CreateInvitationBody,
    responses: { 201: InvitationResponse },
    handler: async (req, reply) => {
      const inv = await teams.invite(principalOf(req), req.params.teamId, {
        email: req.body.email,
        role: req.body.role ?? 'member',
      });
      return send(reply, InvitationResponse, { data: presentInvitation(inv) }, 201);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/invitations',
    operationId: 'listTeamInvitations',
    summary: 'List a team’s invitations',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: TeamParams,
    querystring: Page,
    responses: { 200: InvitationListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const page = await keysetPage(
        cursors,
        `invitations:${req.params.teamId}`,
        req.query,
        (after, n) => teams.listInvitations(p, req.params.teamId, after, n),
        presentInvitation,
      );
      return send(reply, InvitationListResponse, page);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/teams/:teamId/invitations/:invitationId/resend',
    operationId: 'resendTeamInvitation',
    summary: 'E-mail a pending invitation again',
    description:
      'Queues the invitation e-mail again (see `SPACES_MAIL`) and moves its expiry a week from now. Answered or canceled invitations are refused with `invitation_not_pending`.',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: InvitationParams,
    responses: { 200: InvitationResponse },
    handler: async (req, reply) => {
      const inv = await teams.resendInvitation(principalOf(req), req.params.teamId, req.params.invitationId);
      return send(reply, InvitationResponse, { data: presentInvitation(inv) });
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/teams/:teamId/invitations/:invitationId',
    operationId: 'cancelTeamInvitation',
    summary: 'Cancel a pending invitation',
    tags: ['Teams'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: InvitationParams,
    responses: { 200: InvitationResponse },
    handler: async (req, reply) => {
      const inv = await teams.cancelInvitation(principalOf(req), req.params.teamId, req.params.invitationId);
      return send(reply, InvitationResponse, { data: presentInvitation(inv) });
    },
  });
}
