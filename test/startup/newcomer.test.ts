/**
 * Issue #18 "The first ten minutes", as one story: what a newcomer does, in order, from a fresh data
 * directory, with the real processes — the server as `npm start` runs it, the `spaces` bin on the PATH
 * the way `npm link` puts it there, curl and bash for the README, headless Chromium for the home page.
 * Each step is a test, in order, sharing what the newcomer learned so far (a failed step fails the
 * ones after it). The timings of the steps are printed at the end.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser as Chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium, noBrowser, whySkipped as why } from '../helpers/browser.ts';
import { Browser, formOf } from '../oauth/helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** What `npm link` puts on the PATH: the package's `spaces` bin. */
const BIN = path.join(
  ROOT,
  (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: { spaces: string } }).bin
    .spaces,
);
const README = path.join(ROOT, 'README.md');
/** A README block marked `<!-- first-run … -->` just before its fence is run as written. */
const MARKED_BLOCK = /^<!-- first-run\b[^>]*-->\n```sh\n([\s\S]*?)^```$/gm;
/** The one thing the README can't know: the port (8080 is not ours to take on a shared machine). */
const README_ORIGIN = 'localhost:8080';

interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number>;
}

function launch(command: string, args: string[], cwd: string, env: Record<string, string>): Proc {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => {
    out += c;
  });
  child.stderr!.on('data', (c) => {
    err += c;
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : -1)));
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Waits for `re` in what `read` returns; fails early if the process ends first. */
async function waitFor(p: Proc, read: () => string, re: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const m = re.exec(read());
    if (m) return m;
    if (p.child.exitCode !== null)
      throw new Error(`exited (${p.child.exitCode}) before ${re}:\n${p.stdout()}\n${p.stderr()}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${re}:\n${p.stdout()}\n${p.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function listenOn(port: number): Promise<net.Server> {
  const s = net.createServer();
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    // Where `npm start` listens by default (HOST=0.0.0.0).
    s.listen(port, '0.0.0.0', resolve);
  });
  return s;
}

/** A GET with its own Host header and no cookie: a visitor, or a program. */
function visit(
  port: number,
  host: string,
  urlPath = '/',
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers: { ...headers, host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }),
      );
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${host}${urlPath} timed out`)));
  });
}

/** Polls a site until it serves `text` (the edge picks up a moved channel at once; this is slack). */
async function expectServed(port: number, siteUrl: string, text: string): Promise<void> {
  const host = new URL(siteUrl).host;
  let last = await visit(port, host);
  for (let i = 0; i < 50 && !(last.status === 200 && last.body.includes(text)); i++) {
    await new Promise((r) => setTimeout(r, 200));
    last = await visit(port, host);
  }
  expect(last, `${siteUrl} as an anonymous visitor`).toMatchObject({ status: 200 });
  expect(last.body).toContain(text);
}

