import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCloneUrl } from '../../src/domain/builds/git.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

/**
 * Builds end to end against the real server: sources uploaded as archives and cloned with the real
 * git from local repositories (`file://`, allowed by SPACES_GIT_ALLOW), commands run by the real
 * runner (process group, prlimit, bubblewrap when installed), output published and served.
 */

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    stdio: 'pipe',
  })
    .toString()
    .trim();

function writeTree(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

function tarGz(dir: string): Buffer {
  return execFileSync('tar', ['-C', dir, '-czf', '-', '.']);
}

const running = (needle: string) => {
  try {
    return execFileSync('pgrep', ['-f', needle]).toString().trim();
  } catch {
    return '';
  }
};

describe('clone URLs a build may use', () => {
  it('refuses file:, loopback, private, plain http and other protocols unless allowed', async () => {
    const none = new Set<string>();
    for (const url of [
      'file:///tmp/repo',
      'https://127.0.0.1/r.git',
      'https://[::1]/r.git',
      'https://10.1.2.3/r.git',
      'https://169.254.169.254/latest',
      'http://93.184.216.34/r.git',
      'ext::sh -c touch% /tmp/pwned',
      'ssh://git@example.com/r.git',
      'https://user:pw@93.184.216.34/r.git',
    ]) {
      await expect(checkCloneUrl(url, none), url).rejects.toMatchObject({ code: 'git_source_refused' });
    }
    await expect(checkCloneUrl('https://93.184.216.34/r.git', none)).resolves.toMatchObject({
      protocol: 'https',
    });
    await expect(checkCloneUrl('file:///tmp/repo', new Set(['file']))).resolves.toMatchObject({
      protocol: 'file',
    });
    await expect(checkCloneUrl('https://127.0.0.1/r.git', new Set(['loopback']))).resolves.toBeTruthy();
  });
});

describeEachDb('builds', (db) => {
  let t: TestServer;
  let dir: string;
  let n = 0;

  beforeAll(async () => {
    t = await startServer({
      db,
      env: { SPACES_GIT_ALLOW: 'file', SPACES_JOB_POLL_MS: '50', SPACES_BUILD_TIMEOUT: '8' },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'builds-test-'));
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const newSpace = async () => {
    const r = await t.api('POST', '/v1/spaces', {
      body: { slug: `b${db[0]}-${Date.now().toString(36)}-${n++}`, access: 'public' },
    });
    expect(r.status).toBe(201);
    return r.body.data.space as { id: string; slug: string };
  };
  const site = (host: string, p = '/') => t.api('GET', p, { token: null, host: `${host}.localhost` });

  async function finished(id: string, ms = 30_000) {
    const end = Date.now() + ms;
    for (;;) {
      const r = await t.api('GET', `/v1/builds/${id}`);
      expect(r.status).toBe(200);
      if (['succeeded', 'failed', 'canceled', 'skipped'].includes(r.body.data.status)) return r.body.data;
      if (Date.now() > end) throw new Error(`build ${id} still ${r.body.data.status}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  async function logText(id: string): Promise<string> {
    const lines: string[] = [];
    let cursor: string | null = null;
    do {
      const r: {
        status: number;
        body: { data: Array<{ line: string }>; pagination: { nextCursor: string | null } };
      } = await t.api('GET', `/v1/builds/${id}/logs?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      lines.push(...r.body.data.map((l: { line: string }) => l.line));
      cursor = r.body.pagination.nextCursor;
    } while (cursor);
    return lines.reverse().join('\n');
  }
  async function uploadBuild(spaceId: string, files: Record<string, string>, extra: object = {}) {
    const src = fs.mkdtempSync(path.join(dir, 'src-'));
    writeTree(src, files);
    const created = await t.api('POST', `/v1/spaces/${spaceId}/builds`, {
      body: { source: { type: 'upload' }, ...extra },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.status).toBe('waiting_for_source');
    expect(created.body.upload).toMatchObject({ method: 'PUT' });
    const put = await t.api('PUT', new URL(created.body.upload.url).pathname, {
      raw: tarGz(src),
      headers: { 'content-type': 'application/gzip' },
    });
    expect(put.status, put.text).toBe(200);
    expect(['queued', 'running', 'succeeded']).toContain(put.body.data.status);
    return created.body.data.id as string;
  }

  it('builds an uploaded source with the space’s variables and serves the output live; settings say where they came from', async () => {
    const space = await newSpace();
    expect(
      (await t.api('PUT', `/v1/spaces/${space.id}/variables/GREETING`, { body: { value: 'hello' } })).status,
    ).toBe(201);
    const id = await uploadBuild(space.id, {
      'spaces.json': JSON.stringify({
        build: {
          buildCommand: 'mkdir -p out && echo "built-$GREETING" > out/index.html',
          outputDirectory: 'out',
        },
      }),
      'README.md': 'source',
    });
    const b = await finished(id);
    expect(b, JSON.stringify(b)).toMatchObject({ status: 'succeeded', channel: 'live', error: null });
    expect(b.settings.buildCommand.source).toBe('repository');
    expect(b.settings.frameworkPreset).toMatchObject({ value: 'static', source: 'detected' });
    expect((await site(space.slug)).text).toBe('built-hello\n');
    const listed = await t.api('GET', `/v1/spaces/${space.id}/builds`);
    expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual([id]);

    // The space's config overlay wins over the repository's file.
    const patched = await t.api('PATCH', `/v1/spaces/${space.id}`, {
      body: { config: { build: { buildCommand: 'mkdir -p out && echo overlay > out/index.html' } } },
    });
    expect(patched.status, patched.text).toBe(200);
    const retried = await t.api('POST', `/v1/builds/${id}/retry`);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body.data.retryOf).toBe(id);
    const r2 = await finished(retried.body.data.id);
    expect(r2.status).toBe('succeeded');
    expect(r2.settings.buildCommand.source).toBe('space_config');
    expect(r2.settings.outputDirectory.source).toBe('repository');
    expect((await site(space.slug)).text).toBe('overlay\n');

    // Retrying needs a finished build; cancel of a finished build answers it as it is.
    expect((await t.api('POST', `/v1/builds/${r2.id}/cancel`)).body.data.status).toBe('succeeded');
  });

  it('a failing build leaves live as it was and shows the failing lines', async () => {
    const space = await newSpace();
    const ok = await finished(await uploadBuild(space.id, { 'index.html': 'first' }));
    expect(ok.status).toBe('succeeded');
    const id = await uploadBuild(space.id, {
      'spaces.json': JSON.stringify({ build: { buildCommand: 'echo step-one; echo it-broke >&2; exit 3' } }),
      'index.html': 'second',
    });
    const b = await finished(id);
    expect(b).toMatchObject({ status: 'failed', error: { code: 'build_command_failed' }, versionId: null });
    expect(b.error.message).toContain('exited with 3');
    const log = await logText(id);
    expect(log).toContain('step-one');
    expect(log).toContain('it-broke');
    expect((await site(space.slug)).text).toBe('first');
    // Logs are newest first.
    const page = await t.api('GET', `/v1/builds/${id}/logs?limit=1`);
    expect(page.body.data[0].line).toContain('failed');
    expect(page.body.pagination.hasMore).toBe(true);
  });

  it('never writes a secret (or its base64) to the log', async () => {
    const space = await newSpace();
    const secret = `s3cr3t-${Math.random().toString(36).slice(2)}`;
    const put = await t.api('PUT', `/v1/spaces/${space.id}/variables/API_TOKEN`, {
      body: { value: secret, secret: true },
    });
    expect(put.status).toBe(201);
    const id = await uploadBuild(space.id, {
      'spaces.json': JSON.stringify({
        build: {
          buildCommand:
            'echo "token=$API_TOKEN"; printf %s "$API_TOKEN" | base64; echo "$API_TOKEN" >&2; mkdir -p o; printf %s "$API_TOKEN" > o/t.txt',
          outputDirectory: 'o',
        },
      }),
    });
    const b = await finished(id);
    expect(b.status).toBe('succeeded');
    const raw = (await t.api('GET', `/v1/builds/${id}/logs?limit=100`)).text;
    const log = await logText(id);
    for (const form of [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64').replace(/=+$/, ''),
    ]) {
      expect(Buffer.from(raw).includes(Buffer.from(form))).toBe(false);
      expect(log.includes(form)).toBe(false);
    }
    expect(log).toContain('token=[redacted]');
    // The build itself did see it.
    expect((await site(space.slug, '/t.txt')).text).toBe(secret);
  });

  it('cancel kills the whole process tree and is idempotent', async () => {
    const space = await newSpace();
    const mark = String(900000 + Math.floor(Math.random() * 99999));
    const id = await uploadBuild(space.id, {
      'spaces.json': JSON.stringify({
        build: { buildCommand: `(sleep ${mark}1 &) ; sleep ${mark}2 & echo started; sleep ${mark}3` },
      }),
    });
    const end = Date.now() + 15_000;
    while (!(await logText(id)).includes('started')) {
      if (Date.now() > end) throw new Error('build never started');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(running(`sleep ${mark}`)).not.toBe('');
    const c = await t.api('POST', `/v1/builds/${id}/cancel`);
    expect(c.status).toBe(200);
    const b = await finished(id);
    expect(b.status).toBe('canceled');
    expect(running(`sleep ${mark}`)).toBe('');
    const again = await t.api('POST', `/v1/builds/${id}/cancel`);
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('canceled');
    // A build waiting for its source is canceled at once.
    const w = await t.api('POST', `/v1/spaces/${space.id}/builds`, { body: { source: { type: 'upload' } } });
    const cw = await t.api('POST', `/v1/builds/${w.body.data.id}/cancel`);
    expect(cw.body.data.status).toBe('canceled');
    const late = await t.api('PUT', `/v1/builds/${w.body.data.id}/source`, { raw: Buffer.from('x') });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('build_not_waiting_for_source');
  });

  it('stops a build at its time limit', async () => {
    const space = await newSpace();
    const mark = String(800000 + Math.floor(Math.random() * 99999));
    const id = await uploadBuild(space.id, {
      'spaces.json': JSON.stringify({ build: { buildCommand: `sleep ${mark}` } }),
    });
    const b = await finished(id, 30_000);
    expect(b).toMatchObject({ status: 'failed', error: { code: 'build_timed_out' } });
    expect(running(`sleep ${mark}`)).toBe('');
  });

  it('builds a git repository at a branch: production goes live, another branch to br-<slug>', async () => {
    const space = await newSpace();
    const repo = path.join(dir, `repo-${n++}`);
    fs.mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeTree(repo, { 'index.html': 'from main' });
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'one');
    const sha = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-qb', 'feature/New_UI');
    writeTree(repo, { 'index.html': 'from feature' });
    git(repo, 'commit', '-qam', 'two');

    const prod = await t.api('POST', `/v1/spaces/${space.id}/builds`, {
      body: { source: { type: 'git', url: `file://${repo}`, ref: 'main' } },
    });
    expect(prod.status, prod.text).toBe(201);
    expect(prod.body.upload).toBeNull();
    const p = await finished(prod.body.data.id);
    expect(p, await logText(p.id)).toMatchObject({
      status: 'succeeded',
      channel: 'live',
      source: { commitSha: sha },
    });
    expect((await site(space.slug)).text).toBe('from main');

    const br = await t.api('POST', `/v1/spaces/${space.id}/builds`, {
      body: {
        source: { type: 'git', url: `file://${repo}`, ref: 'feature/New_UI' },
        branch: 'feature/New_UI',
      },
    });
    const f = await finished(br.body.data.id);
    expect(f).toMatchObject({ status: 'succeeded', channel: 'br-feature-new-ui' });
    expect((await site(`br-feature-new-ui--${space.slug}`)).text).toBe('from feature');
    expect((await site(space.slug)).text).toBe('from main');
    // The branch build moved its own channel only: `preview` was never pointed at it.
    const channels = (await t.api('GET', `/v1/spaces/${space.id}/channels`)).body.data;
    expect(channels.map((c: { name: string }) => c.name).sort()).toEqual(['br-feature-new-ui', 'live']);

    const bad = await t.api('POST', `/v1/spaces/${space.id}/builds`, {
      body: { source: { type: 'git', url: `file://${repo}`, ref: '--upload-pack=touch /tmp/x' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_git_ref');
  });

  it('hostile repositories end as failed builds and touch nothing outside the work dir', async () => {
    const space = await newSpace();
    const outside = path.join(dir, `outside-${n++}`);
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'do not publish');

    // A symlink pointing outside is checked out as a plain file holding its target's name.
    const repo = path.join(dir, `hostile-${n++}`);
    fs.mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeTree(repo, { 'index.html': 'hostile' });
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'leak.txt'));
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'links');
    const b1 = await t.api('POST', `/v1/spaces/${space.id}/builds`, {
      body: { source: { type: 'git', url: `file://${repo}` } },
    });
    expect((await finished(b1.body.data.id)).status).toBe('succeeded');
    expect((await site(space.slug, '/leak.txt')).text).toBe(path.join(outside, 'secret.txt'));

    // A tree with a `.git` entry is refused by git's own checks.
    const dotgit = path.join(dir, `dotgit-${n++}`);
    fs.mkdirSync(dotgit);
    git(dotgit, 'init', '-q', '-b', 'main');
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: dotgit,
      input: `gitdir: ${outside}\n`,
    })
      .toString()
      .trim();
    const tree = execFileSync('git', ['mktree'], { cwd: dotgit, input: `100644 blob ${blob}\t.git\n` })
      .toString()
      .trim();
    const commit = git(dotgit, 'commit-tree', tree, '-m', 'x');
    git(dotgit, 'update-ref', 'refs/heads/main', commit);
    const b2 = await t.api('POST', `/v1/spaces/${space.id}/builds`, {
      body: { source: { type: 'git', url: `file://${dotgit}` } },
    });
    const f2 = await finished(b2.body.data.id);
    expect(f2).toMatchObject({ status: 'failed', error: { code: 'git_clone_failed' } });
    expect(await logText(f2.id)).toContain('.git');

    // An output directory that escapes the work dir through a link.
    const esc = await finished(
      await uploadBuild(space.id, {
        'spaces.json': JSON.stringify({
          build: { buildCommand: `ln -s ${outside} out`, outputDirectory: 'out' },
        }),
      }),
    );
    expect(esc).toMatchObject({ status: 'failed', error: { code: 'build_output_outside' } });
    const up = await finished(
      await uploadBuild(space.id, { 'spaces.json': JSON.stringify({ build: { outputDirectory: '../..' } }) }),
    );
    expect(up).toMatchObject({ status: 'failed', error: { code: 'build_output_outside' } });

    // A file past the size limit (sparse: nothing is written) stops the command.
    const big = await finished(
      await uploadBuild(space.id, {
        'spaces.json': JSON.stringify({
          build: { buildCommand: 'mkdir -p o && truncate -s 600M o/big', outputDirectory: 'o' },
        }),
      }),
    );
    expect(big).toMatchObject({ status: 'failed', error: { code: 'build_command_failed' } });

    // Writing outside the work dir fails inside the sandbox (bubblewrap is installed by .ci/system-deps).
    const w = await finished(
      await uploadBuild(space.id, {
        'spaces.json': JSON.stringify({ build: { buildCommand: `echo pwned > ${outside}/pwned.txt` } }),
      }),
    );
    expect(w.status).toBe('failed');
    expect(fs.existsSync(path.join(outside, 'pwned.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('do not publish');
    expect((await site(space.slug)).text).toBe('hostile');
  });

  it('skips the build when ignoredBuildCommand exits 0', async () => {
    const space = await newSpace();
    const b = await finished(
      await uploadBuild(space.id, {
        'spaces.json': JSON.stringify({ build: { ignoredBuildCommand: 'true', buildCommand: 'exit 1' } }),
      }),
    );
    expect(b).toMatchObject({ status: 'skipped', versionId: null });
  });
});
