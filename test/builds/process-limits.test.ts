import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cageRoot } from '../../src/domain/builds/pids.ts';
import { DEFAULT_LIMITS, runStep } from '../../src/domain/builds/process.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * The process cap of a build step: a pids cgroup (pids.ts), which binds even a server running as
 * root, where `prlimit --nproc` binds nothing. Without a cgroup to make one in (no cgroup fs, no
 * write access) these tests are skipped — a real fork bomb must never run uncapped on the machine.
 */

const caged = cageRoot() !== null;
const running = (needle: string) => {
  try {
    return execFileSync('pgrep', ['-f', needle]).toString().trim();
  } catch {
    return '';
  }
};
const mark = () => String(700000 + Math.floor(Math.random() * 99999));

describe.skipIf(!caged)('the process cage of a build step', () => {
  let work: string;
  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'cage-test-'));
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  const step = (cmd: string, processes: number) =>
    runStep({
      command: 'sh',
      args: ['-c', cmd],
      cwd: work,
      workDir: work,
      env: { PATH: '/usr/bin:/bin' },
      limits: { ...DEFAULT_LIMITS, processes },
      sandbox: false,
      deadline: Date.now() + 20_000,
      signal: new AbortController().signal,
      onLine: () => {},
    });

  it('refuses processes past the limit, says so, and leaves none behind', async () => {
    const m = mark();
    const r = await step(`i=0; while [ $i -lt 100 ]; do sleep ${m} & i=$((i+1)); done; wait`, 16);
    expect(r.caged).toBe(true);
    expect(r.processLimitHit).toBe(true);
    expect(r.code).not.toBe(0);
    expect(running(`sleep ${m}`)).toBe('');
    // Its cgroup is gone.
    const left = fs.readdirSync(cageRoot()!).filter((d) => d.startsWith(`step-${process.pid}-`));
    expect(left).toEqual([]);
  });

  it('a step under the limit is not flagged', async () => {
    const r = await step('sleep 0.1 & sleep 0.1 & wait; echo ok', 16);
    expect(r).toMatchObject({ code: 0, processLimitHit: false, caged: true });
  });

  it('kills what left the process group with setsid', async () => {
    const m = mark();
    const r = await step(`setsid sleep ${m} > /dev/null 2>&1 < /dev/null & sleep 0.3; exit 0`, 16);
    expect(r.code).toBe(0);
    expect(running(`sleep ${m}`)).toBe('');
  });
});

describe.skipIf(!caged)('a fork bomb as the build command', () => {
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    t = await startServer({ env: { SPACES_JOB_POLL_MS: '50', SPACES_BUILD_TIMEOUT: '30' } });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bomb-test-'));
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('ends as a failed build with a clear message, nothing left running, live untouched', async () => {
    const created = await t.api('POST', '/v1/spaces', {
      body: { slug: `bomb-${Date.now().toString(36)}`, access: 'public' },
    });
    const space = created.body.data.space as { id: string; slug: string };
    const src = path.join(dir, 'src');
    fs.mkdirSync(src);
    fs.writeFileSync(path.join(src, 'index.html'), 'bomb');
    const m = mark();
    // The classic bomb (dash spelling), then a pause so it meets the cap before the step ends.
    fs.writeFileSync(
      path.join(src, 'spaces.json'),
      JSON.stringify({ build: { buildCommand: `b(){ b | b & }; b; sleep 2; echo ${m}` } }),
    );
    const b = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: { source: { type: 'upload' } } });
    expect(b.status).toBe(201);
    const put = await t.api('PUT', new URL(b.body.upload.url).pathname, {
      raw: execFileSync('tar', ['-C', src, '-czf', '-', '.']),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(put.status).toBe(200);
    let build: { status: string; error?: { code: string; message: string } } = b.body.data;
    const end = Date.now() + 60_000;
    while (!['succeeded', 'failed', 'canceled', 'skipped'].includes(build.status)) {
      if (Date.now() > end) throw new Error(`build still ${build.status}`);
      await new Promise((r) => setTimeout(r, 100));
      build = (await t.api('GET', `/v1/builds/${b.body.data.id}`)).body.data;
    }
    expect(build.status).toBe('failed');
    expect(build.error?.code).toBe('build_process_limit');
    expect(build.error?.message).toContain(String(DEFAULT_LIMITS.processes));
    const logs = await t.api('GET', `/v1/builds/${b.body.data.id}/logs?limit=100`);
    expect(JSON.stringify(logs.body.data)).toContain('refused to start more than');
    // Nothing of the bomb is left, and the space has no live version from it.
    expect(running(`echo ${m}`)).toBe('');
    const left = fs.readdirSync(cageRoot()!).filter((d) => d.startsWith(`step-${process.pid}-`));
    expect(left).toEqual([]);
    const live = await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` });
    expect(live.status).toBe(404);
  });
});
