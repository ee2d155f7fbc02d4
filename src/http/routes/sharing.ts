import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  CreateMachineCredentialBody,
  CreatePasswordCredentialBody,
  CreateShareLinkBody,
  CredentialListResponse,
  CredentialResponse,
  CredentialWithTokenResponse,
  RotateMachineBody,
  RotatePasswordBody,
  ShareLinkListResponse,
  ShareLinkResponse,
  UpdateShareLinkBody,
} from '../../schemas/sharing.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const LinkParams = Type.Object({
  spaceId: Type.String({ minLength: 1 }),
  linkId: Type.String({ minLength: 1 }),
});
const CredParams = Type.Object({
  spaceId: Type.String({ minLength: 1 }),
  credentialId: Type.String({ minLength: 1 }),
});
const READ = { accept: ['general'] as const, scope: 'spaces:read' as const };
const WRITE = { accept: ['general'] as const, scope: 'spaces:write' as const };

/** Share links, password and machine credentials of a space (behaviour §3.4). */
export function sharingRoutes(app: FastifyInstance): void {
  const { spaces, access } = app.services;
  const creds = access.credentials;

  addRoute(app, {
    method: 'GET',
    url: '/v1/spaces/:spaceId/share-links',
    operationId: 'listShareLinks',
    summary: 'List share links',
    description: 'Live share links with their URL (the same after edits) and their grant’s scope.',
    tags: ['Access'],
    auth: READ,
    params: SpaceParams,
    responses: { 200: ShareLinkListResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      return send(reply, ShareLinkListResponse, {
        data: await creds.listLinks(space, spaces.liveUrlOf(space)),
      });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/share-links',
    operationId: 'createShareLink',
    summary: 'Make a share link',
    description:
      'One grant (viewer or commenter, default commenter). Opening `url` serves the landing page in place, sets a host-bound visitor session cookie and redirects to the clean URL.',
    tags: ['Access'],
    auth: WRITE,
    params: SpaceParams,
    body: CreateShareLinkBody,
    responses: { 201: ShareLinkResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const link = await creds.createLink(p, space, spaces.liveUrlOf(space), req.body);
      return send(reply, ShareLinkResponse, { data: link }, 201);
    },
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/spaces/:spaceId/share-links/:linkId',
    operationId: 'updateShareLink',
    summary: 'Change a share link',
    description: 'Name, role, landing path and scope; the URL stays the same.',
    tags: ['Access'],
    auth: WRITE,
    params: LinkParams,
    body: UpdateShareLinkBody,
    responses: { 200: ShareLinkResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const link = await creds.updateLink(p, space, spaces.liveUrlOf(space), req.params.linkId, req.body);
      return send(reply, ShareLinkResponse, { data: link });
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/spaces/:spaceId/share-links/:linkId',
    operationId: 'revokeShareLink',
    summary: 'Revoke a share link',
    description: 'Immediate: the link and every session it started stop at their next request.',
    tags: ['Access'],
    auth: WRITE,
    params: LinkParams,
    responses: { 204: 'Revoked' },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      await creds.revoke(p, space, 'link', req.params.linkId);
      return reply.code(204).send();
    },
  });

  for (const kind of ['machine', 'password'] as const) {
    const Kind = kind === 'machine' ? 'Machine' : 'Password';
    const base = `/v1/spaces/:spaceId/${kind}-credentials`;
    addRoute(app, {
      method: 'GET',
      url: base,
      operationId: `list${Kind}Credentials`,
      summary: `List ${kind} credentials`,
      description: 'Secrets are never returned.',
      tags: ['Access'],
      auth: READ,
      params: SpaceParams,
      responses: { 200: CredentialListResponse },
      handler: async (req, reply) => {
        const space = await spaces.resolve(principalOf(req), req.params.spaceId);
        return send(reply, CredentialListResponse, { data: await creds.listCredentials(space, kind) });
      },
    });
    addRoute(app, {
      method: 'DELETE',
      url: `${base}/:credentialId`,
      operationId: `revoke${Kind}Credential`,
      summary: `Revoke a ${kind} credential`,
      description: 'Immediate, with its grant and the sessions it started.',
      tags: ['Access'],
      auth: WRITE,
      params: CredParams,
      responses: { 204: 'Revoked' },
      handler: async (req, reply) => {
        const p = principalOf(req);
        const space = await spaces.resolve(p, req.params.spaceId);
        await creds.revoke(p, space, kind, req.params.credentialId);
        return reply.code(204).send();
      },
    });
  }

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/machine-credentials',
    operationId: 'createMachineCredential',
    summary: 'Make a machine credential',
    description:
      'Any role. The token is shown once and stored hashed; clients send it as `X-Spaces-Access-Token` (or `Authorization: Bearer`), never in the URL: a token in the query string is refused.',
    tags: ['Access'],
    auth: WRITE,
    params: SpaceParams,
    body: CreateMachineCredentialBody,
    responses: { 201: CredentialWithTokenResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      return send(
        reply,
        CredentialWithTokenResponse,
        { data: await creds.createMachine(p, space, req.body) },
        201,
      );
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/machine-credentials/:credentialId/rotate',
    operationId: 'rotateMachineCredential',
    summary: 'Rotate a machine credential',
    description: 'A new token (shown once); the old one stops at once.',
    tags: ['Access'],
    auth: WRITE,
    params: CredParams,
    body: RotateMachineBody,
    responses: { 200: CredentialWithTokenResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const out = await creds.rotate(p, space, 'machine', req.params.credentialId);
      return send(reply, CredentialWithTokenResponse, { data: out });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/password-credentials',
    operationId: 'createPasswordCredential',
    summary: 'Make a password credential',
    description:
      'Viewer or commenter. Stored as an Argon2id hash. Visitors the grant covers get the site’s password page; wrong passwords are rate-limited per address and per credential.',
    tags: ['Access'],
    auth: WRITE,
    params: SpaceParams,
    body: CreatePasswordCredentialBody,
    responses: { 201: CredentialResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      return send(reply, CredentialResponse, { data: await creds.createPassword(p, space, req.body) }, 201);
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/spaces/:spaceId/password-credentials/:credentialId/rotate',
    operationId: 'rotatePasswordCredential',
    summary: 'Change a password',
    description: 'Sets a new password; every visitor session the old one started ends at its next request.',
    tags: ['Access'],
    auth: WRITE,
    params: CredParams,
    body: RotatePasswordBody,
    responses: { 200: CredentialResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const space = await spaces.resolve(p, req.params.spaceId);
      const out = await creds.rotate(p, space, 'password', req.params.credentialId, req.body.password);
      return send(reply, CredentialResponse, { data: out });
    },
  });
}
