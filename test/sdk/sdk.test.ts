import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderSdk } from '../../src/sdk/generate.ts';
import {
  createSpacesClient,
  paginate,
  publishFiles,
  type SpacesClient,
  SpacesProblem,
  unwrap,
} from '../../src/sdk/index.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = (name: string) => path.join(ROOT, 'node_modules/.bin', name);
const STALE = 'run `npm run build:sdk` and commit src/sdk/openapi.json and src/sdk/schema.ts';

describe('the SDK build', () => {
  it('is generated from the current OpenAPI document', async () => {
    const { openapi, types } = await renderSdk();
    expect(fs.readFileSync(path.join(ROOT, 'src/sdk/openapi.json'), 'utf8') === openapi, STALE).toBe(true);
    expect(fs.readFileSync(path.join(ROOT, 'src/sdk/schema.ts'), 'utf8') === types, STALE).toBe(true);
  }, 120_000);

  it('compiles under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess', async () => {
    const config = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.sdk.json'), 'utf8'));
    expect(config.compilerOptions).toMatchObject({
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
    });
    const r = await run(BIN('tsc'), ['-p', 'tsconfig.sdk.json'], { cwd: ROOT }).catch((e) => e);
    expect(r.code ?? 0, `${r.stdout}${r.stderr}`).toBe(0);
  }, 180_000);

  it('its OpenAPI document passes `redocly lint` (recommended rules, see redocly.yaml)', async () => {
    const r = await run(BIN('redocly'), ['lint', 'src/sdk/openapi.json', '--format', 'json'], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((e) => e);
    const report = JSON.parse(r.stdout);
    const problems = report.problems.filter((p: { ignored?: boolean }) => !p.ignored);
    expect(problems, JSON.stringify(problems.slice(0, 5), null, 2)).toEqual([]);
    expect(r.code ?? 0).toBe(0);
    // The exemptions: only operations that take no input and no credential.
    const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'src/sdk/openapi.json'), 'utf8'));
    const ignored = fs
      .readFileSync(path.join(ROOT, '.redocly.lint-ignore.yaml'), 'utf8')
      .split('\n')
      .filter((l) => l.trim().startsWith("- '#/paths/"))
      .map((l) => l.trim().slice(3, -1));
    expect(ignored.length).toBeGreaterThan(0);
    for (const pointer of ignored) {
      const [, rawPath, method] = /^#\/paths\/([^/]+)\/(\w+)\/responses$/.exec(pointer)!;
      const op = doc.paths[rawPath!.replaceAll('~1', '/').replaceAll('~0', '~')][method!];
      expect(op.parameters, pointer).toEqual([]);
      expect(op.requestBody, pointer).toBeUndefined();
      expect(op.security, pointer).toEqual([]);
    }
  }, 180_000);

  it('describes every 4xx with a problem, names scopes, keeps RFC 6749 errors on OAuth endpoints', () => {
    const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'src/sdk/openapi.json'), 'utf8'));
    const publish = doc.paths['/v1/publish'].post;
    for (const s of ['400', '401', '403', '409', '413', '415', '429'])
      expect(publish.responses[s].content['application/problem+json'].schema.$ref, s).toBe(
        '#/components/schemas/Problem',
      );
    expect(doc.paths['/v1/spaces/{spaceId}'].get.responses['404']).toBeDefined();
    const token = doc.paths['/v1/auth/oauth2/token'].post;
    expect(token.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/OAuthError',
    );
    expect(doc.paths['/.well-known/oauth-authorization-server'].get.responses['200'].content).toBeDefined();
    for (const [p, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [m, op] of Object.entries<any>(item)) {
        if (op.security?.length) expect(op, `${m} ${p}`).toHaveProperty('x-required-scope');
      }
    }
    expect(doc.paths['/v1/account/api-keys'].post['x-person-only']).toBe(true);
    expect(doc.paths['/v1/spaces'].post['x-required-scope']).toBe('spaces:write');
  });
});

describeEachDb('the SDK against a live server', (db) => {
  let t: TestServer;
  let client: SpacesClient;
  beforeAll(async () => {
    t = await startServer({ db });
    client = createSpacesClient({ baseUrl: t.url, token: t.ownerKey });
  });
  afterAll(() => t?.close());

  it('publishes through the versions flow, uploading only what changed', async () => {
    const created = await unwrap(client.POST('/v1/spaces', { body: { slug: 'sdk-site' } }));
    const spaceId = created.data.space.id;
    const one = await publishFiles(client, {
      spaceId,
      files: [
        { path: 'index.html', content: '<h1>sdk</h1>' },
        { path: 'a.txt', content: new Uint8Array([1, 2, 3]) },
      ],
      message: 'first',
    });
    expect(one.version.status).toBe('ready');
    expect(one.space.liveUrl).toMatch(/^http/);
    let uploads = 0;
    const counting: typeof fetch = (input, init) => {
      if (init?.method === 'PUT') uploads++;
      return fetch(input, init);
    };
    const two = await publishFiles(client, {
      spaceId,
      files: [
        { path: 'index.html', content: '<h1>sdk 2</h1>' },
        { path: 'a.txt', content: new Uint8Array([1, 2, 3]) },
      ],
      fetch: counting,
    });
    expect(two.version.number).toBe(2);
    expect(uploads).toBe(1);

    const versions: number[] = [];
    for await (const v of paginate((cursor) =>
      client.GET('/v1/spaces/{spaceId}/versions', {
        params: { path: { spaceId }, query: { limit: 1, ...(cursor ? { cursor } : {}) } },
      }),
    ))
      versions.push(v.number);
    expect(versions).toEqual([2, 1]);
  });

  it('throws problems as typed errors with their code and pointer', async () => {
    const missing = await unwrap(
      client.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId: 'no-such-space' } } }),
    ).catch((e) => e);
    expect(missing).toBeInstanceOf(SpacesProblem);
    expect(missing.code).toBe('not_found');
    expect(missing.status).toBe(404);
    const bad = await unwrap(
      client.PATCH('/v1/spaces/{spaceId}', {
        params: { path: { spaceId: 'sdk-site' } },
        body: { config: { redirects: [{ source: '/a', destination: '/b', status: 999 }] } } as never,
      }),
    ).catch((e) => e);
    expect(bad).toBeInstanceOf(SpacesProblem);
    expect(bad.code).toBe('validation_error');
    expect(bad.pointer).toMatch(/^\/config\/redirects\/0/);
  });
});
