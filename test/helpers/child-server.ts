import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { expect } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * `spaces server` in a process of its own, as `npm start` runs it: a crash there can't take the test
 * runner down, and `expectAlive` proves after each case that the process still answers.
 */
export interface ChildServer {
  base: string;
  port: number;
  dataDir: string;
  /** The owner's API key (SPACES_BOOTSTRAP_TOKEN). */
  token: string;
  /** The last 8,000 characters the server wrote to stderr. */
  stderr(): string;
  /** The server's process id. */
  pid: number;
  /** How the process ended, or null while it runs. */
  exited(): string | null;
  /** The process still runs, answers `/readyz`, and logged no unhandled error. */
  expectAlive(label: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startChildServer(
  opts: { env?: Record<string, string>; name?: string } = {},
): Promise<ChildServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `spaces-${opts.name ?? 'child'}-`));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const token = `sfa_${randomBytes(32).toString('hex')}`;
  let stderr = '';
  let exited: string | null = null;
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'bin/spaces.mjs'), 'server'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SPACES_DATA_DIR: dataDir,
      SPACES_BOOTSTRAP_TOKEN: token,
      SPACES_LOG_LEVEL: 'error',
      // As in startServer: no Chromium per published space unless a test asks for it.
      SPACES_THUMBNAILS: 'off',
      ...opts.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-8000);
  });
  child.on('exit', (code, signal) => {
    exited = `exited (${code ?? signal})`;
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited) throw new Error(`server ${exited}: ${stderr}`);
    try {
      const r = await request(`${base}/readyz`);
      await r.body.text();
      if (r.statusCode === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    base,
    pid: child.pid!,
    port,
    dataDir,
    token,
    stderr: () => stderr,
    exited: () => exited,
    async expectAlive(label) {
      // A crash from a late stream error lands a moment after the answer.
      await new Promise((r) => setTimeout(r, 100));
      if (exited) throw new Error(`${label}: the server ${exited}: ${stderr}`);
      const r = await request(`${base}/readyz`);
      await r.body.text();
      expect(r.statusCode, label).toBe(200);
      expect(stderr, label).not.toMatch(/uncaught|unhandled/i);
    },
    async stop() {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
