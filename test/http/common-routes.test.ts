/**
 * The checks every authenticated operation owes, run over the server's own OpenAPI document (like
 * unkey's `runCommonRouteTests`), so a new route is covered the day it is added:
 *   - no credential → 401 problem with a Bearer challenge;
 *   - a person of another team → 404 on the team's and space's resources (nothing leaks, not even
 *     that the id exists);
 *   - a credential without the operation's scope → 403 naming the scope.
 * Path parameters are real (a team, a member, an invitation, a space with a published version, a
 * variable, an operation, an OAuth app, a tag version and release, an API key), so a 404 proves the
 * team boundary rather than a missing id. The boundary is in the queries, so it runs on both databases.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ALL_API_SCOPES } from '../../src/domain/auth/scopes.ts';
import { createUser, describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { oauthPost } from '../oauth/helpers.ts';
import { publishViaVersions } from '../publishing/helpers.ts';

interface Operation {
  method: string;
  path: string;
  operationId: string;
  scope: string | null;
  /** No `{}` entry in `security`: a request without a credential is refused. */
  required: boolean;
  /** Acting for a person or team (`bearer`/`oauth2`), not only with a space key. */
  general: boolean;
  params: string[];
  hasBody: boolean;
}

/**
 * Operations the foreign-team check does not apply to, and why. Everything else with a path
 * parameter names a team's or space's resource and must answer 404 to a stranger.
 */
const NOT_TEAM_RESOURCES: Record<string, string> = {
  getAccount: "the caller's own account",
  getMe: "the caller's own account",
  signOut: "the caller's own session",
  deleteBrowserSession: "the caller's own session (the dashboard's sign-out)",
  listApiKeys: "the caller's own keys",
  createApiKey: 'creates a key for the caller (the team in the body is checked by teams tests)',
  createUser: 'an instance-owner operation, not a team resource (refused with 403 to others)',
  listTeams: "lists the caller's own teams",
  createTeam: 'creates a team for the caller',
  listSpaces: "lists the caller's own spaces",
  createSpace: "creates a space in the caller's team",
  claimSpace: 'the space is named by the space key in the body, not by a path id',
  getClaimStatus: 'space-key only: the key names its own space',
  visitClaim: 'space-key only: the key names its own space',
  exchangeClaimedSpaceKey: 'space-key only: the key names its own space',
  rotateClaimKey: 'space-key only: the key names its own space',
  createDomain: "adds a domain to the caller's team (a team in the body is checked by the domains tests)",
  listDomains: "lists the domains of the caller's own teams",
  createWebhook: "adds a webhook to the caller's team (a team in the body is checked by the webhooks tests)",
  listWebhooks: "lists the webhooks of the caller's own teams",
  listActivity: "the events of the caller's own teams (a stranger's are never among them: test/events)",
  acceptInvitation:
    'addressed to an e-mail, not a team: another person gets invitation_email_mismatch (403), a documented code',
  declineInvitation:
    'addressed to an e-mail, not a team: another person gets invitation_email_mismatch (403), a documented code',
};

/** Query strings an operation needs to pass validation; `{name}` takes a path fixture. */
const QUERIES: Record<string, string> = {
  diffVersions: 'against={versionId}',
  // Streams end once caught up instead of following, so a read returns.
  streamTeamEvents: 'follow=false',
  streamSpaceEvents: 'follow=false',
  checkGrant: 'url=%2F',
};

