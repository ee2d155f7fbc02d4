import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

/**
 * `git push` to a space's own remote over smart HTTP (the real git client against the real server
 * and the system `git http-backend`): the default branch builds and goes live, another branch to its
 * preview channel; a wrong key gets 401 and no repository data.
 */
describeEachDb('git push remote', (db) => {
  let t: TestServer;
  let dir: string;

  beforeAll(async () => {
    t = await startServer({ db, env: { SPACES_JOB_POLL_MS: '50' } });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'git-push-'));
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Asynchronous: the server answering the push runs in this same process.
  const git = async (cwd: string, ...args: string[]) =>
    (
      await promisify(execFile)('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        cwd,
        env: { PATH: process.env.PATH, HOME: dir, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
      })
    ).stdout;

  async function latestBuild(spaceId: string, branch: string | null) {
    const end = Date.now() + 30_000;
    for (;;) {
      const r = await t.api('GET', `/v1/spaces/${spaceId}/builds`);
      const b = r.body.data.find((x: { branch: string | null }) => x.branch === branch);
      if (b && ['succeeded', 'failed', 'canceled', 'skipped'].includes(b.status)) return b;
      if (Date.now() > end)
        throw new Error(`no finished build for ${branch}: ${JSON.stringify(r.body.data)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  it('a push with an API key builds the default branch live and another branch as a preview', async () => {
    const created = await t.api('POST', '/v1/spaces', {
      body: { slug: `gp-${db[0]}-${Date.now().toString(36)}`, access: 'public' },
    });
    expect(created.status).toBe(201);
    const space = created.body.data.space;
    expect(space.git).toEqual({
      managedBy: 'service',
      remoteUrl: `http://localhost:${t.port}/git/${space.id}.git`,
      repository: null,
      defaultBranch: 'main',
    });
    const repo = path.join(dir, 'site');
    fs.mkdirSync(repo);
    await git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'index.html'), 'pushed to main');
    await git(repo, 'add', '.');
    await git(repo, 'commit', '-qm', 'one');
    const remote = `http://t:${t.ownerKey}@127.0.0.1:${t.port}/git/${space.id}.git`;
    await git(repo, 'push', '-q', remote, 'main');
    const b = await latestBuild(space.id, null);
    expect(b).toMatchObject({
      status: 'succeeded',
      channel: 'live',
      source: { type: 'push', ref: 'main', url: null },
    });
    const home = await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` });
    expect(home.text).toBe('pushed to main');

    await git(repo, 'checkout', '-qb', 'next');
    fs.writeFileSync(path.join(repo, 'index.html'), 'pushed to next');
    await git(repo, 'commit', '-qam', 'two');
    await git(repo, 'push', '-q', remote, 'next');
    const nb = await latestBuild(space.id, 'next');
    expect(nb).toMatchObject({ status: 'succeeded', channel: 'br-next' });
    expect((await t.api('GET', '/', { token: null, host: `br-next--${space.slug}.localhost` })).text).toBe(
      'pushed to next',
    );
    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe(
      'pushed to main',
    );

    // Deleting the branch retires its channel: the branch host stops serving, live stays.
    await git(repo, 'push', '-q', remote, ':next');
    const channels = async () =>
      (await t.api('GET', `/v1/spaces/${space.id}/channels`)).body.data.map((c: { name: string }) => c.name);
    const until = Date.now() + 10_000;
    while ((await channels()).includes('br-next') && Date.now() < until)
      await new Promise((res) => setTimeout(res, 50));
    expect(await channels()).not.toContain('br-next');
    expect(await channels()).toContain('live');
    expect((await t.api('GET', '/', { token: null, host: `br-next--${space.slug}.localhost` })).status).toBe(
      404,
    );
    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe(
      'pushed to main',
    );

    // The remote can be fetched back with the same key.
    const clone = path.join(dir, 'clone');
    await git(dir, 'clone', '-q', remote, clone);
    expect(fs.readFileSync(path.join(clone, 'index.html'), 'utf8')).toBe('pushed to main');
  });

  it('a key bound to the space publishes by push; the same key cannot read or push another space', async () => {
    const mk = async (p: string) =>
      (
        await t.api('POST', '/v1/spaces', {
          body: { slug: `${p}-${db[0]}-${Date.now().toString(36)}`, access: 'public' },
        })
      ).body.data.space;
    const space = await mk('gk');
    const other = await mk('go');
    const k = await t.api('POST', '/v1/account/api-keys', { body: { name: 'push', space: space.id } });
    expect(k.status).toBe(201);
    const key = k.body.data.token as string;
    const repo = path.join(dir, `bound-${db[0]}`);
    fs.mkdirSync(repo);
    await git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'index.html'), 'pushed with the space key');
    await git(repo, 'add', '.');
    await git(repo, 'commit', '-qm', 'one');
    await git(repo, 'push', '-q', `http://t:${key}@127.0.0.1:${t.port}/git/${space.id}.git`, 'main');
    expect(await latestBuild(space.id, null)).toMatchObject({ status: 'succeeded', channel: 'live' });
    const home = await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` });
    expect(home.text).toBe('pushed with the space key');
    // The other space: neither its refs nor a push.
    const refs = await t.api('GET', `/git/${other.id}.git/info/refs?service=git-upload-pack`, {
      token: null,
      headers: { authorization: `Basic ${Buffer.from(`t:${key}`).toString('base64')}` },
    });
    expect(refs.status).toBe(404);
    expect(refs.text).not.toContain('refs/heads');
    await expect(
      git(repo, 'push', '-q', `http://t:${key}@127.0.0.1:${t.port}/git/${other.id}.git`, 'main'),
    ).rejects.toThrow();
    expect((await t.api('GET', `/v1/spaces/${other.id}/builds`)).body.data).toEqual([]);
  });

  it('a wrong key gets 401 with a Basic challenge and no repository data', async () => {
    const created = await t.api('POST', '/v1/spaces', {
      body: { slug: `gw-${db[0]}-${Date.now().toString(36)}` },
    });
    const space = created.body.data.space;
    const bad = Buffer.from(`t:sfa_${'0'.repeat(64)}`).toString('base64');
    for (const auth of [`Basic ${bad}`, undefined]) {
      const r = await t.api('GET', `/git/${space.id}.git/info/refs?service=git-upload-pack`, {
        token: null,
        headers: auth ? { authorization: auth } : {},
      });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(/^Basic realm="spaces git"/);
      expect(r.headers['content-type']).toContain('application/problem+json');
      expect(r.text).not.toContain('refs/heads');
      expect(r.text).not.toContain('service=');
    }
    const repo = path.join(dir, 'denied');
    fs.mkdirSync(repo);
    await git(repo, 'init', '-q', '-b', 'main');
    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'x');
    await expect(
      git(repo, 'push', '-q', `http://t:sfa_wrong@127.0.0.1:${t.port}/git/${space.id}.git`, 'main'),
    ).rejects.toThrow();
    expect((await t.api('GET', `/v1/spaces/${space.id}/builds`)).body.data).toEqual([]);
  });

  it('pushes honour the repository connection’s auto-deploy flags; a push turned away is a skipped build saying why', async () => {
    const created = await t.api('POST', '/v1/spaces', {
      body: { slug: `ga-${db[0]}-${Date.now().toString(36)}`, access: 'public' },
    });
    const space = created.body.data.space;
    const conn = `/v1/spaces/${space.id}/repository-connection`;
    const made = await t.api('POST', conn, {
      body: { cloneUrl: 'https://93.184.216.34/site.git', autoDeployPreviews: false },
    });
    expect(made.status, made.text).toBe(201);
    const repo = path.join(dir, `auto-${db[0]}`);
    fs.mkdirSync(repo);
    await git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'index.html'), 'main one');
    await git(repo, 'add', '.');
    await git(repo, 'commit', '-qm', 'one');
    const remote = `http://t:${t.ownerKey}@127.0.0.1:${t.port}/git/${space.id}.git`;
    await git(repo, 'push', '-q', remote, 'main');
    expect(await latestBuild(space.id, null)).toMatchObject({ status: 'succeeded', channel: 'live' });

    // Previews off: a push to another branch is recorded, not built.
    await git(repo, 'checkout', '-qb', 'feature');
    fs.writeFileSync(path.join(repo, 'index.html'), 'feature one');
    await git(repo, 'commit', '-qam', 'feature');
    const featureSha = (await git(repo, 'rev-parse', 'HEAD')).trim();
    await git(repo, 'push', '-q', remote, 'feature');
    const skipped = await latestBuild(space.id, 'feature');
    expect(skipped).toMatchObject({
      status: 'skipped',
      versionId: null,
      channel: null,
      source: { type: 'push', ref: 'feature', commitSha: featureSha },
      error: { code: 'auto_deploy_disabled' },
    });
    expect(skipped.error.message).toContain('autoDeployPreviews is off');
    expect(
      (await t.api('GET', `/v1/builds/${skipped.id}/events`)).body.data.map(
        (e: { status: string }) => e.status,
      ),
    ).toEqual(['skipped']);
    const activity = await t.api('GET', `/v1/spaces/${space.id}/activity?limit=100`);
    const codes = activity.body.data.map((e: { code: string }) => e.code);
    expect(codes).toContain('build.skipped');
    expect(
      (await t.api('GET', '/', { token: null, host: `br-feature--${space.slug}.localhost` })).status,
    ).toBe(404);

    // Production off, previews on: main is recorded as skipped and live stays; the branch builds.
    expect(
      (await t.api('PATCH', conn, { body: { autoDeployProduction: false, autoDeployPreviews: true } }))
        .status,
    ).toBe(200);
    await git(repo, 'checkout', '-q', 'main');
    fs.writeFileSync(path.join(repo, 'index.html'), 'main two');
    await git(repo, 'commit', '-qam', 'two');
    await git(repo, 'push', '-q', remote, 'main');
    const until = Date.now() + 15_000;
    let mainBuilds: Array<{ id: string; status: string; error: { code: string; message: string } | null }> =
      [];
    while (Date.now() < until) {
      mainBuilds = (await t.api('GET', `/v1/spaces/${space.id}/builds`)).body.data.filter(
        (b: { branch: string | null }) => b.branch === null,
      );
      if (mainBuilds.length === 2) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(mainBuilds[0]).toMatchObject({ status: 'skipped', error: { code: 'auto_deploy_disabled' } });
    expect(mainBuilds[0]!.error!.message).toContain('autoDeployProduction is off');
    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe('main one');

    await git(repo, 'checkout', '-q', 'feature');
    fs.writeFileSync(path.join(repo, 'index.html'), 'feature two');
    await git(repo, 'commit', '-qam', 'feature two');
    await git(repo, 'push', '-q', remote, 'feature');
    const end = Date.now() + 30_000;
    let built: { status: string; channel: string | null } | undefined;
    while (Date.now() < end) {
      built = (await t.api('GET', `/v1/spaces/${space.id}/builds`)).body.data.find(
        (b: { branch: string | null; status: string }) => b.branch === 'feature' && b.status !== 'skipped',
      );
      if (built && ['succeeded', 'failed'].includes(built.status)) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(built).toMatchObject({ status: 'succeeded', channel: 'br-feature' });
    expect((await t.api('GET', '/', { token: null, host: `br-feature--${space.slug}.localhost` })).text).toBe(
      'feature two',
    );

    // A skipped push build runs when retried (the "build now" of a push turned away).
    const retried = await t.api('POST', `/v1/builds/${mainBuilds[0]!.id}/retry`);
    expect(retried.status, retried.text).toBe(201);
    const rid = retried.body.data.id;
    const stop = Date.now() + 30_000;
    let r = retried.body.data;
    while (!['succeeded', 'failed', 'canceled', 'skipped'].includes(r.status) && Date.now() < stop) {
      await new Promise((res) => setTimeout(res, 100));
      r = (await t.api('GET', `/v1/builds/${rid}`)).body.data;
    }
    expect(r).toMatchObject({ status: 'succeeded', channel: 'live' });
    expect((await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` })).text).toBe('main two');
  });
});
