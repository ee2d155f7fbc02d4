import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toOpenApiPath } from '../../src/http/openapi.ts';
import { exchange, header } from '../helpers/raw-http.ts';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

describe('API conventions', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ env: { SPACES_BODY_LIMIT: '2048' } });
  });
  afterAll(() => t.close());

  it('answers unknown routes with a 404 problem and a request id header', async () => {
    const res = await t.api('GET', '/v1/nothing-here');
    const p = expectProblem(res, 404, 'not_found');
    expect(res.headers['x-request-id']).toBe(p.requestId);
    expect(p.$schema).toMatch(/\/schemas\/Problem\.json$/);
    expect(p.title).toBe('Not found');
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const res = await t.api('DELETE', '/v1/teams');
    expectProblem(res, 405, 'method_not_allowed');
    expect(String(res.headers.allow).split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
  });

  it('answers an oversized body with 413', async () => {
    const res = await t.api('POST', '/v1/teams', { body: { name: 'x'.repeat(5000) } });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('answers what the HTTP parser refuses with a problem document: a head too large (431), bytes that are no HTTP (400)', async () => {
    const big = await exchange(
      t.port,
      `GET /v1/teams?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    const garbage = await exchange(t.port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n');
    for (const [ex, status, code] of [
      [big, 431, 'request_header_fields_too_large'],
      [garbage, 400, 'invalid_request'],
    ] as const) {
      expect(ex.responses.length, ex.wire).toBe(1);
      const r = ex.responses[0]!;
      expect(r.status).toBe(status);
      expect(header(r, 'content-type')).toMatch(/^application\/problem\+json/);
      const p = JSON.parse(r.body);
      expect([p.status, p.code, typeof p.requestId]).toEqual([status, code, 'string']);
    }
  });

  it('serves the JSON Schema named by $schema, built from the validating schema', async () => {
    const created = await t.api('POST', '/v1/teams', { body: { name: 'Schemas' } });
    const url = new URL(created.body.$schema);
    const res = await t.api('GET', url.pathname, { token: null });
    expect(res.status).toBe(200);
    const schema = JSON.parse(res.text);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe(created.body.$schema);
    expect(Object.keys(schema.properties.data.properties)).toContain('manifestStatus');
    expectProblem(await t.api('GET', '/schemas/Nope.json', { token: null }), 404, 'not_found');
  });

  it('resolves every problem type URL to a page', async () => {
    const res = await t.api('GET', '/v1/teams', { token: null });
    const page = await request(res.body.type, { headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toContain('unauthorized');
    const md = await request(res.body.type, { headers: { accept: 'text/markdown' } });
    expect(md.headers['content-type']).toMatch(/text\/markdown/);
    await md.body.text();
  });

  it('documents every route in the OpenAPI document', async () => {
    const res = await t.api('GET', '/v1/openapi.json', { token: null });
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.text);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.0.3');
    const documented = new Set<string>();
    for (const [p, ops] of Object.entries<any>(doc.paths))
      for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${p}`);
    const missing = t.server.app.routeSpecs
      .filter((r) => !r.hidden)
      .map((r) => `${r.method} ${toOpenApiPath(r.url, r.params)}`)
      .filter((k) => !documented.has(k));
    expect(missing).toEqual([]);
    // (Routes registered without addRoute: the next test, from Fastify's own route list.)
    const specUrls = new Set(t.server.app.routeSpecs.map((r) => `${r.method} ${r.url}`));
    expect(specUrls.has('POST /v1/teams')).toBe(true);
    expect(doc.paths['/v1/teams'].post.security).toEqual([{ bearer: [] }, { oauth2: ['teams:create'] }]);
    expect(doc.paths['/v1/teams/{teamId}'].get.parameters[0]).toMatchObject({
      name: 'teamId',
      in: 'path',
      required: true,
    });
  });

  it('documents every route Fastify serves, however it was registered', async () => {
    const doc = JSON.parse((await t.api('GET', '/v1/openapi.json', { token: null })).text);
    const documented = new Set<string>();
    for (const [p, ops] of Object.entries<any>(doc.paths))
      for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${p}`);
    /**
     * Served but deliberately not API operations: HTML pages for people and their assets, and the git
     * smart-HTTP remote (git's own protocol, documented in docs/guides/git-push.md), and the one
     * instance-to-instance route (docs/guides/database.md). Anything else
     * added here must be a page, never something a program calls.
     */
    const notApi = new Set([
      'GET /claim', // the claim page (HTML + script)
      'GET /device', // device-login verification page
      'POST /device', // its form post
      'GET /docs', // the documentation site: table of contents…
      'GET /docs.md', // …as Markdown
      'GET /docs/*', // …and every page (also the problem `type` URLs)
      'GET /dashboard/assets/:file', // the web dashboard's scripts and styles (its page is `GET /`)
      'GET /git/:spaceId/*', // git smart HTTP: info/refs and fetches (git http-backend)
      'POST /git/:spaceId/*', // git smart HTTP: upload-pack and receive-pack
      'POST /v1/mcp', // the MCP server (JSON-RPC over Streamable HTTP; its tools are these operations)
      'GET /v1/mcp', // …its SSE stream (405: the server is stateless)
      'DELETE /v1/mcp', // …its session end (405: no sessions)
      'GET /v1/db-console', // the database console page (its session and query calls are operations)
      // Instance to instance only: a call on a space database forwarded to the instance that owns it,
      // signed with the cluster key (404 to anyone else) — not part of the API clients call.
      'POST /v1/internal/space-db/:spaceId/:op',
    ]);
    const served = t.server.servedRoutes;
    const gets = new Set(served.filter((r) => r.method === 'GET').map((r) => r.url));
    const missing = served
      // HEAD is Fastify's automatic twin of every GET; OpenAPI documents the GET.
      .filter((r) => !(r.method === 'HEAD' && gets.has(r.url)))
      .filter((r) => !notApi.has(`${r.method} ${r.url}`))
      .map((r) => `${r.method} ${toOpenApiPath(r.url, r.params as never)}`)
      .filter((k) => !documented.has(k));
    expect(missing).toEqual([]);
    // The allow-list holds only routes that exist (a renamed page must not leave a stale exemption).
    const servedKeys = new Set(served.map((r) => `${r.method} ${r.url}`));
    for (const k of notApi) expect(servedKeys.has(k), k).toBe(true);
    expect(served.length).toBeGreaterThan(60);
    expect(documented.has('GET /v1/access/acquire')).toBe(true);
    expect(documented.has('POST /v1/auth/oauth2/signin')).toBe(true);
  });

  it('marks deprecated routes with Deprecation, Sunset and a policy link', async () => {
    const res = await t.api('GET', '/v1/me');
    expect(res.status).toBe(200);
    expect(res.headers.deprecation).toMatch(/^@\d+$/);
    expect(new Date(String(res.headers.sunset)).toISOString()).toBe('2027-11-01T00:00:00.000Z');
    expect(String(res.headers.link)).toMatch(/rel="deprecation"/);
    const doc = JSON.parse((await t.api('GET', '/v1/openapi.json')).text);
    expect(doc.paths['/v1/me'].get.deprecated).toBe(true);
    expect(doc.paths['/v1/account'].get.deprecated).toBeUndefined();
  });

  it('keeps health and readiness endpoints', async () => {
    expect((await t.api('GET', '/healthz', { token: null })).status).toBe(200);
    expect((await t.api('GET', '/readyz', { token: null })).status).toBe(200);
  });

  it('answers unknown site hosts with a plain HTML 404, not problem JSON', async () => {
    // (A name under the base domain could be a private space: that goes to sign-in, see test/edge/access.test.ts.)
    const res = await t.api('GET', '/', { token: null, host: 'nothing.example.org' });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});

describeEachDb('accounts and sessions', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('signs in, says who I am, signs out', async () => {
    const u = await createUser(t, 'sam');
    expect(u.token).toMatch(/^sfs_/);
    const me = await t.api('GET', '/v1/account', { token: u.token });
    expect(me.body.data.user.email).toBe(u.email);
    expect(me.body.data.credential.kind).toBe('session');
    expect(me.body.data.teams).toHaveLength(1);
    expect(me.body.data.teams[0].role).toBe('owner');
    expect((await t.api('DELETE', '/v1/account/sessions/current', { token: u.token })).status).toBe(204);
    expectProblem(await t.api('GET', '/v1/account', { token: u.token }), 401, 'unauthorized');
  });

  it('rejects a wrong password and unknown e-mail alike', async () => {
    const u = await createUser(t);
    expectProblem(
      await t.api('POST', '/v1/account/sessions', {
        token: null,
        body: { email: u.email, password: 'wrong password!' },
      }),
      401,
      'invalid_credentials',
    );
    expectProblem(
      await t.api('POST', '/v1/account/sessions', {
        token: null,
        body: { email: 'ghost@example.test', password: 'whatever123' },
      }),
      401,
      'invalid_credentials',
    );
  });

  it('keeps sign-up closed by default and lets only the owner create users', async () => {
    expectProblem(
      await t.api('POST', '/v1/account', {
        token: null,
        body: { email: 'a@example.test', name: 'A', password: 'long enough pw' },
      }),
      403,
      'signup_closed',
    );
    const u = await createUser(t);
    expectProblem(
      await t.api('POST', '/v1/users', {
        token: u.token,
        body: { email: 'b@example.test', name: 'B', password: 'long enough pw' },
      }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.api('POST', '/v1/users', { body: { email: u.email, name: 'dup', password: 'long enough pw' } }),
      409,
      'email_taken',
    );
  });

  it('creates, lists and revokes API keys; the secret is shown once and stored hashed', async () => {
    const u = await createUser(t);
    const created = await t.api('POST', '/v1/account/api-keys', {
      token: u.token,
      body: { name: 'ci', preset: 'ci_deploy' },
    });
    expect(created.status).toBe(201);
    const key = created.body.data;
    expect(key.token).toMatch(/^sfa_[A-Za-z0-9_-]{43}$/);
    expect(key.scopes).toEqual(['spaces:read', 'publish:write', 'spaces:publish', 'builds:trigger']);
    const list = await t.api('GET', '/v1/account/api-keys', { token: u.token });
    expect(list.body.data[0]).not.toHaveProperty('token');
    expect(list.body.data[0].hint).toBe(key.token.slice(-4));
    const rows = await t.server.services.database.db.selectFrom('api_keys').select('token_hash').execute();
    expect(rows.some((r) => r.token_hash.includes(key.token))).toBe(false);
    // lastUsedAt is recorded on use.
    await t.api('GET', '/v1/account', { token: key.token });
    const after = await t.api('GET', '/v1/account/api-keys', { token: u.token });
    expect(after.body.data[0].lastUsedAt).not.toBeNull();
    const revoked = await t.api('DELETE', `/v1/account/api-keys/${key.id}`, { token: u.token });
    expect(revoked.body.data.revokedAt).not.toBeNull();
    expectProblem(await t.api('GET', '/v1/account', { token: key.token }), 401, 'unauthorized');
  });

  it('rate-limits sign-in attempts with Retry-After', async () => {
    let last;
    for (let i = 0; i < 11; i++) {
      last = await t.api('POST', '/v1/account/sessions', {
        token: null,
        body: { email: 'brute@example.test', password: `guess${i}xxxxx` },
      });
    }
    expectProblem(last!, 429, 'rate_limited');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('open sign-up', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ env: { SPACES_SIGNUP: 'open' } });
  });
  afterAll(() => t.close());

  it('lets anyone sign up and gives them a personal team', async () => {
    const res = await t.api('POST', '/v1/account', {
      token: null,
      body: { email: 'new@example.test', name: 'New Person', password: 'a long password' },
    });
    expect(res.status).toBe(201);
    const s = await t.api('POST', '/v1/account/sessions', {
      token: null,
      body: { email: 'new@example.test', password: 'a long password' },
    });
    const teams = await t.api('GET', '/v1/teams', { token: s.body.data.token });
    expect(teams.body.data.map((x: any) => x.slug)).toEqual(['new-persons-team']);
    expectProblem(
      await t.api('POST', '/v1/account', {
        token: null,
        body: { email: 'short@example.test', name: 'S', password: 'short' },
      }),
      400,
      'validation_error',
    );
  });
});
