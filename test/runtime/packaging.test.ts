/**
 * Functions at finalize (issue 26): entry detection in behaviour §9's order, one bundled ES module
 * stored as a blob, the version's runtime metadata (`GET /v1/spaces/{id}/runtime`), the diagnostics
 * (`config_runtime_entry_missing`, Node built-ins, paths leaving the version, non-literal import()),
 * and function sources never served as files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectEntry, middlewareOf, routeOf } from '../../src/domain/runtime/detect.ts';
import { BLOB_GRACE_MS } from '../../src/jobs/maintenance.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions, sha } from '../publishing/helpers.ts';

const fnConfig = (extra: object = {}) => JSON.stringify({ runtime: { kind: 'functions', ...extra } });

describe('entry detection', () => {
  it('maps functions/ modules to routes, Pages style', () => {
    expect(routeOf('api/hello.ts')).toBe('/api/hello');
    expect(routeOf('index.js')).toBe('/');
    expect(routeOf('api/index.ts')).toBe('/api');
    expect(routeOf('users/[id].ts')).toBe('/users/:id');
    expect(routeOf('files/[[path]].mjs')).toBe('/files/*');
    expect(routeOf('_middleware.ts')).toBeNull();
    expect(routeOf('lib/_db.ts')).toBeNull();
  });

  it('finds _middleware modules and the folders they wrap, outermost first', () => {
    expect(middlewareOf('_middleware.ts')).toBe('/');
    expect(middlewareOf('api/_middleware.js')).toBe('/api');
    expect(middlewareOf('api/v2/_middleware.ts')).toBe('/api/v2');
    expect(middlewareOf('users/[id]/_middleware.ts')).toBeNull();
    expect(middlewareOf('_lib/_middleware.ts')).toBeNull();
    expect(middlewareOf('api/middleware.ts')).toBeNull();
    const d: { code: string }[] = [];
    const fns = detectEntry(
      undefined,
      [
        'functions/api/_middleware.ts',
        'functions/_middleware.ts',
        'functions/api/x.ts',
        'functions/u/[id]/_middleware.ts',
      ],
      d as never[],
    );
    expect(fns?.middleware.map((m) => m.route)).toEqual(['/', '/api']);
    expect(fns?.routes).toEqual(['/api/x']);
    expect(d.map((x) => x.code)).toEqual(['runtime_middleware_unsupported']);
  });

  it('prefers the adapter output, then handler.*, then functions/', () => {
    const d: never[] = [];
    const all = ['_worker.js', 'handler.ts', 'functions/api/x.ts', 'index.html'];
    expect(detectEntry(undefined, all, d)?.kind).toBe('adapter');
    expect(detectEntry(undefined, all.slice(1), d)?.entry).toBe('handler.ts');
    const fns = detectEntry(
      undefined,
      ['functions/a/[id].ts', 'functions/a/new.ts', 'functions/[[all]].ts'],
      d,
    );
    expect(fns?.routes).toEqual(['/a/new', '/a/:id', '/*']);
    expect(detectEntry('src/worker.ts', all, d)).toBeNull();
    expect(d.map((x: { code: string }) => x.code)).toEqual(['config_runtime_entry_missing']);
  });
});

describeEachDb('functions packaging', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('bundles functions/ into one module, records the runtime and hides the sources', async () => {
    const space = await createSpace(t, undefined, { slug: 'fn-pack', access: 'public' });
    const { finalized } = await publishViaVersions(t, space.id, {
      'index.html': '<h1>static</h1>',
      'spaces.json': fnConfig({ capabilities: ['fetch'], compatibilityDate: '2025-01-01' }),
      'functions/api/hello.ts':
        "import { greet } from '../_lib/greet';\nexport const onRequestGet = () => new Response(greet('x'));",
      'functions/_lib/greet.ts': "export const greet = (n: string): string => 'hello ' + n;",
      'functions/users/[id].js': 'export default { fetch: () => new Response("u") };',
      'migrations/0001_notes.sql': 'CREATE TABLE notes (id INTEGER PRIMARY KEY);',
    });
    expect(finalized.version.status).toBe('ready');
    const rt = await t.api('GET', `/v1/spaces/${space.id}/runtime`);
    expect(rt.status).toBe(200);
    expect(rt.body.data).toMatchObject({
      kind: 'functions',
      versionId: finalized.version.id,
      entry: 'functions',
      entryKind: 'functions',
      compatibilityDate: '2025-01-01',
      capabilities: ['fetch'],
      routes: ['/api/hello', '/users/:id'],
    });
    expect(rt.body.data.size).toBeGreaterThan(100);
    expect(rt.body.data.digest).toMatch(/^[0-9a-f]{64}$/);
    // The bundle is a blob no file names: the blob sweep keeps it while its version exists.
    const later = new Date(Date.now() + 3 * BLOB_GRACE_MS);
    await t.server.services.publishing.blobSweep.run(later, BLOB_GRACE_MS);
    const kept = await t.server.services.blobs.get(rt.body.data.digest);
    const chunks: Buffer[] = [];
    for await (const c of kept) chunks.push(c as Buffer);
    const bundle = Buffer.concat(chunks).toString('utf8');
    expect(bundle.length).toBe(rt.body.data.size);
    expect(bundle).toContain('hello ');
    expect(bundle).not.toMatch(/^import /m);
    // Sources are private; the static page still is served.
    const host = 'fn-pack.localhost';
    expect((await t.api('GET', '/', { token: null, host })).text).toContain('static');
    // So are the database's migrations (`spaces db migrate` reads them from the project folder).
    for (const p of [
      '/functions/api/hello.ts',
      '/functions/_lib/greet.ts',
      '/functions/users/[id].js',
      '/migrations/0001_notes.sql',
    ])
      expect((await t.api('GET', p, { token: null, host })).status).toBe(404);
  });

  it('answers runtime_not_provisioned for a static space', async () => {
    const space = await createSpace(t, undefined, { slug: 'fn-static', access: 'public' });
    await publishViaVersions(t, space.id, { 'index.html': 'x', 'functions/x.ts': 'served as a file' });
    const rt = await t.api('GET', `/v1/spaces/${space.id}/runtime`);
    expect(rt.status).toBe(404);
    expect(rt.body.code).toBe('runtime_not_provisioned');
    expect((await t.api('GET', '/functions/x.ts', { token: null, host: 'fn-static.localhost' })).status).toBe(
      200,
    );
  });

  const failing: Array<[string, Record<string, string>, string]> = [
    [
      'a declared entry that is missing',
      { 'spaces.json': fnConfig({ entry: 'src/worker.ts' }) },
      'config_runtime_entry_missing',
    ],
    ['no entry at all', { 'spaces.json': fnConfig() }, 'config_runtime_entry_missing'],
    [
      'a Node built-in',
      {
        'spaces.json': fnConfig(),
        'handler.ts': "import fs from 'node:fs';\nexport default { fetch: () => new Response(String(fs)) };",
      },
      'runtime_node_builtin_unsupported',
    ],
    [
      'an import leaving the version',
      {
        'spaces.json': fnConfig(),
        'handler.js': "import x from '../../etc/passwd';\nexport default { fetch: () => new Response(x) };",
      },
      'runtime_import_outside_version',
    ],
    [
      'a non-literal import()',
      {
        'spaces.json': fnConfig(),
        'handler.js':
          'export default { fetch: async (r) => (await import(new URL(r.url).searchParams.get("m"))).default };',
      },
      'runtime_dynamic_import_unsupported',
    ],
  ];
  for (const [name, files, code] of failing) {
    it(`refuses ${name}: ${code}`, async () => {
      const space = await createSpace(t);
      const created = await t.api('POST', `/v1/spaces/${space.id}/versions`, {
        body: {
          files: Object.entries({ 'index.html': 'x', ...files }).map(([path, b]) => ({
            path,
            size: Buffer.byteLength(b),
            sha256: sha(b),
          })),
        },
      });
      for (const tg of created.body.data.upload.targets) {
        const body = ({ 'index.html': 'x', ...files } as Record<string, string>)[tg.path]!;
        const { request } = await import('undici');
        await (await request(tg.url, { method: 'PUT', body })).body.text();
      }
      const fin = await t.api(
        'POST',
        `/v1/spaces/${space.id}/versions/${created.body.data.version.id}/finalize`,
      );
      expect(fin.status).toBe(422);
      expect(fin.body.code).toBe('version_failed');
      expect(fin.body.details.diagnostics.map((d: { code: string }) => d.code)).toContain(code);
    });
  }
});
