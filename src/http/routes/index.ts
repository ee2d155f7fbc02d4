import type { FastifyInstance } from 'fastify';
import { accessRoutes } from './access.ts';
import { accessRequestRoutes } from './access-requests.ts';
import { accountRoutes } from './account.ts';
import { activityRoutes } from './activity.ts';
import { analyticsRoutes } from './analytics.ts';
import { buildRoutes } from './builds.ts';
import { claimRoutes } from './claim.ts';
import { cronRoutes } from './crons.ts';
import { dashboardRoutes } from './dashboard.ts';
import { databaseRoutes } from './database.ts';
import { diagnosticsRoutes } from './diagnostics.ts';
import { docsRoutes } from './docs.ts';
import { domainRoutes } from './domains.ts';
import { gitRoutes } from './git.ts';
import { homeRoutes } from './home.ts';
import { mcpRoutes } from './mcp.ts';
import { metaRoutes } from './meta.ts';
import { metricsRoutes } from './metrics.ts';
import { oauthRoutes } from './oauth.ts';
import { oauthAppRoutes } from './oauth-apps.ts';
import { pageSessionRoutes } from './page-session.ts';
import { peopleRoutes } from './people.ts';
import { publishRoutes } from './publish.ts';
import { repositoryConnectionRoutes } from './repository-connection.ts';
import { runtimeRoutes } from './runtime.ts';
import { sharingRoutes } from './sharing.ts';
import { spaceRoutes } from './spaces.ts';
import { storageRoutes } from './storage.ts';
import { tagRoutes } from './tags.ts';
import { teamRoutes } from './teams.ts';
import { thumbnailRoutes } from './thumbnails.ts';
import { variableRoutes } from './variables.ts';
import { versionRoutes } from './versions.ts';
import { visitorTokenRoutes } from './visitor-tokens.ts';
import { webhookRoutes } from './webhooks.ts';

/** Route modules, one per area, each registering its routes through `addRoute`. */
export const routeAreas: ReadonlyArray<(app: FastifyInstance) => void> = [
  metaRoutes,
  metricsRoutes,
  homeRoutes,
  dashboardRoutes,
  accountRoutes,
  teamRoutes,
  spaceRoutes,
  claimRoutes,
  versionRoutes,
  publishRoutes,
  variableRoutes,
  buildRoutes,
  repositoryConnectionRoutes,
  activityRoutes,
  gitRoutes,
  domainRoutes,
  webhookRoutes,
  accessRoutes,
  sharingRoutes,
  diagnosticsRoutes,
  analyticsRoutes,
  thumbnailRoutes,
  runtimeRoutes,
  cronRoutes,
  storageRoutes,
  databaseRoutes,
  visitorTokenRoutes,
  peopleRoutes,
  accessRequestRoutes,
  // Last: the API reference pages are generated from every route registered before.
  oauthAppRoutes,
  oauthRoutes,
  pageSessionRoutes,
  tagRoutes,
  mcpRoutes,
  docsRoutes,
];
