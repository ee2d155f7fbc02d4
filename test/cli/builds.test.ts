import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

/**
 * `spaces build`, `spaces builds …` and `spaces git remote`: the real CLI against a live server
 * that runs the real build runner.
 */
let t: TestServer;
let e: CliEnv;

beforeAll(async () => {
  t = await startServer({
    env: { SPACES_JOB_POLL_MS: '50', SPACES_BUILD_TIMEOUT: '30', SPACES_GIT_ALLOW: 'file' },
  });
  e = cliEnv(t.url);
  await t.api('POST', '/v1/spaces', { body: { slug: 'cli-build', access: 'public' } });
});
afterAll(async () => {
  await t?.close();
});

it('spaces build --follow uploads the folder, streams the log and exits 0; a failing build exits 1', async () => {
  expect((await cli(e, ['login', '--token', t.ownerKey])).code).toBe(0);
  expect((await cli(e, ['link', 'cli-build'])).code).toBe(0);
  const src = path.join(e.cwd, 'site');
  fs.mkdirSync(src);
  fs.writeFileSync(
    path.join(src, 'package.json'),
    JSON.stringify({
      scripts: { build: "mkdir -p dist && echo 'from the cli' > dist/index.html && echo step-done" },
    }),
  );

  const built = await cli(e, ['build', 'site', '--follow']);
  expect(built.code, built.stderr).toBe(0);
  expect(built.stdout).toContain('step-done');
  expect(built.stdout).toMatch(/published ver_\S+ to live/);
  expect(built.stdout).toMatch(/bld_\S+\s+succeeded\s+→ live/);
  expect((await t.api('GET', '/', { token: null, host: 'cli-build.localhost' })).text).toBe('from the cli\n');

  const ls = await cli(e, ['builds', 'ls', '--json']);
  expect(ls.code, ls.stderr).toBe(0);
  const [b] = ls.json();
  expect(b).toMatchObject({ status: 'succeeded', channel: 'live', source: { type: 'upload' } });

  const show = await cli(e, ['builds', 'show', b.id]);
  expect(show.code, show.stderr).toBe(0);
  expect(show.stdout).toMatch(
    /waiting_for_source[\s\S]*uploading_source[\s\S]*queued[\s\S]*running[\s\S]*succeeded/,
  );

  const logs = await cli(e, ['builds', 'logs', b.id]);
  expect(logs.code).toBe(0);
  const lines = logs.stdout.split('\n');
  expect(lines.findIndex((l) => l.includes('step-done'))).toBeLessThan(
    lines.findIndex((l) => l.startsWith('published ')),
  );

  fs.writeFileSync(
    path.join(src, 'package.json'),
    JSON.stringify({ scripts: { build: 'echo broken >&2; exit 3' } }),
  );
  const failed = await cli(e, ['build', 'site', '--follow']);
  expect(failed.code).toBe(1);
  expect(failed.stderr).toContain('broken');
  expect(failed.stderr).toContain('build_command_failed');
  expect((await t.api('GET', '/', { token: null, host: 'cli-build.localhost' })).text).toBe('from the cli\n');

  const [latest] = (await cli(e, ['builds', 'ls', '--json'])).json();
  const retried = await cli(e, ['builds', 'retry', latest.id, '--json']);
  expect(retried.code, retried.stderr).toBe(0);
  expect(retried.json()).toMatchObject({ retryOf: latest.id });
  const cancel = await cli(e, ['builds', 'cancel', retried.json().id, '--json']);
  expect(cancel.code, cancel.stderr).toBe(0);
  expect(['canceled', 'running', 'failed']).toContain(cancel.json().status);
});

it('spaces git remote prints the remote and adds it with --add', async () => {
  const printed = await cli(e, ['git', 'remote', '--space', 'cli-build']);
  expect(printed.code, printed.stderr).toBe(0);
  const space = (await t.api('GET', '/v1/spaces/cli-build')).body.data.space;
  expect(printed.stdout.split('\n')[0]).toBe(space.git.remoteUrl);
  expect(printed.stdout).toContain('git push spaces main');

  execFileSync('git', ['init', '-q'], { cwd: e.cwd });
  const added = await cli(e, ['git', 'remote', '--add', '--space', 'cli-build', '--json']);
  expect(added.code, added.stderr).toBe(0);
  expect(added.json()).toMatchObject({ added: true, name: 'spaces' });
  expect(execFileSync('git', ['remote', 'get-url', 'spaces'], { cwd: e.cwd }).toString().trim()).toBe(
    space.git.remoteUrl,
  );
});

it('spaces builds analyze ranks a monorepo’s apps and --apply saves the best on the connection', async () => {
  const repo = path.join(e.cwd, 'mono');
  for (const [rel, text] of Object.entries({
    'package.json': JSON.stringify({ private: true, workspaces: ['apps/*'] }),
    'apps/web/package.json': JSON.stringify({
      scripts: { build: 'vite build' },
      devDependencies: { vite: '5' },
    }),
    'apps/docs/package.json': JSON.stringify({ dependencies: { '@docusaurus/core': '3' } }),
  })) {
    fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    fs.writeFileSync(path.join(repo, rel), text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-qm', 'one');
  await t.api('POST', '/v1/spaces', { body: { slug: 'cli-mono' } });
  const conn = await t.api('POST', '/v1/spaces/cli-mono/repository-connection', {
    body: { cloneUrl: `file://${repo}` },
  });
  expect(conn.status, conn.text).toBe(201);

  const shown = await cli(e, ['builds', 'analyze', '--space', 'cli-mono']);
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toMatch(/SCORE\s+APP ROOT/);
  expect(shown.stdout.indexOf('apps/web')).toBeLessThan(shown.stdout.indexOf('apps/docs'));
  expect(shown.stdout).toContain('--apply');

  const applied = await cli(e, ['builds', 'analyze', '--apply', '--space', 'cli-mono', '--json']);
  expect(applied.code, applied.stderr).toBe(0);
  expect(applied.json()).toMatchObject({ applied: { appRoot: 'apps/web', framework: 'vite' } });
  expect((await t.api('GET', '/v1/spaces/cli-mono/repository-connection')).body.data).toMatchObject({
    appRoot: 'apps/web',
    buildSettings: { frameworkPreset: 'vite', buildCommand: 'npm run build', outputDirectory: 'dist' },
  });
});
