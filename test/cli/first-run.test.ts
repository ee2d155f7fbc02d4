import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { type ParseError, parse as parseJsonc } from 'jsonc-parser';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

// Issue #18 "The first ten minutes": what a new user runs first, through the real CLI.
let t: TestServer;
let e: CliEnv;

beforeAll(async () => {
  t = await startServer();
  e = cliEnv(t.url);
});
afterAll(async () => {
  await t.close();
});

/** The files of a .tar.gz, by path. */
async function untarGz(gz: Buffer): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const extract = tar.extract();
  extract.on('entry', (h, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => {
      if (h.type === 'file') out[h.name] = Buffer.concat(chunks).toString('utf8');
      next();
    });
  });
  await new Promise<void>((resolve, reject) => {
    extract.on('finish', resolve);
    extract.on('error', reject);
    Readable.from(zlib.gunzipSync(gz)).pipe(extract);
  });
  return out;
}

describe('spaces docs', () => {
  it('lists the topics, prints one, searches, and says clearly when a topic does not exist', async () => {
    const list = await cli(e, ['docs']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toBe('');
    expect(list.stdout).toMatch(/^TOPIC\s+TITLE$/m);
    expect(list.stdout).toMatch(/^cli\s+Publishing with the spaces CLI$/m);

    const json = await cli(e, ['docs', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json().entries.map((x: { slug: string }) => x.slug)).toContain('cli');

    const page = await cli(e, ['docs', 'cli']);
    expect(page.code, page.stderr).toBe(0);
    expect(page.stdout).toContain('# Publishing with the `spaces` CLI');
    const pageJson = await cli(e, ['docs', 'cli', '--json']);
    expect(pageJson.code, pageJson.stderr).toBe(0);
    expect(pageJson.json()).toMatchObject({ slug: 'cli', body: expect.stringContaining('# Publishing') });

    const search = await cli(e, ['docs', '--search', 'rollback']);
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout).toMatch(/^versions-and-rollback\s/m);

    const unknown = await cli(e, ['docs', 'no-such-topic-here']);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('There is no documentation topic "no-such-topic-here"');
    expect(unknown.stderr).not.toMatch(/TypeError|at .*\.mjs/);
    const unknownJson = await cli(e, ['docs', 'no-such-topic-here', '--json']);
    expect(unknownJson.code).toBe(4);
    expect(unknownJson.json()).toMatchObject({ status: 404, code: 'not_found' });
  });
});

/** A site of `files` (path → content) under a fresh directory of the test's project. */
function site(env: CliEnv, dir: string, files: Record<string, string>): string {
  const root = path.join(env.cwd, dir);
  for (const [p, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.writeFileSync(path.join(root, p), body);
  }
  return root;
}

/** The site at a live or channel URL, fetched as a visitor without credentials. */
const visit = (url: string) => t.api('GET', '/', { token: null, host: new URL(url).host });

describe('publishing as a new user', () => {
  it('says who can see the site, and --access public makes it public', async () => {
    const env = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
    site(env, 'a', { 'index.html': '<h1>team site</h1>' });
    const first = await cli(env, ['publish', 'a']);
    expect(first.code, first.stderr).toBe(0);
    // New spaces take the team's default (team); a visitor is sent to sign in.
    const liveUrl = /Live \(team only\): (\S+)/.exec(first.stdout)?.[1];
    expect(liveUrl, first.stdout).toBeTruthy();
    expect((await visit(liveUrl!)).status).not.toBe(200);

    fs.writeFileSync(path.join(env.cwd, 'a', 'index.html'), '<h1>public now</h1>');
    const pub = await cli(env, ['publish', 'a', '--access', 'public', '--json']);
    expect(pub.code, pub.stderr).toBe(0);
    expect(pub.json()).toMatchObject({ access: 'public', channel: 'live', siteUrl: liveUrl });
    const seen = await visit(liveUrl!);
    expect(seen.status).toBe(200);
    expect(seen.text).toContain('public now');
    const again = await cli(env, ['publish', 'a']);
    expect(again.stdout).toContain(`Live (public): ${liveUrl}`);

    site(env, 'b', { 'index.html': '<h1>private</h1>' });
    const priv = await cli(env, ['publish', 'b', '--access', 'private']);
    expect(priv.code, priv.stderr).toBe(0);
    expect(priv.stdout).toMatch(/Live \(private\): http/);

    const created = await cli(env, ['spaces', 'create', '--access', 'public', '--json']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json().access).toBe('public');
    const bad = await cli(env, ['spaces', 'create', '--access', 'everyone']);
    expect(bad.code).toBe(2);
  });

  it('links what is published, not the working directory, and asks before removing most files', async () => {
    const env = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
    const files: Record<string, string> = { 'index.html': '<h1>docs</h1>' };
    for (let i = 0; i < 9; i++) files[`page-${i}.html`] = `<p>${i}</p>`;
    site(env, 'docs', files);
    const docs = await cli(env, ['publish', 'docs', '--json']);
    expect(docs.code, docs.stderr).toBe(0);
    const docsSpace = docs.json().space.id;
    // The link sits in the published directory.
    const docsState = JSON.parse(
      fs.readFileSync(path.join(env.cwd, 'docs', '.spaces', 'state.json'), 'utf8'),
    );
    expect(docsState.spaceId).toBe(docsSpace);

    // From inside the linked directory, publishing another one goes to that one's own space.
    site(env, 'blog', { 'index.html': '<h1>blog</h1>' });
    const blog = await cli({ ...env, cwd: path.join(env.cwd, 'docs') }, ['publish', '../blog', '--json']);
    expect(blog.code, blog.stderr).toBe(0);
    expect(blog.json().space.id).not.toBe(docsSpace);
    expect(blog.json().created).toBe(true);
    const live = await t.api('GET', `/v1/spaces/${docsSpace}`);
    expect(live.body.data.space.channels.live.versionId).toBe(docs.json().version.id);

    // Removing 9 of the 10 live files: refused without a terminal unless --yes.
    for (let i = 0; i < 9; i++) fs.rmSync(path.join(env.cwd, 'docs', `page-${i}.html`));
    const refused = await cli(env, ['publish', 'docs']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('removes 9 of the 10 files of the live version');
    expect(refused.stderr).toContain('--yes');
    const still = await t.api('GET', `/v1/spaces/${docsSpace}`);
    expect(still.body.data.space.channels.live.versionId).toBe(docs.json().version.id);
    // At a terminal the question is asked; "n" leaves live as it is.
    const err: string[] = [];
    const sink = (to: string[]) =>
      ({ write: (c: string) => to.push(String(c)) }) as unknown as NodeJS.WriteStream;
    const declined = await runCli(['publish', 'docs'], {
      stdin: Object.assign(Readable.from(['n\n']), { isTTY: true }),
      stdout: sink([]),
      stderr: sink(err),
      env: { SPACES_API_URL: t.url, SPACES_TOKEN: t.ownerKey, SPACES_CONFIG_DIR: env.configDir },
      cwd: env.cwd,
    });
    expect(declined).toBe(2);
    expect(err.join('')).toMatch(
      /removes 9 of the 10 files of the live version \(.*\)\. Publish anyway\? \[y\/N\]/,
    );
    expect(err.join('')).toContain('Cancelled');
    const unmoved = await t.api('GET', `/v1/spaces/${docsSpace}`);
    expect(unmoved.body.data.space.channels.live.versionId).toBe(docs.json().version.id);
    const yes = await cli(env, ['publish', 'docs', '--yes', '--json']);
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.json().version.fileCount).toBe(1);

    // A directory without a link (a build emptied it) follows the `space` its settings file names.
    site(env, 'dist', {
      'index.html': '<h1>docs, rebuilt</h1>',
      'spaces.jsonc': `{ "space": "${docs.json().space.slug}" }`,
    });
    const rebuilt = await cli(env, ['publish', 'dist', '--json']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.json()).toMatchObject({ created: false, space: { id: docsSpace } });
  });

  it('publishes a preview at the preview channel URL, with a labelled header row in versions ls', async () => {
    const env = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
    site(env, 'p', { 'index.html': '<h1>one</h1>' });
    expect((await cli(env, ['publish', 'p', '--access', 'public'])).code).toBe(0);
    fs.writeFileSync(path.join(env.cwd, 'p', 'index.html'), '<h1>two</h1>');
    const cwd = path.join(env.cwd, 'p');
    const preview = await cli({ ...env, cwd }, ['publish', '--target', 'preview']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).not.toMatch(/^\s*Live/m);
    const url = /Preview \(public\): (\S+)/.exec(preview.stdout)?.[1];
    expect(url, preview.stdout).toMatch(/^http:\/\/preview--/);
    const seen = await visit(url!);
    expect(seen.status).toBe(200);
    expect(seen.text).toContain('two');

    const ls = await cli({ ...env, cwd }, ['versions', 'ls']);
    expect(ls.code, ls.stderr).toBe(0);
    const [header, newest] = ls.stdout.split('\n');
    expect(header).toMatch(/^VERSION\s+ID\s+STATUS\s+TARGET\s+CHANNELS\s+FILES\s+CREATED\s+MESSAGE$/);
    expect(newest).toMatch(/^v2\s+ver_\S+\s+ready\s+preview\s+preview\s/);
  });

  it('downloads into a directory or as a .tar.gz, and says which it needs', async () => {
    const env = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
    site(env, '.', { 'index.html': '<h1>dl</h1>', 'css/a.css': 'a{}' });
    expect((await cli(env, ['publish'])).code).toBe(0);
    const help = await cli(env, ['download', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('(this or --archive is required)');
    expect(help.stdout).toContain('--archive <file>');
    const neither = await cli(env, ['download']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('-o DIR');

    const archive = await cli(env, ['download', '--archive', 'site.tar.gz', '--json']);
    expect(archive.code, archive.stderr).toBe(0);
    const entries = await untarGz(fs.readFileSync(path.join(env.cwd, 'site.tar.gz')));
    expect(Object.keys(entries).sort()).toEqual(['css/a.css', 'index.html']);
    expect(entries['index.html']).toBe('<h1>dl</h1>');
    const toStdout = await cli(env, ['download', '--archive', '-']);
    expect(toStdout.code, toStdout.stderr).toBe(0);
  });

  it('logs of the linked space say none yet, runtime logs too; operations prints a header or says there are none', async () => {
    const env = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
    site(env, '.', { 'index.html': '<h1>logs</h1>' });
    expect((await cli(env, ['publish'])).code).toBe(0);
    const logs = await cli(env, ['logs']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('No requests logged yet');
    const runtime = await cli(env, ['logs', '--runtime']);
    expect(runtime.code, runtime.stderr).toBe(0);
    expect(runtime.stdout).toContain('No runtime log lines yet');
    const wrong = await cli(env, ['logs', '--runtime', '--status', '404']);
    expect(wrong.code).toBe(2);
    const ops = await cli(env, ['operations']);
    expect(ops.code, ops.stderr).toBe(0);
    expect(ops.stdout).toContain('No operations yet');
  });
});

describe('an anonymous publish, then a claim', () => {
  it('shows the Open link first, says what others see, and inspect stops saying it expires once claimed', async () => {
    const env = cliEnv(t.url);
    site(env, '.', { 'index.html': '<h1>anon</h1>' });
    const pub = await cli(env, ['publish']);
    expect(pub.code, pub.stderr).toBe(0);
    const openUrl = /Open:\s+(\S+)/.exec(pub.stdout)?.[1];
    expect(openUrl, pub.stdout).toMatch(/\/__\/open#sfc_/);
    expect(pub.stdout.indexOf('Open:')).toBeLessThan(pub.stdout.indexOf('Live:'));
    expect(pub.stdout).toContain('others see a "not claimed yet" notice there until the space is claimed');
    // The door works for the publisher (it hands over to the site).
    const door = await t.api('GET', new URL(openUrl!).pathname, {
      token: null,
      host: new URL(openUrl!).host,
    });
    expect(door.status).toBeLessThan(400);

    fs.writeFileSync(path.join(env.cwd, 'index.html'), '<h1>anon 2</h1>');
    const json = await cli(env, ['publish', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json().claim.openUrl).toBe(openUrl);

    const before = await cli(env, ['inspect']);
    expect(before.stdout).toMatch(/Expires:\s+\S+ unless claimed/);
    const login = await cli(env, ['login', '--token', t.ownerKey]);
    expect(login.code, login.stderr).toBe(0);
    const claim = await cli(env, ['spaces', 'claim']);
    expect(claim.code, claim.stderr).toBe(0);
    const after = await cli(env, ['inspect']);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).not.toContain('unless claimed');
    expect(after.stdout).toMatch(/Claimed:\s+\d{4}-/);
    expect(after.stdout).toMatch(/Access:\s+private/);
  });
});

describe('spaces init, then spaces publish', () => {
  /** Every key behaviour §4.1 lists for the settings file. */
  const FILE_KEYS = [
    '$schema',
    'space',
    'name',
    'index',
    'fallback',
    'cleanUrls',
    'listing',
    'meta',
    'theme',
    'access',
    'redirects',
    'rewrites',
    'headers',
    'templates',
    'superpowers',
    'inject',
    'runtime',
    'build',
    'crons',
  ];

  it('writes a file that publishes and validates against the served schema, with its examples uncommented too', async () => {
    const env = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
    site(env, '.', { 'index.html': '<h1>init</h1>', 'new.html': 'new' });
    const init = await cli(env, ['init']);
    expect(init.code, init.stderr).toBe(0);
    const text = fs.readFileSync(path.join(env.cwd, 'spaces.jsonc'), 'utf8');
    expect(text).toContain(`"$schema": "${t.url}/schemas/spaces.json"`);

    // The $schema URL serves a JSON Schema 2020-12 that a real validator compiles (strictly).
    const served = await t.api('GET', '/schemas/spaces.json', { token: null });
    expect(served.status).toBe(200);
    const schema = JSON.parse(served.text);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(FILE_KEYS));
    // ... and the overlay's keys (the interface's SpaceConfig) as well.
    const overlay = JSON.parse((await t.api('GET', '/schemas/SpaceConfig.json', { token: null })).text);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(Object.keys(overlay.properties)));
    expect(schema.properties.functions).toBeUndefined();
    // allowMatchingProperties: TrafficRuleMatch lists each attribute by name (for readers) and gives
    // their shapes once per group through patternProperties, on purpose (see space-config.ts).
    const ajv = new Ajv2020.default({ strict: true, allErrors: true, allowMatchingProperties: true });
    addFormats.default(ajv);
    const valid = ajv.compile(schema);
    const parse = (s: string) => {
      const errors: ParseError[] = [];
      const value = parseJsonc(s, errors, { allowTrailingComma: true });
      expect(errors).toEqual([]);
      return value;
    };
    expect(valid(parse(text)), JSON.stringify(valid.errors)).toBe(true);
    // What an editor flags, the schema flags too.
    expect(valid({ ...parse(text), cleanUrl: true })).toBe(false);

    const first = await cli(env, ['publish', '--json']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.json().version.diagnostics).toEqual([]);

    // Every example uncommented: still valid, and the server publishes it.
    const uncommented = text.replace(/^(\s*)\/\/ (")/gm, '$1$2');
    expect(uncommented).not.toMatch(/^\s*\/\/ "/m);
    const all = parse(uncommented) as Record<string, unknown>;
    expect(Object.keys(all)).toEqual(['$schema', 'cleanUrls', 'fallback', 'redirects', 'headers', 'meta']);
    expect(valid(all), JSON.stringify(valid.errors)).toBe(true);
    fs.writeFileSync(path.join(env.cwd, 'spaces.jsonc'), uncommented);
    const second = await cli(env, ['publish', '--access', 'public', '--json']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const redirect = await t.api('GET', '/old', { token: null, host: new URL(second.json().siteUrl).host });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toMatch(/\/new$/);
  });

  it('accepts keys whose behaviour is not built yet with an info diagnostic, and refuses the old functions key', async () => {
    const env = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
    site(env, '.', {
      'index.html': '<h1>later</h1>',
      'spaces.json': JSON.stringify({
        runtime: { kind: 'capsule', server: 'server.js' },
        crons: [{ path: '/api/digest', schedule: '0 7 * * 1-5' }],
        access: 'public',
        inject: { head: ['<meta name="x-injected" content="1">'] },
      }),
    });
    const pub = await cli(env, ['publish', '--access', 'public']);
    expect(pub.code, pub.stdout + pub.stderr).toBe(0);
    expect(pub.stdout).toMatch(
      /info: spaces\.json: `runtime\.kind: "capsule"` has no effect yet.*\(config_key_no_effect\)/,
    );
    // `crons` and `access` are built: no info for them.
    expect(pub.stdout).not.toMatch(/`crons` has no effect yet/);
    expect(pub.stdout).not.toMatch(/`access` has no effect yet/);
    // `inject` is built: the snippet is in the page.
    const page = await visit(/Live \(public\): (\S+)/.exec(pub.stdout)![1]!);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<meta name="x-injected" content="1">');

    // Shapes are still checked, with the codes behaviour §17 names.
    fs.writeFileSync(
      path.join(env.cwd, 'spaces.json'),
      JSON.stringify({ crons: [{ path: '/a', schedule: '99 * * * *' }] }),
    );
    const badCron = await cli(env, ['publish', '--json']);
    expect(badCron.code).not.toBe(0);
    expect(badCron.json().details.diagnostics[0]).toMatchObject({ code: 'config_cron_invalid_schedule' });
    fs.writeFileSync(path.join(env.cwd, 'spaces.json'), JSON.stringify({ functions: { entry: 'x.js' } }));
    const old = await cli(env, ['publish', '--json']);
    expect(old.code).not.toBe(0);
    expect(old.json().details.diagnostics[0]).toMatchObject({ code: 'config_functions_key_removed' });
  });
});
