import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import type { Pool } from 'undici';
import { undici } from '../net/undici.ts';
import { type WorkerdConfig, workerdConfig } from './capnp.ts';
import { TAIL_MODULE } from './log-sink.ts';
import { SHIM_MODULE, shimSource } from './shim.ts';
import { STORAGE_MODULE } from './storage-binding.ts';

const SETPRIV = '/usr/bin/setpriv';

/** The workerd binary installed from npm (`workerd` package, `bin/workerd`). */
export function workerdBinary(): string {
  const pkg = createRequire(import.meta.url).resolve('workerd/package.json');
  return path.join(path.dirname(pkg), 'bin', 'workerd');
}

export interface ProcessSpec {
  /** The directory this process owns (config, bundle, socket); removed when it stops. */
  dir: string;
  bundle: Buffer;
  compatibilityDate: string;
  env: Record<string, string>;
  outbound: WorkerdConfig['outbound'];
  logs?: WorkerdConfig['logs'];
  storage?: WorkerdConfig['storage'];
  bindings: WorkerdConfig['bindings'];
}

/**
 * One workerd child process running one version's worker (with one set of variables). It answers
 * on a Unix socket in its own directory; requests reach it through an undici keep-alive pool. `stop`
 * kills it (SIGKILL: a wedged isolate ignores anything gentler) and removes its directory.
 */
export class WorkerdProcess {
  readonly socket: string;
  /** Keep-alive connections to the worker's socket (undici: cheaper per request than node:http's client). */
  readonly pool: Pool;
  private child: ChildProcess | null = null;
  /** Requests in flight through this process. */
  inflight = 0;
  lastUsed = Date.now();
  exited = false;
  /** Retired on purpose (idle, evicted, over time): its exit is not a crash. */
  stopping = false;
  readonly exit: Promise<void>;
  private resolveExit!: () => void;
  private readonly stderr: string[] = [];

  constructor(
    readonly key: string,
    private readonly spec: ProcessSpec,
    private readonly onExit: (p: WorkerdProcess, detail: string) => void,
  ) {
    this.socket = path.join(spec.dir, 'http.sock');
    this.pool = new (undici().Pool)('http://worker', { socketPath: this.socket, connections: 128 });
    this.exit = new Promise((r) => {
      this.resolveExit = r;
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Writes the config and bundle, spawns workerd and waits until its socket accepts (≤ `readyMs`). */
  async start(readyMs = 10_000): Promise<void> {
    fs.mkdirSync(this.spec.dir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(this.spec.dir, 'worker.mjs'), this.spec.bundle);
    fs.writeFileSync(path.join(this.spec.dir, SHIM_MODULE), shimSource('worker.mjs'));
    const config = workerdConfig({
      socket: this.socket,
      module: 'worker.mjs',
      compatibilityDate: this.spec.compatibilityDate,
      env: this.spec.env,
      outbound: this.spec.outbound,
      logs: this.spec.logs ?? null,
      storage: this.spec.storage ?? null,
      bindings: this.spec.bindings,
      shim: SHIM_MODULE,
    });
    if (this.spec.storage) fs.writeFileSync(path.join(this.spec.dir, 'storage.mjs'), STORAGE_MODULE);
    if (this.spec.logs) fs.writeFileSync(path.join(this.spec.dir, 'tail.mjs'), TAIL_MODULE);
    fs.writeFileSync(path.join(this.spec.dir, 'config.capnp'), config, { mode: 0o600 });
    // No environment of the server's: workerd needs none, and the worker can't read it anyway.
    // With util-linux's setpriv, the kernel kills workerd if the server dies without closing the pool
    // (SIGKILL, OOM): no orphan keeps running. setpriv execs workerd, so the pid is workerd's.
    const args = ['serve', 'config.capnp'];
    const pdeath = fs.existsSync(SETPRIV);
    const child = spawn(
      pdeath ? SETPRIV : workerdBinary(),
      pdeath ? ['--pdeathsig', 'KILL', '--', workerdBinary(), ...args] : args,
      {
        cwd: this.spec.dir,
        env: {},
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    this.child = child;
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      if (this.stderr.length < 50) this.stderr.push(d.slice(0, 2000));
    });
    child.on('error', () => {});
    child.on('exit', (code, signal) => {
      this.exited = true;
      void this.pool.destroy().catch(() => {});
      fs.rmSync(this.spec.dir, { recursive: true, force: true });
      this.resolveExit();
      this.onExit(this, `workerd exited (${signal ?? code}): ${this.stderr.join('').slice(0, 500)}`);
    });
    const deadline = Date.now() + readyMs;
    for (;;) {
      if (this.exited) throw new Error(`workerd did not start: ${this.stderr.join('').slice(0, 1000)}`);
      if (await canConnect(this.socket)) return;
      if (Date.now() > deadline) {
        this.kill();
        throw new Error('workerd did not open its socket in time');
      }
      await new Promise((r) => setTimeout(r, 3));
    }
  }

  /** Ends the process now (SIGKILL); `exit` resolves once it is gone. */
  kill(): void {
    if (this.child && !this.exited) this.child.kill('SIGKILL');
  }

  async stop(): Promise<void> {
    if (!this.child) return;
    this.kill();
    await this.exit;
  }

  /** What workerd wrote to stderr so far (for logs). */
  errors(): string {
    return this.stderr.join('');
  }
}

function canConnect(socket: string): Promise<boolean> {
  if (!fs.existsSync(socket)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const s = net.connect(socket);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
