import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

/**
 * A monorepo behind a repository connection (real git, real server): analyze answers the ranked
 * candidates; `apply: "best"` saves the top one on the connection; a build from the connection then
 * builds that app and serves its output live.
 */
describeEachDb('monorepo candidates and apply best', (db) => {
  let t: TestServer;
  let dir: string;
  let repo: string;

  beforeAll(async () => {
    t = await startServer({
      db,
      env: { SPACES_GIT_ALLOW: 'file', SPACES_JOB_POLL_MS: '50', SPACES_BUILD_TIMEOUT: '60' },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monorepo-'));
    repo = path.join(dir, 'repo');
    const files: Record<string, string> = {
      'package.json': JSON.stringify({ private: true, workspaces: ['apps/*', 'packages/*'] }),
      // The dependencies are vendored: the repository's own file says there is nothing to install.
      'spaces.json': JSON.stringify({ build: { installCommand: null } }),
      'apps/web/package.json': JSON.stringify({
        name: 'web',
        scripts: { build: 'node build.js' },
        devDependencies: { vite: '^5.0.0' },
      }),
      'apps/web/index.html': '<div id="app"></div>',
      'apps/web/build.js':
        "const fs = require('fs'); fs.mkdirSync('dist', { recursive: true }); fs.writeFileSync('dist/index.html', 'web app');\n",
      'apps/docs/package.json': JSON.stringify({
        name: 'docs',
        scripts: { build: 'docusaurus build' },
        dependencies: { '@docusaurus/core': '^3.0.0' },
      }),
      'packages/ui/package.json': JSON.stringify({
        name: '@acme/ui',
        main: 'index.js',
        scripts: { build: 'tsc' },
      }),
    };
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
      fs.writeFileSync(path.join(repo, rel), text);
    }
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    const git = (...args: string[]) =>
      promisify(execFile)('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        cwd: repo,
      });
    await git('add', '.');
    await git('commit', '-qm', 'monorepo');
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('ranks the apps, applies the best one to the connection and builds it', async () => {
    const created = await t.api('POST', '/v1/spaces', {
      body: { slug: `mono-${db[0]}-${Date.now().toString(36)}`, access: 'public' },
    });
    const space = created.body.data.space as { id: string; slug: string };
    const base = `/v1/spaces/${space.id}/repository-connection`;
    expect((await t.api('POST', base, { body: { cloneUrl: pathToFileURL(repo).href } })).status).toBe(201);

    const looked = await t.api('POST', `${base}/analyze`, { body: {} });
    expect(looked.status, looked.text).toBe(200);
    const { candidates } = looked.body.data;
    expect(candidates.map((c: { appRoot: string }) => c.appRoot)).toEqual([
      'apps/web',
      'apps/docs',
      'packages/ui',
      '.',
    ]);
    expect(candidates[0]).toMatchObject({
      appRoot: 'apps/web',
      framework: 'vite',
      packageManager: 'npm',
      buildCommand: 'npm run build',
      outputDirectory: 'dist',
    });
    expect(candidates[0].reasons).toEqual(expect.arrayContaining(['+50 uses vite', '+10 lives in apps/']));
    expect(candidates[1]).toMatchObject({
      appRoot: 'apps/docs',
      framework: 'docusaurus',
      outputDirectory: 'build',
    });
    expect(candidates[2].reasons.join(' ')).toContain('library');
    expect(candidates[3].reasons.join(' ')).toContain('workspace root');
    expect(looked.body.data.applied).toBeNull();
    // Without apply nothing is saved.
    expect((await t.api('GET', base)).body.data).toMatchObject({ appRoot: null, buildSettings: null });

    const applied = await t.api('POST', `${base}/analyze`, { body: { apply: 'best' } });
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body.data.applied).toMatchObject({ appRoot: 'apps/web', framework: 'vite' });
    expect(applied.body.data.settings).toMatchObject({
      rootDirectory: { value: 'apps/web', source: 'connection' },
      buildCommand: { value: 'npm run build', source: 'connection' },
      outputDirectory: { value: 'dist', source: 'connection' },
      frameworkPreset: { value: 'vite', source: 'connection' },
      // The repository's own file still wins over what was applied.
      installCommand: { value: null, source: 'repository' },
    });
    expect((await t.api('GET', base)).body.data).toMatchObject({
      appRoot: 'apps/web',
      buildSettings: {
        frameworkPreset: 'vite',
        installCommand: 'npm install',
        buildCommand: 'npm run build',
        outputDirectory: 'dist',
      },
    });

    const build = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: {} });
    expect(build.status, build.text).toBe(201);
    const end = Date.now() + 60_000;
    let b = build.body.data;
    while (!['succeeded', 'failed', 'canceled', 'skipped'].includes(b.status)) {
      if (Date.now() > end) throw new Error(`build still ${b.status}`);
      await new Promise((r) => setTimeout(r, 100));
      b = (await t.api('GET', `/v1/builds/${b.id}`)).body.data;
    }
    const log = (await t.api('GET', `/v1/builds/${b.id}/logs?limit=100`)).body.data
      .map((l: { line: string }) => l.line)
      .reverse()
      .join('\n');
    expect(b.status, log).toBe('succeeded');
    expect(b.settings.rootDirectory).toEqual({ value: 'apps/web', source: 'connection' });
    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe('web app');

    // PATCH clears the saved settings; the connection keeps its app root.
    const cleared = await t.api('PATCH', base, { body: { buildSettings: null } });
    expect(cleared.body.data).toMatchObject({ appRoot: 'apps/web', buildSettings: null });
    const bad = await t.api('PATCH', base, { body: { buildSettings: { buildCommand: '' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.pointer).toBe('/buildSettings/buildCommand');
    const wrong = await t.api('POST', `${base}/analyze`, { body: { apply: 'worst' } });
    expect(wrong.status).toBe(400);
  });
});
