import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { tarGzOf } from '../publishing/helpers.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

let t: TestServer;
let e: CliEnv;
let spaceId: string;

beforeAll(async () => {
  t = await startServer();
  e = cliEnv(t.url);
  const res = await t.api('POST', '/v1/spaces', { body: { slug: 'cmd-site' } });
  spaceId = res.body.data.space.id;
});
afterAll(async () => {
  await t.close();
});

describe('spaces CLI commands', () => {
  it('prints a large answer whole into a pipe before it exits', async () => {
    // The OpenAPI document is hundreds of KiB: far more than a pipe holds while the reader is slow.
    const direct = await t.api('GET', '/v1/openapi.json', { token: null });
    expect(direct.status).toBe(200);
    expect(direct.text.length).toBeGreaterThan(256 * 1024);
    const r = await cli(e, ['api', 'GET', '/v1/openapi.json'], { readAfterMs: 500 });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(direct.text));
  });

  it('links by slug, keeps secrets out of output, pages raw API calls, writes spaces.jsonc', async () => {
    expect((await cli(e, ['login', '--token', t.ownerKey])).code).toBe(0);

    const link = await cli(e, ['link', 'cmd-site', '--json']);
    expect(link.code, link.stderr).toBe(0);
    expect(link.json().spaceId).toBe(spaceId);

    // A secret read from stdin: stored, never printed back.
    const set = await cli(e, ['vars', 'set', 'API_TOKEN', '--secret', '--json'], { stdin: 's3cr3t-value\n' });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).not.toContain('s3cr3t-value');
    expect(set.stderr).not.toContain('s3cr3t-value');
    const plain = await cli(e, ['vars', 'set', 'MODE', 'prod']);
    expect(plain.code, plain.stderr).toBe(0);
    const ls = await cli(e, ['vars', 'ls']);
    expect(ls.stdout).toMatch(/API_TOKEN\s+\(secret\)/);
    expect(ls.stdout).toMatch(/MODE\s+prod/);
    expect(ls.stdout).not.toContain('s3cr3t-value');
    expect((await cli(e, ['vars', 'rm', 'MODE'])).code).toBe(0);
    expect((await cli(e, ['vars', 'ls', '--json'])).json().map((v: { name: string }) => v.name)).toEqual([
      'API_TOKEN',
    ]);

    // `api --paginate` follows cursors and prints JSON Lines.
    for (let i = 0; i < 3; i++) await t.api('POST', '/v1/spaces', { body: {} });
    const paged = await cli(e, ['api', 'GET', '/v1/spaces?limit=1', '--paginate']);
    expect(paged.code, paged.stderr).toBe(0);
    const lines = paged.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.length).toBe(4);
    expect(new Set(lines.map((s) => s.id)).size).toBe(4);

    // `api` with a body from stdin.
    const renamed = await cli(e, ['api', 'PATCH', `/v1/spaces/${spaceId}`, '--input', '-'], {
      stdin: JSON.stringify({ title: 'Renamed by api' }),
    });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(JSON.parse(renamed.stdout).data.space.title).toBe('Renamed by api');

    const init = await cli(e, ['init']);
    expect(init.code, init.stderr).toBe(0);
    const jsonc = fs.readFileSync(path.join(e.cwd, 'spaces.jsonc'), 'utf8');
    expect(jsonc).toContain(`"$schema": "${t.url}/schemas/spaces.json"`);
    const schema = await t.api('GET', '/schemas/spaces.json');
    expect(schema.status).toBe(200);
    expect((await cli(e, ['init'])).code).toBe(2); // exists: needs --force

    const open = await cli(e, ['open', '--json']);
    expect(open.json().url).toMatch(/cmd-site/);
  });

  it('publishes an archive, sets the SPA fallback with --spa, and promotes a preview', async () => {
    const e2 = cliEnv(t.url);
    e2.env = { SPACES_TOKEN: t.ownerKey };
    const gz = await tarGzOf({ 'index.html': '<div id="root"></div>', 'assets/app.js': 'render()' });
    fs.writeFileSync(path.join(e2.cwd, 'app.tar.gz'), gz);
    const pub = await cli(e2, ['publish', 'app.tar.gz', '--slug', 'spa-site', '--json']);
    expect(pub.code, pub.stderr).toBe(0);
    const r = pub.json();
    expect(r.files.total).toBe(2);
    // auto: one HTML entry plus scripts and no 404 page looks like a single-page app.
    const s1 = await t.api('GET', `/v1/spaces/${r.space.id}`);
    expect(s1.body.data.space.config.fallback).toBe('/index.html');

    fs.writeFileSync(
      path.join(e2.cwd, 'app.tar.gz'),
      await tarGzOf({ 'index.html': '<div id="root">2</div>', 'assets/app.js': 'render()' }),
    );
    const preview = await cli(e2, [
      'publish',
      'app.tar.gz',
      '--target',
      'preview',
      '--spa',
      'false',
      '--json',
    ]);
    expect(preview.code, preview.stderr).toBe(0);
    const v2 = preview.json().version;
    expect(v2.channels).not.toContain('live');
    const s2 = await t.api('GET', `/v1/spaces/${r.space.id}`);
    expect(s2.body.data.space.config?.fallback).toBeUndefined();
    expect(s2.body.data.space.channels.live.versionId).toBe(r.version.id);

    const promote = await cli(e2, ['promote', `v${v2.number}`, '--json']);
    expect(promote.code, promote.stderr).toBe(0);
    expect(promote.json().versionId).toBe(v2.id);
    const s3 = await t.api('GET', `/v1/spaces/${r.space.id}`);
    expect(s3.body.data.space.channels.live.versionId).toBe(v2.id);
  });

  it('asks for --yes when not at a terminal, and logout forgets the credential', async () => {
    const rm = await cli(e, ['spaces', 'rm']);
    expect(rm.code).toBe(2);
    expect(rm.stderr).toContain('--yes');
    expect((await t.api('GET', `/v1/spaces/${spaceId}`)).status).toBe(200);

    const stream = await cli(e, ['versions', 'ls', '--stream']);
    expect(stream.code).toBe(2);

    const out = await cli(e, ['logout', '--json']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json().loggedOut).toBe(true);
    const cfg = JSON.parse(fs.readFileSync(path.join(e.configDir, 'config.json'), 'utf8'));
    expect(cfg.profiles.default.token).toBeUndefined();
    const who = await cli(e, ['whoami']);
    expect(who.code).toBe(3);
    expect(who.stderr).toContain('spaces login');

    const comp = await cli(e, ['completion', 'fish']);
    expect(comp.stdout).toContain('complete -c spaces');
  });
});
