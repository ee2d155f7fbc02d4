import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv, writeSite } from './helpers.ts';

let t: TestServer;
let e: CliEnv;

const blobCount = async () =>
  Number(
    (
      await t.server.services.database.db
        .selectFrom('blobs')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

beforeAll(async () => {
  t = await startServer();
  e = cliEnv(t.url);
});
afterAll(async () => {
  await t.close();
});

describe('spaces CLI end to end', () => {
  it('logs in with a token, publishes 300 files, re-publishes one change, rolls back', async () => {
    const login = await cli(e, ['login', '--token', t.ownerKey, '--json']);
    expect(login.code, login.stderr).toBe(0);
    expect(login.json().apiUrl).toBe(t.url);
    const cfg = path.join(e.configDir, 'config.json');
    expect(fs.statSync(cfg).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(cfg, 'utf8')).profiles.default.token).toBe(t.ownerKey);

    const who = await cli(e, ['whoami', '--json']);
    expect(who.code, who.stderr).toBe(0);
    expect(who.json().credential.kind).toBeTruthy();

    const site = path.join(e.cwd, 'site');
    writeSite(site, 300);
    fs.writeFileSync(path.join(site, '.env'), 'SECRET=1'); // dotfiles stay home
    fs.mkdirSync(path.join(site, 'node_modules'));
    fs.writeFileSync(path.join(site, 'node_modules', 'x.js'), 'x');
    fs.mkdirSync(path.join(site, '.well-known'));
    fs.writeFileSync(path.join(site, '.well-known', 'security.txt'), 'Contact: x');
    fs.writeFileSync(path.join(site, '.spacesignore'), 'assets/file-0297.txt\n');

    const before = await blobCount();
    const first = await cli(e, ['publish', 'site', '--json', '--slug', 'cli-site', '--message', 'first']);
    expect(first.code, first.stderr).toBe(0);
    const r1 = first.json();
    expect(r1.space.slug).toBe('cli-site');
    expect(r1.version.status).toBe('ready');
    expect(r1.version.channels).toContain('live');
    expect(r1.files.total).toBe(300); // 300 written, 1 ignored by .spacesignore, .well-known kept
    expect(r1.uploaded.files).toBe(300);
    expect(r1.siteUrl).toBe(r1.space.liveUrl);
    expect(r1.immutableUrl).toMatch(/^http/);
    expect(await blobCount()).toBe(before + 300); // every file has distinct bytes
    // The published directory is linked (its `.spaces` is never published: dotfiles stay home).
    const state = JSON.parse(fs.readFileSync(path.join(site, '.spaces', 'state.json'), 'utf8'));
    expect(state.spaceId).toBe(r1.space.id);
    expect(fs.existsSync(path.join(e.cwd, '.spaces'))).toBe(false);
    const inSite = { ...e, cwd: site };

    // The server holds what was published, and nothing that was ignored.
    const files = await cli(inSite, ['versions', 'files', 'latest', '--json']);
    const paths = files.json().map((f: { path: string }) => f.path);
    expect(paths).toContain('.well-known/security.txt');
    expect(paths).not.toContain('.env');
    expect(paths).not.toContain('node_modules/x.js');
    expect(paths).not.toContain('assets/file-0297.txt');

    // Unchanged: a no-op.
    const same = await cli(e, ['publish', 'site', '--json']);
    expect(same.code, same.stderr).toBe(0);
    expect(same.json().noop).toBe(true);

    // One change: exactly one upload, seen from the server side.
    fs.writeFileSync(path.join(site, 'index.html'), '<!doctype html><title>home</title><h1>Hello again</h1>');
    const dry = await cli(e, ['publish', 'site', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json().dryRun.upload).toEqual([{ path: 'index.html', size: expect.any(Number) }]);
    const mid = await blobCount();
    const second = await cli(e, ['publish', 'site', '--json', '--stream']);
    expect(second.code, second.stderr).toBe(0);
    const events = second.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((x) => x.event)).toContain('hashing');
    expect(events.map((x) => x.event)).toContain('finalizing');
    const r2 = events.at(-1).data;
    expect(events.at(-1).event).toBe('result');
    expect(r2.uploaded).toEqual({ files: 1, bytes: expect.any(Number) });
    expect(r2.version.number).toBe(2);
    expect(await blobCount()).toBe(mid + 1);

    const live = await t.api('GET', `/v1/spaces/${r1.space.id}`);
    expect(live.body.data.space.channels.live.versionId).toBe(r2.version.id);

    // Rollback with no version: the one live before.
    const rb = await cli(inSite, ['rollback', '--json']);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.json().versionId).toBe(r1.version.id);
    expect(rb.json().previousVersionId).toBe(r2.version.id);
    const after = await t.api('GET', `/v1/spaces/${r1.space.id}`);
    expect(after.body.data.space.channels.live.versionId).toBe(r1.version.id);

    const ls = await cli(inSite, ['versions', 'ls', '--json']);
    expect(ls.json().map((v: { number: number }) => v.number)).toEqual([2, 1]);

    const diff = await cli(inSite, ['diff', 'v1', 'v2', '--json']);
    expect(diff.json().changed).toEqual(['index.html']);

    const dl = await cli(inSite, ['download', '--version', 'v2', '--output', '../out', '--json']);
    expect(dl.code, dl.stderr).toBe(0);
    expect(fs.readFileSync(path.join(e.cwd, 'out', 'index.html'), 'utf8')).toContain('Hello again');

    // Rolling forward again, in words: the version numbers and who can see the URL.
    const fwd = await cli(inSite, ['rollback', 'v2']);
    expect(fwd.code, fwd.stderr).toBe(0);
    expect(fwd.stdout).toContain('Rolled live back to v2');
    expect(fwd.stdout).toContain('was v1.');
    expect(fwd.stdout).toMatch(/Live \((public|team only|private)\): http/);

    // Human output names the live URL.
    const human = await cli(inSite, ['inspect']);
    expect(human.stdout).toContain(r1.space.liveUrl);
  });

  it('writes the hash cache while the server checks the manifest, and when the publish fails', async () => {
    const site = path.join(e.cwd, 'cached');
    writeSite(site, 40);
    // The cache never trusts a file changed in the last 2 s (its ctime, which nothing can set back).
    await new Promise((r) => setTimeout(r, 2100));
    const events = (out: string) =>
      out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    const hashed = (out: string) => events(out).find((ev) => ev.event === 'hashed');
    // The server refuses the create (no such space): the hashes are kept all the same.
    const failed = await cli(e, ['publish', 'cached', '--space', 'no-such-space', '--json', '--stream'], {
      env: { SPACES_TOKEN: t.ownerKey },
    });
    expect(failed.code).toBe(4);
    // Every line of --stream output is a JSON document, the failure too.
    expect(events(failed.stdout).at(-1)).toMatchObject({ event: 'error', data: { status: 404 } });
    const files = events(failed.stdout).find((ev) => ev.event === 'collected').files;
    expect(hashed(failed.stdout).fromCache).toBe(0);
    const ok = await cli(e, ['publish', 'cached', '--slug', 'cached-site', '--json', '--stream'], {
      env: { SPACES_TOKEN: t.ownerKey },
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(hashed(ok.stdout).fromCache).toBe(files);
    // Written again by that publish (while its manifest was checked): a third run reads nothing either.
    fs.rmSync(path.join(e.configDir, 'cache'), { recursive: true, force: true });
    const again = await cli(e, ['publish', 'cached', '--slug', 'cached-site', '--json', '--stream'], {
      env: { SPACES_TOKEN: t.ownerKey },
    });
    expect(again.code, again.stderr).toBe(0);
    const third = await cli(e, ['publish', 'cached', '--slug', 'cached-site', '--json', '--stream'], {
      env: { SPACES_TOKEN: t.ownerKey },
    });
    expect(hashed(third.stdout).fromCache).toBe(files);
    expect(events(third.stdout).some((ev) => ev.event === 'noop')).toBe(true);
  });

  it('prints problems readably with documented exit codes', async () => {
    const bad = await cli(e, ['whoami'], { env: { SPACES_TOKEN: 'sfa_nope' } });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/code: \w+/);
    expect(bad.stderr).toMatch(/request id: req_/);
    expect(bad.stdout).toBe('');

    const badJson = await cli(e, ['whoami', '--json'], { env: { SPACES_TOKEN: 'sfa_nope' } });
    expect(badJson.code).toBe(3);
    expect(badJson.json().status).toBe(401);

    const missing = await cli(e, ['inspect', '--space', 'no-such-space', '--token', t.ownerKey]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('not_found');

    const usage = await cli(e, ['publish', '--target', 'staging']);
    expect(usage.code).toBe(2);
    const unknown = await cli(e, ['frobnicate']);
    expect(unknown.code).toBe(2);
  });
});
