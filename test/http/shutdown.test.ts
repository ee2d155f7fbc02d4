import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * Shutdown of a real `spaces server` process (SPACES_SHUTDOWN_TIMEOUT): a client that holds an upload
 * open forever must not keep a stopping server alive, and a second signal exits at once.
 */
const BIN = path.resolve(__dirname, '../../bin/spaces.mjs');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

interface Running {
  child: ChildProcess;
  port: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  output: () => string;
}

const started: Running[] = [];
const dirs: string[] = [];

async function startChild(shutdownTimeout: string, drainSeconds = '0'): Promise<Running> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-shutdown-'));
  dirs.push(dataDir);
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'server'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SPACES_DATA_DIR: dataDir,
      SPACES_LOG_LEVEL: 'info',
      SPACES_SHUTDOWN_TIMEOUT: shutdownTimeout,
      SPACES_DRAIN_SECONDS: drainSeconds,
      SPACES_DATABASE_URL: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const running = { child, port, exited, output: () => out };
  started.push(running);
  const deadline = Date.now() + 50_000;
  while (!out.includes('Spaces listening on')) {
    if (child.exitCode !== null) throw new Error(`server exited at start: ${out}`);
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return running;
}

/** An anonymous publish whose multipart body promises 10 MB and never sends more than its start. */
async function holdUploadOpen(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.on('error', () => {});
  const boundary = 'b0undary';
  socket.write(
    'POST /v1/publish HTTP/1.1\r\nHost: localhost\r\n' +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10485760\r\n\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="index.html"\r\n` +
      'Content-Type: text/html\r\n\r\n<h1>never finished',
  );
  // Let the server take the request in before the signal.
  await new Promise((r) => setTimeout(r, 500));
  return socket;
}

/** The exit, or null when the process is still running after `ms`. */
async function exitWithin(r: Running, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const res = await Promise.race([
    r.exited,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), ms);
    }),
  ]);
  clearTimeout(timer);
  return res;
}

afterEach(async () => {
  for (const r of started.splice(0)) {
    if (r.child.exitCode === null && r.child.signalCode === null) {
      r.child.kill('SIGKILL');
      await r.exited;
    }
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const get = async (port: number, p: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${p}`);
  return { status: res.status, body: await res.text() };
};

describe('server shutdown', () => {
  it('drains on SIGTERM: /readyz answers 503 for SPACES_DRAIN_SECONDS while requests are still served, then exits', async () => {
    const r = await startChild('5', '2');
    expect((await get(r.port, '/readyz')).status).toBe(200);
    const signalled = Date.now();
    r.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ready = await get(r.port, '/readyz');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toMatchObject({
      code: 'service_unavailable',
      detail: 'The server is shutting down.',
    });
    // Still serving everything else while the balancer takes it out.
    expect((await get(r.port, '/healthz')).status).toBe(200);
    expect((await get(r.port, '/v1/openapi.json')).status).toBe(200);
    expect(await exitWithin(r, 1000)).toBeNull();
    const exit = await exitWithin(r, 8000);
    expect(exit, `still running after the drain:\n${r.output()}`).not.toBeNull();
    expect(exit!.code).toBe(0);
    expect(exit!.at - signalled).toBeGreaterThanOrEqual(2000);
    expect(exit!.at - signalled).toBeLessThan(2000 + 5000);
    expect(r.output()).toContain('draining');
  }, 120_000);

  it('skips the drain on SIGINT (Ctrl-C in a terminal)', async () => {
    const r = await startChild('5', '30');
    const signalled = Date.now();
    r.child.kill('SIGINT');
    const exit = await exitWithin(r, 8000);
    expect(exit, `still running after SIGINT:\n${r.output()}`).not.toBeNull();
    expect(exit!.code).toBe(0);
    expect(exit!.at - signalled).toBeLessThan(5000);
  }, 120_000);

  it('exits within SPACES_SHUTDOWN_TIMEOUT while a client holds an upload open', async () => {
    const r = await startChild('2');
    await holdUploadOpen(r.port);
    const signalled = Date.now();
    r.child.kill('SIGTERM');
    const exit = await exitWithin(r, 8000);
    expect(exit, `still running 8 s after SIGTERM:\n${r.output()}`).not.toBeNull();
    // Requests get half the timeout, then their connections are cut and the server closes cleanly
    // (0; a close that had to be abandoned at the timeout would exit 1).
    expect(exit!.code).toBe(0);
    expect(exit!.at - signalled).toBeGreaterThanOrEqual(900);
    expect(exit!.at - signalled).toBeLessThan(2000 + 1000);
    expect(r.output()).toContain('shutting down');
  }, 120_000);

  it('exits at once on a second signal', async () => {
    const r = await startChild('60');
    await holdUploadOpen(r.port);
    r.child.kill('SIGTERM');
    // Still draining (the upload has 30 s to finish)…
    expect(await exitWithin(r, 700)).toBeNull();
    const second = Date.now();
    r.child.kill('SIGTERM');
    const exit = await exitWithin(r, 5000);
    expect(exit, `still running after a second SIGTERM:\n${r.output()}`).not.toBeNull();
    expect(exit!.at - second).toBeLessThan(2000);
    expect(exit!.code).toBe(143);
  }, 120_000);
});