/** Request bodies (and headers) valid enough to reach the handler, where the team boundary is. */
const REQUESTS: Record<string, { body?: unknown; headers?: Record<string, string>; raw?: Buffer }> = {
  // publish (filled in beforeAll): a multipart one-call publish into the team's space.
  updateTeam: { body: { name: 'Renamed' } },
  migrateSpaceDatabase: { body: { migrations: [{ name: '0002_more.sql', sql: 'CREATE TABLE more (x)' }] } },
  importSpaceDatabase: {
    body: {
      format: 'spaces.db-export',
      version: 1,
      exportedAt: '2026-01-01T00:00:00Z',
      schema: [],
      tables: [],
      next: null,
    },
  },
  updateTeamMember: { body: { role: 'member' } },
  inviteTeamMember: { body: { email: 'stranger-invite@example.test' } },
  updateSpace: { body: { title: 'Renamed' } },
  renameSpace: { body: { slug: 'stolen-name' } },
  promoteVersion: { body: { channel: 'live' } },
  createVersion: {
    body: { files: [{ path: 'index.html', sha256: 'a'.repeat(64), size: 1 }] },
  },
  uploadBatch: { raw: Buffer.alloc(1024), headers: { 'content-type': 'application/x-tar' } },
  putVariable: { body: { value: 'v' } },
  createBuild: { body: { source: { type: 'upload' } } },
  createRepositoryConnection: { body: { cloneUrl: 'https://93.184.216.34/stolen.git' } },
  updateRepositoryConnection: { body: { productionBranch: 'stolen' } },
  analyzeRepositoryConnection: { body: {} },
  uploadBuildSource: { raw: Buffer.alloc(16), headers: { 'content-type': 'application/gzip' } },
  createDomain: { body: { hostname: 'stolen.example.test' } },
  updateDomain: { body: { spaceId: null } },
  createWebhook: { body: { url: 'https://93.184.216.34/stolen' } },
  inviteSpacePerson: { body: { email: 'stolen-person@example.test' } },
  setSpacePersonGrants: { body: { grants: [] } },
  approveAccessRequest: { body: {} },
  updateWebhook: { body: { description: 'stolen' } },
  rotateWebhookSecret: { body: {} },
  createGrant: { body: { audience: { type: 'public' }, paths: ['/stolen/**'] } },
  putGrant: { body: { audience: { type: 'public' }, paths: ['/stolen/**'] } },
  createShareLink: { body: {} },
  updateShareLink: { body: { name: 'stolen' } },
  createMachineCredential: { body: {} },
  rotateMachineCredential: { body: {} },
  createPasswordCredential: { body: { password: 'stolen-password' } },
  rotatePasswordCredential: { body: { password: 'stolen-password' } },
  preflightTeamDomain: { body: { hostname: 'preflight.example.test' } },
  updateTeamDomainSettings: { body: { wildcardEnabled: true } },
  createOAuthApp: {
    body: {
      name: 'Stolen',
      type: 'confidential',
      redirectUris: ['https://x.example/cb'],
      scopes: ['teams:read'],
    },
  },
  updateOAuthApp: { body: { name: 'Stolen' } },
  createTeamTagVersion: { body: {} },
  replaceTeamTagGraph: { body: { graph: {} }, headers: { 'if-match': '"1"' } },
  publishTeamTagVersion: { body: {} },
};

const SITE = { 'index.html': '<!doctype html><h1>common routes</h1>' };
const VARIABLE = 'COMMON_ROUTES';

