import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { fail } from '../../errors/problem.ts';
import {
  AccountResponse,
  ApiKeyCreatedResponse,
  ApiKeyListResponse,
  ApiKeyResponse,
  CreateApiKeyBody,
  CreateUserBody,
  SessionCreated,
  SignInBody,
  SignUpBody,
  UserResponse,
} from '../../schemas/account.ts';
import { PageQuery } from '../../schemas/common.ts';
import { InvitationResponse } from '../../schemas/teams.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { presentApiKey, presentUser } from '../presenters/account.ts';
import { presentInvitation } from '../presenters/teams.ts';
import { addRoute } from '../route.ts';

const Page = Type.Object(PageQuery, { additionalProperties: false });

export function accountRoutes(app: FastifyInstance): void {
  const { accounts, teams, spaces, cursors, config, rateLimits } = app.services;

  addRoute(app, {
    method: 'POST',
    url: '/v1/account',
    operationId: 'signUp',
    summary: 'Sign up',
    description:
      'Creates an account and its personal team. Only when the server runs with `SPACES_SIGNUP=open`.',
    tags: ['Account'],
    auth: null,
    body: SignUpBody,
    responses: { 201: UserResponse },
    handler: async (req, reply) => {
      if (config.signup !== 'open')
        fail('signup_closed', 'Sign-up is closed on this server; ask its owner for an account.');
      await rateLimits.signup.take(req.ip);
      const user = await accounts.createUser({
        email: req.body.email,
        name: req.body.name,
        password: req.body.password,
      });
      return send(reply, UserResponse, { data: presentUser(user) }, 201);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/users',
    operationId: 'createUser',
    summary: 'Create a user (server owner)',
    description: 'The server owner creates accounts for people when sign-up is closed.',
    tags: ['Account'],
    auth: { accept: ['general'], personOnly: true },
    body: CreateUserBody,
    responses: { 201: UserResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const me = p.userId ? await accounts.getUser(p.userId) : undefined;
      if (me?.is_admin !== 1 || (p.kind !== 'session' && p.kind !== 'api_key')) {
        fail('forbidden', 'Only the server owner can create users.');
      }
      const user = await accounts.createUser(req.body);
      return send(reply, UserResponse, { data: presentUser(user) }, 201);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/account/sessions',
    operationId: 'signIn',
    summary: 'Sign in',
    description: 'Exchanges an e-mail address and password for a session token (`sfs_…`, 30 days).',
    tags: ['Account'],
    auth: null,
    body: SignInBody,
    responses: { 201: SessionCreated },
    handler: async (req, reply) => {
      await rateLimits.signIn.take(`${req.ip}|${req.body.email.toLowerCase()}`);
      const s = await accounts.signIn(req.body.email, req.body.password, req.headers['user-agent'] ?? null);
      return send(
        reply,
        SessionCreated,
        { data: { token: s.token, expiresAt: s.expiresAt, user: presentUser(s.user) } },
        201,
      );
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/account/sessions/current',
    operationId: 'signOut',
    summary: 'Sign out',
    description: 'Revokes the session that makes this request.',
    tags: ['Account'],
    auth: { accept: ['general'], personOnly: true },
    responses: { 204: 'Signed out' },
    handler: async (req, reply) => {
      const p = principalOf(req);
      if (p.kind !== 'session')
        fail(
          'forbidden',
          'Only a session can sign out; revoke API keys with DELETE /v1/account/api-keys/{keyId}.',
        );
      await accounts.revokeSession(p.credentialId);
      return reply.code(204).send();
    },
  });

  const whoAmI = async (
    req: Parameters<Parameters<typeof addRoute>[1]['handler']>[0],
    reply: Parameters<Parameters<typeof addRoute>[1]['handler']>[1],
  ) => {
    const p = principalOf(req);
    // A credential bound to one space acts for that space, not as its person: it shows no one.
    const user = p.userId && !p.spaceId ? await accounts.getUser(p.userId) : undefined;
    const views = await teams.listTeams(p, null, 1000);
    const invitations = user ? await teams.myInvitations(p, user.email) : [];
    return send(reply, AccountResponse, {
      data: {
        user: user ? presentUser(user) : null,
        teams: views.map((v) => ({ id: v.team.id, slug: v.team.slug, name: v.team.name, role: v.role })),
        credential: {
          kind: p.kind,
          id: p.credentialId,
          scopes: [...p.scopes],
          teamId: p.teamIds?.length === 1 ? p.teamIds[0]! : null,
          spaceId: p.spaceId,
        },
        invitations: invitations.map(presentInvitation),
      },
    });
  };

  addRoute(app, {
    method: 'GET',
    url: '/v1/account',
    operationId: 'getAccount',
    summary: 'Who am I',
    description: 'The person, their teams, pending invitations, and the credential making the request.',
    tags: ['Account'],
    auth: { accept: ['general', 'space_key'] },
    responses: { 200: AccountResponse },
    handler: whoAmI,
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/me',
    operationId: 'getMe',
    summary: 'Who am I (deprecated alias of GET /v1/account)',
    tags: ['Account'],
    auth: { accept: ['general', 'space_key'] },
    responses: { 200: AccountResponse },
    deprecated: { since: '2026-11-01T00:00:00Z', sunset: '2027-11-01T00:00:00Z' },
    handler: whoAmI,
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/account/invitations/:invitationId/accept',
    operationId: 'acceptInvitation',
    summary: 'Accept a team invitation',
    tags: ['Account'],
    auth: { accept: ['general'], personOnly: true },
    params: Type.Object({ invitationId: Type.String({ minLength: 1 }) }),
    responses: { 200: InvitationResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const user = await accounts.getUser(p.userId ?? '');
      const inv = await teams.respond(p, user?.email ?? '', req.params.invitationId, true);
      return send(reply, InvitationResponse, { data: presentInvitation(inv) });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/account/invitations/:invitationId/decline',
    operationId: 'declineInvitation',
    summary: 'Decline a team invitation',
    tags: ['Account'],
    auth: { accept: ['general'], personOnly: true },
    params: Type.Object({ invitationId: Type.String({ minLength: 1 }) }),
    responses: { 200: InvitationResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const user = await accounts.getUser(p.userId ?? '');
      const inv = await teams.respond(p, user?.email ?? '', req.params.invitationId, false);
      return send(reply, InvitationResponse, { data: presentInvitation(inv) });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/account/api-keys',
    operationId: 'createApiKey',
    summary: 'Create an API key',
    description:
      'Creates a team API key (`sfa_…`) with a preset of scopes; with `space` the key is bound to that one space. The key is in this response only; store it now.',
    tags: ['Account'],
    auth: { accept: ['general'], personOnly: true },
    body: CreateApiKeyBody,
    responses: { 201: ApiKeyCreatedResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      let teamId: string;
      const space = req.body.space ? await spaces.resolve(p, req.body.space) : null;
      if (req.body.team) {
        teamId = (await teams.authorize(p, req.body.team, 'space.manage')).team.id;
        if (space && space.team_id !== teamId) {
          fail('validation_error', `Space ${req.body.space} is not in team ${req.body.team}.`, {
            pointer: '/space',
          });
        }
      } else if (space?.team_id) teamId = (await teams.authorize(p, space.team_id, 'space.manage')).team.id;
      else {
        const [first] = await teams.listTeams(p, null, 1);
        if (!first)
          fail('team_required', 'You belong to no team; create one first or name one in `team`.', {
            pointer: '/team',
          });
        teamId = first.team.id;
      }
      const { key, token } = await accounts.createApiKey(p, {
        name: req.body.name,
        teamId,
        preset: req.body.preset ?? 'space_publisher',
        expiresAt: req.body.expiresAt ?? null,
        spaceId: space?.id ?? null,
      });
      return send(reply, ApiKeyCreatedResponse, { data: { ...presentApiKey(key), token } }, 201);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/account/api-keys',
    operationId: 'listApiKeys',
    summary: 'List your API keys',
    tags: ['Account'],
    auth: { accept: ['general'], personOnly: true },
    querystring: Page,
    responses: { 200: ApiKeyListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const page = await keysetPage(
        cursors,
        `api-keys:${p.credentialId}`,
        req.query,
        (after, n) => accounts.listApiKeys(p, after, n),
        presentApiKey,
      );
      return send(reply, ApiKeyListResponse, page);
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/account/api-keys/:keyId',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    tags: ['Account'],
    auth: { accept: ['general'], personOnly: true },
    params: Type.Object({ keyId: Type.String({ minLength: 1 }) }),
    responses: { 200: ApiKeyResponse },
    handler: async (req, reply) => {
      const key = await accounts.revokeApiKey(principalOf(req), req.params.keyId);
      return send(reply, ApiKeyResponse, { data: presentApiKey(key) });
    },
  });
}
