import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

/**
 * A space's repository connection (provider `generic`) against the real server and the real git:
 * repositories made on disk and cloned over `file://`, or over smart HTTP from another space's own
 * remote with a token credential; analysis, builds from the connection, the log followed as a stream
 * and the build's state changes.
 */
describeEachDb('repository connection', (db) => {
  let t: TestServer;
  let dir: string;
  let repo: string;
  let n = 0;

  const git = async (cwd: string, ...args: string[]) =>
    (
      await promisify(execFile)('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        cwd,
        env: { PATH: process.env.PATH, HOME: dir, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
      })
    ).stdout;

  beforeAll(async () => {
    t = await startServer({
      db,
      env: { SPACES_GIT_ALLOW: 'file,loopback,http', SPACES_JOB_POLL_MS: '50', SPACES_BUILD_TIMEOUT: '30' },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-conn-'));
    // A repository whose site is in `site/`: a build script writing dist/index.html.
    repo = path.join(dir, 'repo');
    fs.mkdirSync(path.join(repo, 'site'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'README.md'), 'not the site');
    fs.writeFileSync(
      path.join(repo, 'site', 'package.json'),
      JSON.stringify({ name: 's', private: true, scripts: { build: 'node build.js' } }),
    );
    fs.writeFileSync(
      path.join(repo, 'site', 'build.js'),
      "const fs = require('fs'); fs.mkdirSync('dist', { recursive: true });\n" +
        "console.log('building for', process.env.SPACES_BRANCH || 'production');\n" +
        "fs.writeFileSync('dist/index.html', 'built ' + (process.env.SPACES_BRANCH || 'main'));\n",
    );
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    await git(repo, 'add', '.');
    await git(repo, 'commit', '-qm', 'one');
    await git(repo, 'branch', 'feature');
    // A branch whose build takes a while (for following a running build).
    await git(repo, 'checkout', '-qb', 'slow');
    fs.writeFileSync(
      path.join(repo, 'site', 'package.json'),
      JSON.stringify({ scripts: { build: 'echo started && sleep 2 && node build.js' } }),
    );
    await git(repo, 'commit', '-qam', 'slow');
    await git(repo, 'checkout', '-q', 'main');
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const newSpace = async () => {
    const r = await t.api('POST', '/v1/spaces', {
      body: { slug: `rc${db[0]}-${Date.now().toString(36)}-${n++}`, access: 'public' },
    });
    expect(r.status).toBe(201);
    return r.body.data.space as { id: string; slug: string };
  };
  async function finished(id: string) {
    const end = Date.now() + 60_000;
    for (;;) {
      const r = await t.api('GET', `/v1/builds/${id}`);
      if (['succeeded', 'failed', 'canceled', 'skipped'].includes(r.body.data.status)) return r.body.data;
      if (Date.now() > end) throw new Error(`build ${id} still ${r.body.data.status}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  it('connects, refuses a second connection and a refused URL, analyzes, updates and disconnects', async () => {
    const space = await newSpace();
    const base = `/v1/spaces/${space.id}/repository-connection`;
    expect((await t.api('GET', base)).body.code).toBe('repository_not_connected');

    const refused = await t.api('POST', base, { body: { cloneUrl: 'https://10.1.2.3/r.git' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'git_source_refused', pointer: '/cloneUrl' });

    const url = pathToFileURL(repo).href;
    const created = await t.api('POST', base, { body: { cloneUrl: url, appRoot: 'site' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({
      spaceId: space.id,
      provider: 'generic',
      cloneUrl: url,
      hasCredential: false,
      defaultBranch: null,
      productionBranch: 'main',
      appRoot: 'site',
      autoDeployProduction: true,
      autoDeployPreviews: true,
    });
    expect((await t.api('POST', base, { body: { cloneUrl: url } })).body.code).toBe(
      'repository_connection_exists',
    );

    const analysis = await t.api('POST', `${base}/analyze`, { body: {} });
    expect(analysis.status, analysis.text).toBe(200);
    expect(analysis.body.data).toMatchObject({
      ref: 'main',
      settings: {
        rootDirectory: { value: 'site', source: 'connection' },
        buildCommand: { value: 'npm run build', source: 'detected' },
        outputDirectory: { value: 'dist', source: 'detected' },
      },
      detected: { framework: 'node', packageManager: 'npm', buildCommand: 'npm run build' },
    });
    expect(analysis.body.data.commitSha).toMatch(/^[0-9a-f]{40}$/);
    const missing = await t.api('POST', `${base}/analyze`, { body: { ref: 'no-such-branch' } });
    expect(missing.status).toBe(422);
    expect(missing.body.code).toBe('git_clone_failed');

    const patched = await t.api('PATCH', base, {
      body: { productionBranch: 'feature', autoDeployPreviews: false, appRoot: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      productionBranch: 'feature',
      autoDeployPreviews: false,
      appRoot: null,
      cloneUrl: url,
    });
    expect((await t.api('PATCH', base, { body: { appRoot: '/etc' } })).body.pointer).toBe('/appRoot');

    expect((await t.api('DELETE', base)).status).toBe(204);
    expect((await t.api('GET', base)).status).toBe(404);
    expect((await t.api('DELETE', base)).status).toBe(404);
    const none = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: {} });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('repository_not_connected');
  });

  it('builds the production branch live and another ref as a preview; the log follows as a stream; events list the states', async () => {
    const space = await newSpace();
    const url = pathToFileURL(repo).href;
    expect(
      (
        await t.api('POST', `/v1/spaces/${space.id}/repository-connection`, {
          body: { cloneUrl: url, appRoot: 'site' },
        })
      ).status,
    ).toBe(201);

    const started = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: {} });
    expect(started.status, started.text).toBe(201);
    expect(started.body.data).toMatchObject({
      status: 'queued',
      branch: null,
      source: { type: 'connection', ref: 'main' },
    });
    const id = started.body.data.id as string;

    // Followed from the start: NDJSON, lines oldest first, ending with the finished build.
    const res = await fetch(`${t.url}/v1/builds/${id}/logs?follow=true`, {
      headers: { authorization: `Bearer ${t.ownerKey}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const items = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const end = items.at(-1);
    expect(end.type).toBe('end');
    expect(end.build).toMatchObject({ id, status: 'succeeded', channel: 'live' });
    const lines = items.filter((i) => i.type === 'line').map((i) => i.line as string);
    expect(lines.some((l) => l.includes('building for production'))).toBe(true);
    expect(lines.findIndex((l) => l.startsWith('$ git clone'))).toBeLessThan(
      lines.findIndex((l) => l.startsWith('published ')),
    );
    // The same lines as the paged log, in the opposite order.
    const paged = await t.api('GET', `/v1/builds/${id}/logs?limit=100`);
    expect(paged.body.data.map((l: { id: string }) => l.id)).toEqual(
      items
        .filter((i) => i.type === 'line')
        .map((i) => i.id)
        .reverse()
        .slice(0, 100),
    );

    const events = await t.api('GET', `/v1/builds/${id}/events`);
    expect(events.status).toBe(200);
    expect(events.body.data.map((e: { status: string }) => e.status)).toEqual([
      'queued',
      'running',
      'succeeded',
    ]);
    expect(Date.parse(events.body.data[2].at)).toBeGreaterThanOrEqual(Date.parse(events.body.data[0].at));

    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe(
      'built main',
    );

    const preview = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: { ref: 'feature' } });
    expect(preview.body.data).toMatchObject({
      branch: 'feature',
      source: { type: 'connection', ref: 'feature' },
    });
    expect(await finished(preview.body.data.id)).toMatchObject({
      status: 'succeeded',
      channel: 'br-feature',
    });
    expect((await t.api('GET', '/', { token: null, host: `br-feature--${space.slug}.localhost` })).text).toBe(
      'built feature',
    );
    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe(
      'built main',
    );

    // A retry builds the same connection ref again.
    const retry = await t.api('POST', `/v1/builds/${preview.body.data.id}/retry`);
    expect(retry.status).toBe(201);
    expect(await finished(retry.body.data.id)).toMatchObject({
      status: 'succeeded',
      source: { type: 'connection', ref: 'feature' },
      branch: 'feature',
    });

    // Following a finished build answers its whole log and the end at once.
    const again = await fetch(`${t.url}/v1/builds/${id}/logs?follow=true`, {
      headers: { authorization: `Bearer ${t.ownerKey}` },
    });
    const tail = (await again.text()).trim().split('\n');
    expect(JSON.parse(tail.at(-1)!)).toMatchObject({ type: 'end', build: { status: 'succeeded' } });
    expect(tail.length).toBe(items.length);
  });

  it('a follower that goes away leaves the build and other followers as they were', async () => {
    const space = await newSpace();
    await t.api('POST', `/v1/spaces/${space.id}/repository-connection`, {
      body: { cloneUrl: pathToFileURL(repo).href, appRoot: 'site' },
    });
    const b = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: { ref: 'slow', branch: null } });
    expect(b.status, b.text).toBe(201);
    const url = `${t.url}/v1/builds/${b.body.data.id}/logs?follow=true`;
    const headers = { authorization: `Bearer ${t.ownerKey}` };
    const staying = fetch(url, { headers }).then((r) => r.text());
    const leaving = new AbortController();
    const res = await fetch(url, { headers, signal: leaving.signal });
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('started')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    expect(seen).toContain('"line":"started"');
    leaving.abort();
    const all = (await staying).trim().split('\n');
    expect(JSON.parse(all.at(-1)!)).toMatchObject({
      type: 'end',
      build: { status: 'succeeded', channel: 'live' },
    });
    expect(await finished(b.body.data.id)).toMatchObject({ status: 'succeeded' });
  });

  it('clones with a token credential stored encrypted and never shown (another space’s own remote over HTTP)', async () => {
    const source = await newSpace();
    const remote = `http://127.0.0.1:${t.port}/git/${source.id}.git`;
    const work = path.join(dir, `push-${n}`);
    await git(dir, 'clone', '-q', repo, work);
    await git(work, 'push', '-q', `http://t:${t.ownerKey}@127.0.0.1:${t.port}/git/${source.id}.git`, 'main');

    const space = await newSpace();
    const base = `/v1/spaces/${space.id}/repository-connection`;
    const created = await t.api('POST', base, {
      body: { cloneUrl: remote, credential: { token: t.ownerKey, username: 't' }, appRoot: 'site' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.hasCredential).toBe(true);
    expect(created.text).not.toContain(t.ownerKey);
    expect((await t.api('GET', base)).text).not.toContain(t.ownerKey);
    const keyOnDisk = (f: string) => fs.readFileSync(f).includes(t.ownerKey);
    if (db === 'sqlite') {
      for (const f of fs.readdirSync(t.dataDir).filter((x) => x.endsWith('.db') || x.endsWith('.db-wal')))
        expect(keyOnDisk(path.join(t.dataDir, f)), f).toBe(false);
    }

    const b = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: {} });
    expect(b.status, b.text).toBe(201);
    const done = await finished(b.body.data.id);
    expect(done, JSON.stringify(done)).toMatchObject({ status: 'succeeded', channel: 'live' });
    const log = await fetch(`${t.url}/v1/builds/${done.id}/logs?follow=true`, {
      headers: { authorization: `Bearer ${t.ownerKey}` },
    });
    const text = await log.text();
    expect(text).not.toContain(t.ownerKey);
    expect(text).not.toContain(Buffer.from(`t:${t.ownerKey}`).toString('base64'));
    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe(
      'built main',
    );

    // Without the credential the same remote refuses the clone: the build fails, live stays.
    expect((await t.api('PATCH', base, { body: { credential: null } })).body.data.hasCredential).toBe(false);
    const denied = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: {} });
    expect(await finished(denied.body.data.id)).toMatchObject({
      status: 'failed',
      error: { code: 'git_clone_failed' },
    });
    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe(
      'built main',
    );
  });
});