describeEachDb('common route checks over every operation of /v1/openapi.json', (db) => {
  let t: TestServer;
  let operations: Operation[];
  let stranger: string;
  let ownerToken: string;
  /** A client-credentials token for the owner's team holding every scope but the key's. */
  const withoutScope = new Map<string, string>();
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // Domain checks ask a port where nothing answers: no lookup leaves the machine.
    t = await startServer({ db, env: { SPACES_DNS_SERVERS: '127.0.0.1:9' } });
    const doc = (await t.api('GET', '/v1/openapi.json')).body;
    operations = [];
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (typeof op !== 'object' || !op.operationId) continue;
        const security: Record<string, string[]>[] = op.security ?? [];
        if (security.length === 0) continue;
        operations.push({
          method: method.toUpperCase(),
          path,
          operationId: op.operationId,
          scope: op['x-required-scope'] ?? null,
          required: !security.some((s) => Object.keys(s).length === 0),
          general: security.some((s) => 'bearer' in s),
          params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
          hasBody: op.requestBody !== undefined,
        });
      }
    }

    const owner = await createUser(t, 'common-owner');
    ownerToken = owner.token;
    const member = await createUser(t, 'common-member');
    stranger = (await createUser(t, 'common-stranger')).token;
    const ok = async (method: string, url: string, body?: unknown, headers?: Record<string, string>) => {
      const res = await t.api(method, url, { token: owner.token, body, headers });
      if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
      return res.body?.data;
    };
    const team = owner.teamId;
    ids.teamId = team;

    const invited = await ok('POST', `/v1/teams/${team}/invitations`, {
      email: member.email,
      role: 'member',
    });
    await t.api('POST', `/v1/account/invitations/${invited.id}/accept`, { token: member.token });
    ids.userId = member.userId;
    ids.invitationId = (
      await ok('POST', `/v1/teams/${team}/invitations`, { email: 'pending@example.test' })
    ).id;

    const space = (await ok('POST', '/v1/spaces', { teamId: team, slug: 'common-routes' })).space;
    ids.spaceId = space.id;
    const published = await publishViaVersions(t, space.id, SITE, { token: owner.token });
    ids.versionId = published.created.version.id;
    // A thumbnail as the thumbnails job records one (test/thumbnails renders real ones in Chromium).
    // The publish queued that job: let it run first, or its "skipped" row could land after this one.
    await t.server.services.jobs.drain();
    await t.server.services.jobs.idle();
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const pngSha = createHash('sha256').update(png).digest('hex');
    await t.server.services.blobs.put(pngSha, png.length, Readable.from([png]));
    await t.server.services.store.repos.spaceThumbnails.put({
      space_id: space.id,
      version_id: ids.versionId,
      sha256: pngSha,
      size: png.length,
      content_type: 'image/png',
      last_error: null,
      rendered_at: new Date().toISOString(),
    });
    // A functions runtime as finalize records one (test/runtime bundles and runs real ones).
    await t.server.services.store.repos.versionRuntimes.put({
      version_id: ids.versionId,
      space_id: space.id,
      kind: 'functions',
      entry: 'handler.js',
      entry_kind: 'handler',
      bundle_sha256: pngSha,
      bundle_size: png.length,
      compatibility_date: '2025-09-01',
      capabilities: '[]',
      routes: '["/*"]',
      created_at: new Date().toISOString(),
    });
    // Its database has a table (the one-table export reads it).
    await ok('POST', `/v1/spaces/${space.id}/db/migrate`, {
      migrations: [{ name: '0001_notes.sql', sql: 'CREATE TABLE notes (body TEXT)' }],
    });
    await ok('PUT', `/v1/spaces/${space.id}/variables/${VARIABLE}`, { value: 'x' });
    ids.buildId = (await ok('POST', `/v1/spaces/${space.id}/builds`, { source: { type: 'upload' } })).id;
    // A public address by IP (nothing is fetched: the URL is only checked).
    await ok('POST', `/v1/spaces/${space.id}/repository-connection`, {
      cloneUrl: 'https://93.184.216.34/r.git',
    });
    // A deleted and restored space leaves two operations behind.
    const doomed = (await ok('POST', '/v1/spaces', { teamId: team, slug: 'common-routes-op' })).space;
    await ok('DELETE', `/v1/spaces/${doomed.id}`);
    await ok('POST', `/v1/spaces/${doomed.id}/restore`);
    ids.operationId = (await ok('GET', `/v1/spaces/${doomed.id}/operations`))[0].id;

    const app = await ok('POST', `/v1/teams/${team}/oauth-apps`, {
      name: 'Common routes',
      type: 'confidential',
      redirectUris: ['https://app.example/cb'],
      scopes: ALL_API_SCOPES,
    });
    ids.appId = app.id;
    for (const scope of new Set(operations.map((o) => o.scope).filter((s) => s !== null))) {
      const res = await oauthPost(
        t,
        '/v1/auth/oauth2/token',
        { grant_type: 'client_credentials', scope: ALL_API_SCOPES.filter((s) => s !== scope).join(' ') },
        { id: app.clientId, secret: app.clientSecret },
      );
      if (res.status !== 200) throw new Error(`token without ${scope}: ${res.status} ${res.text}`);
      withoutScope.set(scope, res.body.access_token);
    }

    const tag = await ok('POST', `/v1/teams/${team}/tags/versions`, {});
    for (const step of ['submit', 'approve', 'publish'])
      await ok('POST', `/v1/teams/${team}/tags/versions/${tag.id}/${step}`);
    ids.tagVersionId = tag.id;
    ids.environment = 'production';

    ids.keyId = (await ok('POST', '/v1/account/api-keys', { name: 'common routes' })).id;
    ids.domainId = (
      await ok('POST', '/v1/domains', { hostname: 'common.example.test', team, spaceId: space.id })
    ).id;

    // A public IP literal: nothing resolves, and no delivery job is queued (the delivery row is
    // written directly), so nothing leaves the machine.
    ids.webhookId = (await ok('POST', '/v1/webhooks', { url: 'https://93.184.216.34/hook', team })).id;
    ids.deliveryId = `whd_${team}`;
    ids.linkId = (await ok('POST', `/v1/spaces/${space.id}/share-links`, {})).id;
    ids.credentialId = (await ok('POST', `/v1/spaces/${space.id}/machine-credentials`, {})).id;
    ids.grantId = (
      await ok('POST', `/v1/spaces/${space.id}/grants`, { audience: { type: 'public' }, paths: ['/x/**'] })
    ).id;
    await t.server.services.store.repos.webhookDeliveries.insert({
      id: ids.deliveryId,
      webhook_id: ids.webhookId,
      team_id: team,
      event_id: 'evt_common',
      event_code: 'space.created',
      event: '{}',
      state: 'succeeded',
      attempts: 1,
      next_attempt_at: null,
      last_attempt_at: null,
      last_status_code: 200,
      last_error: null,
      response_excerpt: null,
      duration_ms: 1,
      redelivery_of: null,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    });

    // A person of the space and a confirmed access request (the visitor's half runs on the site host).
    ids.personId = (await ok('POST', `/v1/spaces/${space.id}/people`, { email: 'person@example.test' })).id;
    ids.requestId = 'areq_common';
    await t.server.services.store.repos.accessRequests.insert({
      id: ids.requestId,
      space_id: space.id,
      email: 'asker@example.test',
      name: null,
      message: null,
      path: '/',
      status: 'pending',
      verify_token_hash: null,
      verify_expires_at: null,
      person_id: null,
      resolved_by: null,
      created_at: new Date().toISOString(),
      verified_at: new Date().toISOString(),
      resolved_at: null,
    });

    const form = new FormData();
    form.append('files', new Blob(['<h1>stolen</h1>']), 'index.html');
    form.append('payload', JSON.stringify({ spaceId: space.id }));
    const encoded = new Response(form);
    REQUESTS.publish = {
      raw: Buffer.from(await encoded.arrayBuffer()),
      headers: { 'content-type': encoded.headers.get('content-type')! },
    };
  }, 60_000);
  afterAll(() => t.close());

  /** The operation's URL with every path parameter (and the query it needs) filled from the fixtures. */
  function urlOf(op: Operation): string {
    const query = QUERIES[op.operationId];
    const url = query ? `${op.path}?${query}` : op.path;
    return url.replace(/\{(\w+)\}/g, (_, name: string) => {
      let value: string | undefined;
      if (name === 'versionId' && op.path.includes('/tags/')) value = ids.tagVersionId;
      else if (name === 'name') value = op.path.includes('/variables/') ? VARIABLE : 'live';
      else if (name === 'path') value = 'index.html';
      // A cron key and a storage object id: the space has neither (404 once access checks pass).
      else if (name === 'key') value = 'api-digest';
      else if (name === 'objectId') value = '0'.repeat(32);
      else if (name === 'table') value = 'notes';
      else value = ids[name];
      if (value === undefined) throw new Error(`${op.operationId}: no fixture for {${name}}`);
      return encodeURIComponent(value);
    });
  }

  function send(op: Operation, token: string | null) {
    const r = REQUESTS[op.operationId] ?? {};
    return t.api(op.method, urlOf(op), { token, body: r.body, raw: r.raw, headers: r.headers });
  }

  const describeFailure = (op: Operation, res: { status: number; text: string }) =>
    `${op.method} ${op.path} (${op.operationId}) → ${res.status} ${res.text.slice(0, 160)}`;

  it('finds the authenticated operations and has a fixture for every path parameter', () => {
    const required = operations.filter((o) => o.required);
    expect(required.length).toBeGreaterThan(60);
    for (const op of operations) expect(() => urlOf(op), op.operationId).not.toThrow();
  });

  it('no credential → 401 problem with a Bearer challenge', async () => {
    const failures: string[] = [];
    for (const op of operations.filter((o) => o.required)) {
      const res = await send(op, null);
      const ok =
        res.status === 401 &&
        res.body?.code === 'unauthorized' &&
        String(res.headers['content-type']).startsWith('application/problem+json') &&
        res.headers['www-authenticate'] === 'Bearer realm="spaces"';
      if (!ok) failures.push(describeFailure(op, res));
    }
    expect(failures).toEqual([]);
  });

  it('a person of another team → 404 on team and space resources', async () => {
    const failures: string[] = [];
    const checked = operations.filter((o) => o.general && !(o.operationId in NOT_TEAM_RESOURCES));
    for (const op of checked) {
      if (op.hasBody && !(op.operationId in REQUESTS)) {
        failures.push(`${op.operationId}: add a request body to REQUESTS so the check reaches the handler`);
        continue;
      }
      const res = await send(op, stranger);
      if (res.status !== 404 || res.body?.code !== 'not_found') failures.push(describeFailure(op, res));
    }
    expect(failures).toEqual([]);
    expect(checked.length).toBeGreaterThan(40);
  });

  it('the team’s own person reads every one of those resources (so the 404s are the boundary)', async () => {
    const failures: string[] = [];
    const reads = operations.filter(
      (o) => o.general && o.method === 'GET' && o.params.length > 0 && !(o.operationId in NOT_TEAM_RESOURCES),
    );
    for (const op of reads) {
      const res = await send(op, ownerToken);
      if (res.status >= 400) failures.push(describeFailure(op, res));
    }
    expect(failures).toEqual([]);
    expect(reads.length).toBeGreaterThan(20);
  });

  it('a credential without the operation’s scope → 403 naming the scope', async () => {
    const failures: string[] = [];
    const scoped = operations.filter((o) => o.scope !== null);
    for (const op of scoped) {
      const res = await send(op, withoutScope.get(op.scope!)!);
      const ok =
        res.status === 403 &&
        res.body?.code === 'forbidden' &&
        res.body?.details?.requiredScope === op.scope &&
        res.headers['www-authenticate'] ===
          `Bearer realm="spaces", error="insufficient_scope", scope="${op.scope}"`;
      if (!ok) failures.push(describeFailure(op, res));
    }
    expect(failures).toEqual([]);
    expect(scoped.length).toBeGreaterThan(50);
  });

  it('exempts only operations that exist', () => {
    const known = new Set(operations.map((o) => o.operationId));
    expect(Object.keys(NOT_TEAM_RESOURCES).filter((id) => !known.has(id))).toEqual([]);
    expect(Object.keys(REQUESTS).filter((id) => !known.has(id))).toEqual([]);
  });
});