describe('a newcomer, from a fresh clone to a public site and a rollback', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-newcomer-'));
  const dataDir = path.join(root, 'data');
  const home = path.join(root, 'home');
  const binDir = path.join(root, 'bin');
  const site = path.join(root, 'work', 'site');
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(binDir);
  fs.mkdirSync(site, { recursive: true });
  fs.symlinkSync(BIN, path.join(binDir, 'spaces'));
  /** The newcomer's shell: `spaces` on the PATH, a HOME (and XDG config) of their own. */
  const env: Record<string, string> = {
    PATH: [binDir, path.dirname(process.execPath), process.env.PATH ?? ''].join(path.delimiter),
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    NO_COLOR: '1',
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
  };

  const procs: Proc[] = [];
  let held: net.Server | undefined;
  let browser: Chromium | undefined;
  const timings: [string, number][] = [];
  const started = Date.now();
  /** Runs one step of the story and records how long it took. */
  async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      timings.push([name, Date.now() - t0]);
    }
  }

  /** `spaces …` as typed in the newcomer's shell. */
  function spaces(args: string[], cwd = site): Proc {
    const p = launch('spaces', args, cwd, env);
    procs.push(p);
    return p;
  }
  async function spacesDone(args: string[], cwd = site): Promise<{ code: number; out: string; err: string }> {
    const p = spaces(args, cwd);
    const code = await p.exited;
    return { code, out: p.stdout(), err: p.stderr() };
  }
  /** A script as pasted into the newcomer's shell; `out` is what it prints, stdout and stderr in order. */
  function bash(script: string, cwd: string, o: { stdoutOnly?: boolean } = {}) {
    const p = launch(
      'bash',
      ['-c', `set -eo pipefail\n${o.stdoutOnly ? '' : 'exec 2>&1\n'}${script}`],
      cwd,
      env,
    );
    procs.push(p);
    return p.exited.then((code) => ({ code, out: p.stdout(), err: p.stderr() }));
  }

  // What the newcomer learns on the way.
  let port = 0;
  let api = '';
  let server: Proc;
  let password = '';
  let apiKey = '';
  let loginCommand = '';
  let siteUrl = '';

  afterAll(async () => {
    await browser?.close().catch(() => {});
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGTERM');
    const stopping = server ? server.exited : Promise.resolve(0);
    const killer = setTimeout(() => server?.child.kill('SIGKILL'), 15_000);
    await stopping;
    clearTimeout(killer);
    await new Promise((resolve) => (held ? held.close(resolve) : resolve(undefined)));
    fs.rmSync(root, { recursive: true, force: true });
    const width = Math.max(...timings.map(([n]) => n.length));
    console.log(
      `newcomer story, ${((Date.now() - started) / 1000).toFixed(1)} s in all:\n${timings
        .map(([n, ms]) => `  ${n.padEnd(width)}  ${(ms / 1000).toFixed(1)} s`)
        .join('\n')}`,
    );
  });

  it('starts the server on a port in use: one line saying so, exit 1, nothing printed that is then lost', async () => {
    held = await listenOn(0);
    const busyPort = (held.address() as net.AddressInfo).port;
    const busy = await step('npm start on a busy port', async () => {
      const p = launch(process.execPath, [BIN, 'server'], ROOT, {
        ...env,
        PORT: String(busyPort),
        SPACES_DATA_DIR: dataDir,
        SPACES_PUBLIC_URL: `http://localhost:${busyPort}`,
      });
      procs.push(p);
      return { code: await p.exited, out: p.stdout(), err: p.stderr() };
    });
    expect(busy.code, busy.out + busy.err).toBe(1);
    expect(busy.err.trim().split('\n')).toEqual([
      `spaces server: port ${busyPort} is already in use on 0.0.0.0 (another Spaces, or another program); stop it or choose another with --port <n> (or PORT=<n>).`,
    ]);
    // The credentials are made once the port is bound: none were shown, so none are lost. Nothing
    // was created at all (the port is tried first, which also makes the answer quick).
    expect(busy.out).not.toMatch(/sfa_|password|Spaces is set up/);
    expect(fs.existsSync(dataDir) ? fs.readdirSync(dataDir) : []).toEqual([]);
  }, 180_000);

  it('starts it on a free port; the banner (read as a person reads it) has the password, the key and the CLI login', async () => {
    // The other program keeps its port; the newcomer picks another, as the message says.
    const probe = await listenOn(0);
    port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    api = `http://localhost:${port}`;
    server = launch(process.execPath, [BIN, 'server'], ROOT, {
      ...env,
      PORT: String(port),
      SPACES_DATA_DIR: dataDir,
      SPACES_PUBLIC_URL: api,
    });
    procs.push(server);
    await step('npm start until the banner', () =>
      waitFor(server, server.stdout, /^ {2}Lost it\?.*\n/m, 170_000),
    );
    const out = server.stdout();
    expect(out).toContain(`Spaces listening on ${api} (port ${port})`);
    const banner = out.slice(out.indexOf('Spaces is set up.'));
    const line = (label: string) => {
      const found = banner.split('\n').find((l) => l.startsWith(`  ${label}`));
      expect(found, `the banner's "${label}" line:\n${banner}`).toBeDefined();
      return found!.slice(label.length + 2).trim();
    };
    const signIn = /^(\S+) {2}as (\S+) {2}with password (\S+)$/.exec(line('Sign in:'));
    expect(signIn, line('Sign in:')).not.toBeNull();
    expect(signIn![1]).toBe(`${api}/`);
    expect(signIn![2]).toBe('owner@localhost');
    password = signIn![3]!;
    apiKey = /^(sfa_\S+) {3}\(team "owners-team", preset team_admin\)$/.exec(line('API key:'))?.[1] ?? '';
    expect(apiKey, line('API key:')).toMatch(/^sfa_/);
    // Not on the CLI's default address: the banner's login names this server.
    loginCommand = /then `(spaces login[^`]*)`/.exec(line('CLI:'))?.[1] ?? '';
    expect(loginCommand).toBe(`spaces login --api-url ${api}`);
    expect(line('CLI:')).toContain('npm link');
    expect(line('Lost it?')).toContain('spaces admin reset-owner');

    // The banner's own "Try it", with the key pasted in.
    const tryIt = line('Try it:');
    expect(tryIt).toContain('<API key>');
    const tried = await step("the banner's Try it", () =>
      bash(tryIt.replace('<API key>', apiKey), root, { stdoutOnly: true }),
    );
    expect(tried.code, tried.err).toBe(0);
    expect(JSON.parse(tried.out).data.user.email).toBe('owner@localhost');
  }, 180_000);

  it('signs in as the owner over the API with the printed password', async () => {
    const session = await step('POST /v1/account/sessions', async () => {
      const res = await fetch(`${api}/v1/account/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'owner@localhost', password }),
      });
      return { status: res.status, body: (await res.json()) as { data: { token: string } } };
    });
    expect(session.status).toBe(201);
    expect(session.body.data.token).toMatch(/^sfs_/);
    const me = (await (
      await fetch(`${api}/v1/account`, { headers: { authorization: `Bearer ${session.body.data.token}` } })
    ).json()) as { data: { user: { email: string }; teams: { slug: string; role: string }[] } };
    expect(me.data.user.email).toBe('owner@localhost');
    expect(me.data.teams).toEqual([expect.objectContaining({ slug: 'owners-team', role: 'owner' })]);
  }, 60_000);

  it("logs the CLI in with the banner's command and --device, approved on the device page as the owner", async () => {
    const [, ...args] = loginCommand.split(' ');
    const login = spaces([...args, '--device'], root);
    const done = await step('spaces login --device (approved over HTTP)', async () => {
      const [, shown, code] = await waitFor(
        login,
        login.stderr,
        /open (\S+) and enter the code: (\S+)/,
        60_000,
      );
      expect(shown).toBe(`${api}/device`);
      const [, complete] = await waitFor(login, login.stderr, /\(or open (\S+)\)/, 10_000);
      // The person at the browser: the device page asks them to sign in first, then to allow.
      const b = new Browser(api);
      const u = new URL(complete!);
      let page = await b.get(u.pathname + u.search);
      expect(page.text).toContain('action="/v1/auth/oauth2/signin"');
      page = await b.signInVia(page, 'owner@localhost', password);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Signed in as <strong>owner@localhost</strong>');
      expect(page.text).toContain(code!);
      const approved = await b.post('/device', { ...formOf(page.text, '/device'), decision: 'approve' });
      expect(approved.status).toBeLessThan(400);
      return { code: await login.exited, out: login.stdout(), err: login.stderr() };
    });
    expect(done.code, done.err).toBe(0);
    expect(done.out).toContain(`Logged in to ${api} as owner@localhost`);
    // Stored in this HOME's XDG config dir, for this server: later commands need no --api-url.
    const config = JSON.parse(fs.readFileSync(path.join(home, '.config/spaces/config.json'), 'utf8'));
    expect(config.profiles.default).toMatchObject({ apiUrl: api, user: 'owner@localhost' });
    const who = await spacesDone(['whoami']);
    expect(who.code, who.err).toBe(0);
    expect(who.out).toContain(`owner@localhost on ${api}`);
  }, 120_000);

  it('spaces init, spaces publish --access public, and an anonymous visitor sees the site', async () => {
    fs.writeFileSync(path.join(site, 'index.html'), '<h1>Hello from a newcomer</h1>\n');
    const init = await step('spaces init', () => spacesDone(['init']));
    expect(init.code, init.err).toBe(0);
    const settings = fs.readFileSync(path.join(site, 'spaces.jsonc'), 'utf8');
    expect(settings).toContain(`"$schema": "${api}/schemas/spaces.json"`);

    const pub = await step('spaces publish --access public', () =>
      spacesDone(['publish', '--access', 'public']),
    );
    expect(pub.code, pub.out + pub.err).toBe(0);
    siteUrl = /Live \(public\): (\S+)/.exec(pub.out)?.[1] ?? '';
    expect(siteUrl, pub.out).toMatch(new RegExp(`^http://[a-z0-9-]+\\.localhost:${port}$`));
    expect(pub.out).toContain('Anyone with the link can open it.');
    await step('GET the site, anonymous', () =>
      expectServed(port, siteUrl, '<h1>Hello from a newcomer</h1>'),
    );
  }, 120_000);

  it('reads the docs from the CLI: the topics, then one of them', async () => {
    const list = await step('spaces docs', () => spacesDone(['docs']));
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(/^quickstart\s+Quickstart$/m);
    expect(list.out).toMatch(/^cli\s+Publishing with the spaces CLI$/m);
    const topic = await step('spaces docs quickstart', () => spacesDone(['docs', 'quickstart']));
    expect(topic.code, topic.err).toBe(0);
    expect(topic.out).toContain('# Quickstart');
    expect(topic.out).toContain('npm link');
  }, 60_000);

  it.skipIf(noBrowser)(
    `opens / in a browser: the dashboard signs the owner in and lists the site${why}`,
    async () => {
      await step('/ in headless Chromium, signed in', async () => {
        browser = await launchChromium();
        const page = await (await browser.newContext()).newPage();
        try {
          const res = await page.goto(`${api}/`);
          expect(res?.status()).toBe(200);
          expect(res?.headers()['content-type']).toMatch(/^text\/html/);
          // The dashboard (served from the same `npm start`): sign in as the owner the banner named.
          await page.locator('#signin-form').waitFor();
          await page.fill('#email', 'owner@localhost');
          await page.fill('#password', password);
          await page.click('#signin-form button[type=submit]');
          await page.locator('#who-email').waitFor();
          expect(await page.locator('#who-email').textContent()).toBe('owner@localhost');
          // The site the newcomer just published is in the list, with its live URL.
          await page.locator('#spaces').waitFor();
          await expect.poll(() => page.textContent('#spaces')).toContain(new URL(siteUrl).hostname);
        } catch (err) {
          const shot = path.join(os.tmpdir(), `spaces-newcomer-home-${Date.now()}.png`);
          await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
          console.error(`home page screenshot: ${shot}`);
          throw err;
        }
      });
    },
    120_000,
  );
  if (noBrowser) console.log(`newcomer story: the browser step is skipped: ${CHROMIUM} is not installed.`);

  it('publishes a change, then spaces rollback: the old content is served again', async () => {
    fs.writeFileSync(path.join(site, 'index.html'), '<h1>Hello again</h1>\n');
    const second = await step('spaces publish (v2)', () => spacesDone(['publish']));
    expect(second.code, second.out + second.err).toBe(0);
    expect(second.out).toContain(`Live (public): ${siteUrl}`);
    await expectServed(port, siteUrl, '<h1>Hello again</h1>');

    const back = await step('spaces rollback', () => spacesDone(['rollback']));
    expect(back.code, back.out + back.err).toBe(0);
    expect(back.out).toMatch(/^Rolled live back to v1 /m);
    await step('GET the site after the rollback', () =>
      expectServed(port, siteUrl, '<h1>Hello from a newcomer</h1>'),
    );
  }, 120_000);

  it("runs the README's first-run blocks as written, with the banner's key", async () => {
    const missing = ['curl', 'jq'].filter(
      (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
    );
    expect(missing, "the README's commands need these tools on the PATH").toEqual([]);
    const readme = fs.readFileSync(README, 'utf8');
    const blocks = [...readme.matchAll(MARKED_BLOCK)].map((m) => m[1]!);
    expect(blocks.length, 'README blocks marked <!-- first-run -->').toBeGreaterThanOrEqual(4);
    const prepared = blocks.map((b) =>
      b
        // What the reader pastes: the key from the banner…
        .replace(/^KEY=sfa_…/gm, `KEY=${apiKey}`)
        // …and the port they started on.
        .replaceAll(README_ORIGIN, `localhost:${port}`),
    );
    // Nothing is left for the reader to fill in (comments may show what to expect: `sfa_…`).
    for (const b of prepared)
      for (const l of b.split('\n'))
        expect(l.replace(/(^|\s)#.*$/, ''), 'a placeholder in a README command').not.toMatch(/…|<[a-z ]+>/);
    const cwd = path.join(root, 'readme');
    fs.mkdirSync(cwd);
    const script = prepared.map((b, i) => `echo "::block ${i}::"\n${b}`).join('\n');
    const { code, out } = await step('the README blocks (bash)', () => bash(script, cwd));
    expect(code, out).toBe(0);
    const outputs = out.split(/^::block \d+::\n/m).slice(1);
    expect(outputs).toHaveLength(blocks.length);
    const outputOf = (marker: string) => {
      const found = blocks.flatMap((b, i) => (b.includes(marker) ? [outputs[i]!] : []));
      expect(found, marker).toHaveLength(1);
      return found[0]!;
    };

    // Through the CLI: published for everyone, changed, rolled back.
    const cli = outputOf('spaces rollback');
    const readmeSite = /Live \(public\): (\S+)/.exec(cli)?.[1] ?? '';
    expect(readmeSite, cli).toMatch(new RegExp(`^http://[a-z0-9-]+\\.localhost:${port}$`));
    expect(cli).toMatch(/^Rolled live back to v1 /m);
    expect(fs.existsSync(path.join(cwd, 'hello', 'spaces.jsonc'))).toBe(true);
    await expectServed(port, readmeSite, '<h1>Hello, world</h1>');
    // Over HTTP with the key: who am I, a public site anyone sees, an anonymous one with its claim link.
    const lines = outputOf('KEY=').trim().split('\n');
    expect(lines[0]).toBe('owner@localhost');
    expect(lines[1]).toBe('<h1>Hello from curl</h1>');
    expect(lines[2]).toMatch(new RegExp(`^http://localhost:${port}/claim#sfc_\\S+$`));
    expect(lines).toHaveLength(3);
    expect(outputOf('"name":"Acme"').trim()).toBe('acme');
    expect(outputOf('/promote').trim().split('\n')).toEqual(['2', '1', '<h1>Hello from curl</h1>']);
  }, 180_000);
});
