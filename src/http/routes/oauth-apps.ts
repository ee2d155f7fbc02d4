import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PageQuery } from '../../schemas/common.ts';
import {
  CreateOAuthAppBody,
  OAuthAppListResponse,
  OAuthAppResponse,
  OAuthAppSecretResponse,
  UpdateOAuthAppBody,
} from '../../schemas/oauth.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { presentOAuthApp } from '../presenters/oauth.ts';
import { addRoute } from '../route.ts';

const TeamParams = Type.Object({ teamId: Type.String({ minLength: 1, description: 'Team id or slug' }) });
const AppParams = Type.Object({
  teamId: Type.String({ minLength: 1 }),
  appId: Type.String({ minLength: 1 }),
});
const Page = Type.Object(PageQuery, { additionalProperties: false });

/** OAuth apps (clients) registered by a team; managed by its owners and admins. */
export function oauthAppRoutes(app: FastifyInstance): void {
  const { oauth, cursors } = app.services;

  addRoute(app, {
    method: 'POST',
    url: '/v1/teams/:teamId/oauth-apps',
    operationId: 'createOAuthApp',
    summary: 'Register an OAuth app',
    description:
      'Registers an OAuth 2.0 client for the team. Confidential apps get a client secret, shown in this response only.',
    tags: ['OAuth'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: TeamParams,
    body: CreateOAuthAppBody,
    responses: { 201: OAuthAppSecretResponse },
    handler: async (req, reply) => {
      const { app: row, secret } = await oauth.apps.create(principalOf(req), req.params.teamId, {
        ...req.body,
        redirectUris: req.body.redirectUris ?? [],
      });
      return send(
        reply,
        OAuthAppSecretResponse,
        { data: { ...presentOAuthApp(row), clientSecret: secret } },
        201,
      );
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/oauth-apps',
    operationId: 'listOAuthApps',
    summary: 'List the team’s OAuth apps',
    tags: ['OAuth'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: TeamParams,
    querystring: Page,
    responses: { 200: OAuthAppListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const page = await keysetPage(
        cursors,
        `oauth-apps:${req.params.teamId}:${p.credentialId}`,
        req.query,
        (after, n) => oauth.apps.list(p, req.params.teamId, after, n),
        presentOAuthApp,
      );
      return send(reply, OAuthAppListResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/teams/:teamId/oauth-apps/:appId',
    operationId: 'getOAuthApp',
    summary: 'Get an OAuth app',
    tags: ['OAuth'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: AppParams,
    responses: { 200: OAuthAppResponse },
    handler: async (req, reply) => {
      const row = await oauth.apps.get(principalOf(req), req.params.teamId, req.params.appId);
      return send(reply, OAuthAppResponse, { data: presentOAuthApp(row) });
    },
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/teams/:teamId/oauth-apps/:appId',
    operationId: 'updateOAuthApp',
    summary: 'Update an OAuth app',
    description:
      'Changes the name, redirect URIs or allowed scopes. Narrowing scopes narrows existing tokens on their next refresh.',
    tags: ['OAuth'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: AppParams,
    body: UpdateOAuthAppBody,
    responses: { 200: OAuthAppResponse },
    handler: async (req, reply) => {
      const row = await oauth.apps.update(principalOf(req), req.params.teamId, req.params.appId, req.body);
      return send(reply, OAuthAppResponse, { data: presentOAuthApp(row) });
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/teams/:teamId/oauth-apps/:appId',
    operationId: 'deleteOAuthApp',
    summary: 'Delete an OAuth app',
    description: 'Deletes the app and revokes every token issued to it.',
    tags: ['OAuth'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: AppParams,
    responses: { 204: 'Deleted' },
    handler: async (req, reply) => {
      await oauth.apps.delete(principalOf(req), req.params.teamId, req.params.appId);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/teams/:teamId/oauth-apps/:appId/rotate-secret',
    operationId: 'rotateOAuthAppSecret',
    summary: 'Rotate an OAuth app’s client secret',
    description: 'Issues a new secret (shown once); the old one stops working immediately.',
    tags: ['OAuth'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: AppParams,
    responses: { 200: OAuthAppSecretResponse },
    handler: async (req, reply) => {
      const { app: row, secret } = await oauth.apps.rotateSecret(
        principalOf(req),
        req.params.teamId,
        req.params.appId,
      );
      return send(reply, OAuthAppSecretResponse, { data: { ...presentOAuthApp(row), clientSecret: secret } });
    },
  });
}
