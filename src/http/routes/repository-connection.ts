import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { connectionDefaults, productionBranchOf } from '../../domain/builds/connections.ts';
import {
  AnalyzeRepositoryBody,
  CreateRepositoryConnectionBody,
  RepositoryAnalysisResponse,
  RepositoryConnectionResponse,
  UpdateRepositoryConnectionBody,
} from '../../schemas/builds.ts';
import type { RepositoryConnectionRow } from '../../store/repos/builds/connections.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { addRoute } from '../route.ts';

const SpaceParams = Type.Object({ spaceId: Type.String({ minLength: 1, description: 'Space id or slug' }) });
const READ = { accept: ['general', 'space_key'] as const, scope: 'spaces:read' as const };
const WRITE = { accept: ['general', 'space_key'] as const, scope: 'spaces:write' as const };
const TRIGGER = { accept: ['general', 'space_key'] as const, scope: 'builds:trigger' as const };
const URL_BASE = '/v1/spaces/:spaceId/repository-connection';

export function presentConnection(c: RepositoryConnectionRow) {
  return {
    spaceId: c.space_id,
    provider: c.provider as 'generic',
    cloneUrl: c.clone_url,
    repository: c.repository,
    hasCredential: c.credential_sealed !== null,
    defaultBranch: c.default_branch,
    productionBranch: productionBranchOf(c),
    appRoot: c.app_root,
    autoDeployProduction: c.auto_deploy_production === 1,
    autoDeployPreviews: c.auto_deploy_previews === 1,
    buildSettings: connectionDefaults(c).settings,
    createdAt: c.created_at,
    updatedAt: c.updated_at,
  };
}

/** A space's repository connection (§6, provider `generic`): where its builds come from. */
export function repositoryConnectionRoutes(app: FastifyInstance): void {
  const { spaces, repositoryConnections: connections } = app.services;

  addRoute(app, {
    method: 'GET',
    url: URL_BASE,
    operationId: 'getRepositoryConnection',
    summary: 'Get the space’s repository connection',
    description: 'The credential is never returned; `hasCredential` says whether one is stored.',
    tags: ['Builds'],
    auth: READ,
    params: SpaceParams,
    responses: { 200: RepositoryConnectionResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      return send(reply, RepositoryConnectionResponse, {
        data: presentConnection(await connections.get(space)),
      });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: URL_BASE,
    operationId: 'createRepositoryConnection',
    summary: 'Connect the space to a repository',
    description:
      'Provider `generic`: any git host by its `https://` clone URL (checked like a build’s clone: public addresses only unless `SPACES_GIT_ALLOW` allows more), with an optional HTTPS token sent as HTTP Basic and stored encrypted with the server’s secret key. Builds started without a `source` then clone it. One connection per space.',
    tags: ['Builds'],
    auth: WRITE,
    params: SpaceParams,
    body: CreateRepositoryConnectionBody,
    responses: { 201: RepositoryConnectionResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const c = await connections.create(space, req.body);
      return send(reply, RepositoryConnectionResponse, { data: presentConnection(c) }, 201);
    },
  });

  addRoute(app, {
    method: 'PATCH',
    url: URL_BASE,
    operationId: 'updateRepositoryConnection',
    summary: 'Change the space’s repository connection',
    description: 'Fields not sent are kept; `credential: null` removes the stored token.',
    tags: ['Builds'],
    auth: WRITE,
    params: SpaceParams,
    body: UpdateRepositoryConnectionBody,
    responses: { 200: RepositoryConnectionResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const c = await connections.update(space, req.body);
      return send(reply, RepositoryConnectionResponse, { data: presentConnection(c) });
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: URL_BASE,
    operationId: 'deleteRepositoryConnection',
    summary: 'Disconnect the space from its repository',
    description: 'The stored credential goes with it. Builds already made are kept.',
    tags: ['Builds'],
    auth: WRITE,
    params: SpaceParams,
    responses: { 204: 'Disconnected' },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      await connections.delete(space);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'POST',
    url: `${URL_BASE}/analyze`,
    operationId: 'analyzeRepositoryConnection',
    summary: 'Detect how the connected repository builds (and apply the best candidate)',
    description:
      'Clones the repository at `ref` (default: the production branch; shallow, with the same hardening as a build) and answers, without building, the settings a build would run with and where each comes from (space config, the repository’s `spaces.jsonc`, the connection, detection, default), and the ranked candidates: every folder that could be built (in a monorepo each app), with framework, package manager, commands, output folder, score and the reasons for it. With `apply: "best"` the top candidate is saved on the connection (`appRoot` and `buildSettings`) and `settings` show the result.',
    tags: ['Builds'],
    auth: TRIGGER,
    params: SpaceParams,
    body: AnalyzeRepositoryBody,
    bodyOptional: true,
    responses: { 200: RepositoryAnalysisResponse },
    handler: async (req, reply) => {
      const space = await spaces.resolve(principalOf(req), req.params.spaceId);
      const a = await connections.analyze(space, req.body?.ref ?? null, req.body?.apply ?? null);
      return send(reply, RepositoryAnalysisResponse, { data: a });
    },
  });
}
