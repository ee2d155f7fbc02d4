import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Issue #18, item 5: `spaces server` as a person runs it, in a child process. A busy port is one
 * clear line (no stack trace), and the one-time credentials survive it; `spaces admin reset-owner`
 * gets the owner back in when they were lost.
 */
const BIN = path.resolve(import.meta.dirname, '../../bin/spaces.mjs');

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(args: string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => {
    out += c;
  });
  child.stderr!.on('data', (c) => {
    err += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function until(run: Run, re: RegExp, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!re.test(run.stdout())) {
    if (run.child.exitCode !== null) throw new Error(`exited early:\n${run.stdout()}\n${run.stderr()}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${re}:\n${run.stdout()}\n${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function holdPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  return { port, release: () => new Promise((resolve) => s.close(() => resolve())) };
}

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, json: await res.body.json() };
}

async function get(url: string, token: string): Promise<number> {
  const res = await request(url, { headers: { authorization: `Bearer ${token}` } });
  await res.body.dump();
  return res.statusCode;
}

describe('first start', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-first-start-'));
  const running: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of running) if (c.exitCode === null) c.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a busy port is one line naming the port and how to change it; the credentials come on the next start; reset-owner recovers access', async () => {
    const held = await holdPort();
    const env = { PORT: String(held.port), HOST: '127.0.0.1', SPACES_DATA_DIR: dataDir };
    const busy = start(['server'], env);
    running.push(busy.child);
    expect(await busy.exited).toBe(1);
    const lines = busy.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^spaces server: port ${held.port} is already in use`));
    expect(lines[0]).toContain('--port');
    expect(lines[0]).toContain('PORT=');
    expect(busy.stderr()).not.toMatch(/\n\s+at |EADDRINUSE|Error:/);
    // Nothing was printed that can't be printed again.
    expect(busy.stdout()).not.toContain('sfa_');
    expect(busy.stdout()).not.toContain('password');

    // …and no owner was made that the next start would then not announce: the port is tried before
    // anything is created, so there is not even a database yet.
    expect(fs.readdirSync(dataDir)).toEqual([]);
    const none = start(['admin', 'reset-owner'], { SPACES_DATA_DIR: dataDir });
    running.push(none.child);
    expect(await none.exited).toBe(1);
    expect(none.stderr()).toMatch(/^spaces admin: no database at /);

    await held.release();
    const server = start(['server'], env);
    running.push(server.child);
    await until(server, /Lost it\?.*\n/);
    const out = server.stdout();
    // The banner comes after the start-up lines, with the way to use the CLI from the clone.
    expect(out.indexOf('Spaces listening on')).toBeGreaterThan(-1);
    expect(out.indexOf('Spaces is set up')).toBeGreaterThan(out.indexOf('Spaces listening on'));
    expect(out).toContain('npm link');
    // Not on the CLI's default address (8080): the login it prints finds this server.
    expect(out).toContain(`then \`spaces login --api-url http://localhost:${held.port}\``);
    expect(out).toContain('spaces admin reset-owner');
    const password = /as owner@localhost {2}with password (\S+)/.exec(out)![1]!;
    const apiKey = /API key: {2}(sfa_\S+)/.exec(out)![1]!;
    const base = `http://127.0.0.1:${held.port}`;
    const session = await post(`${base}/v1/account/sessions`, { email: 'owner@localhost', password });
    expect(session.status).toBe(201);
    expect(await get(`${base}/v1/account`, apiKey)).toBe(200);
    // Requests are not logged at the default level: the banner stays in sight.
    const before = server.stdout().length;
    for (let i = 0; i < 3; i++) expect(await get(`${base}/healthz`, apiKey)).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(server.stdout().slice(before)).toBe('');

    // The credentials are lost: reset-owner, next to the data, gets the owner back in.
    const reset = start(['admin', 'reset-owner', '--api-key'], { SPACES_DATA_DIR: dataDir });
    running.push(reset.child);
    expect(await reset.exited, reset.stderr()).toBe(0);
    const newPassword = /New password for owner@localhost: (\S+)/.exec(reset.stdout())![1]!;
    const newKey = /New API key: (sfa_\S+)/.exec(reset.stdout())![1]!;
    expect(newPassword).not.toBe(password);
    const again = await post(`${base}/v1/account/sessions`, {
      email: 'owner@localhost',
      password: newPassword,
    });
    expect(again.status).toBe(201);
    expect((await post(`${base}/v1/account/sessions`, { email: 'owner@localhost', password })).status).toBe(
      401,
    );
    // The old sessions are signed out; the new key works.
    expect(await get(`${base}/v1/account`, session.json.data.token)).toBe(401);
    expect(await get(`${base}/v1/account`, newKey)).toBe(200);

    server.child.kill('SIGTERM');
    await server.exited;
  }, 120_000);

  it('reset-owner says what is wrong when there is no data or no owner', async () => {
    const missing = start(['admin', 'reset-owner'], { SPACES_DATA_DIR: path.join(dataDir, 'nothing-here') });
    expect(await missing.exited).toBe(1);
    expect(missing.stderr()).toMatch(/^spaces admin: no database at .*SPACES_DATA_DIR/);
    expect(fs.existsSync(path.join(dataDir, 'nothing-here'))).toBe(false);
    // A database without an owner yet (an empty file is an empty SQLite database).
    const empty = path.join(dataDir, 'empty');
    fs.mkdirSync(empty);
    fs.writeFileSync(path.join(empty, 'spaces.db'), '');
    const noOwner = start(['admin', 'reset-owner'], { SPACES_DATA_DIR: empty });
    expect(await noOwner.exited).toBe(1);
    expect(noOwner.stderr()).toContain('there is no owner account yet');
    const unknown = start(['admin', 'frobnicate'], {});
    expect(await unknown.exited).toBe(2);
    expect(unknown.stderr()).toContain('unknown admin command');
  }, 60_000);
});
