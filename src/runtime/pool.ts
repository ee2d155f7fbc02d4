import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { newId } from '../ids.ts';
import type { BindingsChannel } from './bindings.ts';
import { type LogSource, REQUEST_ID_HEADER, type RuntimeLogSink } from './log-sink.ts';
import type { OutboundGuard } from './outbound.ts';
import { WorkerdProcess } from './process.ts';
import type { StorageBinding } from './storage-binding.ts';

/** Behaviour §18: 30 s per request. */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_IDLE_MS = 5 * 60_000;
export const DEFAULT_MAX_PROCESSES = 16;

export interface PoolOptions {
  timeoutMs?: number;
  idleMs?: number;
  maxProcesses?: number;
  outbound: OutboundGuard;
  /** Where each process's tail worker sends request traces (runtime logs); none: no logs kept. */
  logs?: RuntimeLogSink;
  /** `env.STORAGE` of every worker (objects of its own space only); none: no `env.STORAGE`. */
  storage?: StorageBinding;
  /** The server's bindings channel (`env.DB`, …); absent: workers get no bindings. */
  bindings?: BindingsChannel;
  log?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void };
}

/** What runs under one key: a version's bundle, with its space's variables as `env`. */
export interface WorkerCode extends LogSource {
  bundle: Buffer;
  compatibilityDate: string;
  env: Record<string, string>;
  /** The version holds the `fetch` capability: outbound requests go through the guard. */
  fetch: boolean;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: http.IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

function plain(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/**
 * The server's pool of workerd processes. Process model: ONE process per (version, variables) key —
 * loading code means a new config, which workerd reads only at start, so giving each version its own
 * process loads its code once, lets a wedged or crashed worker be killed without touching any other
 * space's requests, and keeps one space's isolate out of another's process. Processes start on a
 * version's first request, are reused while warm, restarted on the next request after a crash, and
 * stopped when idle (or, past `maxProcesses`, the least recently used idle one). Each request has a
 * wall-clock limit: past it the process is killed (workerd has no CPU limit of its own) and the
 * request answered 504; the next request starts a fresh one.
 */
export class RuntimePool {
  readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly maxProcesses: number;
  private readonly processes = new Map<string, Promise<WorkerdProcess>>();
  private readonly live = new Set<WorkerdProcess>();
  private baseDir: string | null = null;
  private seq = 0;
  private closed = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: PoolOptions) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.idleMs = opts.idleMs ?? DEFAULT_IDLE_MS;
    this.maxProcesses = opts.maxProcesses ?? DEFAULT_MAX_PROCESSES;
    this.sweeper = setInterval(() => this.stopIdle(), Math.max(50, Math.min(this.idleMs, 60_000) / 2));
    this.sweeper.unref();
  }

  /** Pids of the running processes, by key (tests, metrics). */
  pids(): Map<string, number> {
    const out = new Map<string, number>();
    for (const p of this.live) if (p.pid !== undefined && !p.exited) out.set(p.key, p.pid);
    return out;
  }

  private dir(): string {
    this.baseDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-rt-'));
    return this.baseDir;
  }

  /** The running process for a key, started (from `load`) when there is none. */
  acquire(key: string, load: () => Promise<WorkerCode>): Promise<WorkerdProcess> {
    if (this.closed) return Promise.reject(new Error('the runtime pool is closed'));
    let p = this.processes.get(key);
    if (!p) {
      p = this.start(key, load);
      this.processes.set(key, p);
      p.catch(() => {
        if (this.processes.get(key) === p) this.processes.delete(key);
      });
    }
    return p;
  }

  private async start(key: string, load: () => Promise<WorkerCode>): Promise<WorkerdProcess> {
    const code = await load();
    if (this.live.size >= this.maxProcesses) this.evictOne();
    const token = randomBytes(24).toString('hex');
    const outbound = code.fetch ? await this.opts.outbound.register(token) : null;
    const logs = this.opts.logs
      ? await this.opts.logs.register(token, {
          spaceId: code.spaceId,
          versionId: code.versionId,
          entry: code.entry,
          routes: code.routes,
        })
      : null;
    const storage = this.opts.storage
      ? await this.opts.storage.register(token, { spaceId: code.spaceId, versionId: code.versionId })
      : null;
    const bindings = this.opts.bindings
      ? await this.opts.bindings.attach(token, { spaceId: code.spaceId, versionId: code.versionId })
      : null;
    const proc = new WorkerdProcess(
      key,
      {
        dir: path.join(this.dir(), `p${++this.seq}`),
        bundle: code.bundle,
        compatibilityDate: code.compatibilityDate,
        env: code.env,
        outbound,
        logs,
        storage,
        bindings,
      },
      (p, detail) => {
        this.live.delete(p);
        this.opts.outbound.unregister(token);
        this.opts.logs?.unregister(token);
        this.opts.storage?.unregister(token);
        this.opts.bindings?.detach(token);
        const current = this.processes.get(key);
        // A crashed or killed process is forgotten: the next request starts a fresh one.
        void current?.then((c) => {
          if (c === p && this.processes.get(key) === current) this.processes.delete(key);
        });
        if (!this.closed && !p.stopping) this.opts.log?.warn({ key, detail }, 'workerd process exited');
      },
    );
    this.live.add(proc);
    await proc.start();
    return proc;
  }

  private evictOne(): void {
    let lru: WorkerdProcess | null = null;
    for (const p of this.live) if (p.inflight === 0 && (!lru || p.lastUsed < lru.lastUsed)) lru = p;
    if (lru) this.retire(lru);
  }

  private retire(p: WorkerdProcess): void {
    p.stopping = true;
    if (this.processes.has(p.key)) {
      const cur = this.processes.get(p.key)!;
      void cur.then((c) => {
        if (c === p && this.processes.get(p.key) === cur) this.processes.delete(p.key);
      });
    }
    p.kill();
  }

  private stopIdle(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const p of this.live) if (p.inflight === 0 && p.lastUsed < cutoff) this.retire(p);
  }

  /**
   * Streams the request to the key's worker and its answer back. Resolves when the exchange ends;
   * never rejects (a failure answers 502/504, or ends the socket once headers went out).
   */
  async forward(
    key: string,
    load: () => Promise<WorkerCode>,
    req: IncomingMessage,
    res: ServerResponse,
    target: { host: string; url: string; headers?: OutgoingHttpHeaders },
  ): Promise<void> {
    let proc: WorkerdProcess;
    try {
      proc = await this.acquire(key, load);
    } catch (err) {
      this.opts.log?.warn({ key, err }, 'workerd failed to start');
      return plain(res, 502, 'The site’s function could not be started.');
    }
    proc.inflight++;
    proc.lastUsed = Date.now();
    return new Promise<void>((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        proc.inflight--;
        proc.lastUsed = Date.now();
        resolve();
      };
      // Each request gets its own id (any sent by the client is replaced): its runtime log lines
      // carry it, and the answer names it when the worker's doesn't.
      const requestId = newId('rid');
      const headers = {
        ...endToEnd(req.headers),
        ...target.headers,
        host: target.host,
        [REQUEST_ID_HEADER]: requestId,
      };
      const abort = new AbortController();
      const timer = setTimeout(() => {
        // Wedged (or simply too slow): this process goes, and with it only this version's requests.
        this.opts.log?.warn({ key, timeoutMs: this.timeoutMs }, 'function request over its time limit');
        abort.abort();
        this.retire(proc);
        plain(res, 504, `The site’s function did not answer within ${Math.round(this.timeoutMs / 1000)} s.`);
        finish();
      }, this.timeoutMs);
      res.on('close', () => {
        if (!res.writableFinished) abort.abort();
        finish();
      });
      const method = req.method ?? 'GET';
      const bodyless = method === 'GET' || method === 'HEAD';
      if (bodyless) req.resume();
      req.on('error', () => abort.abort());
      proc.pool
        .request({
          path: target.url,
          method: method as 'GET',
          headers: headers as Record<string, string>,
          // Through a PassThrough: undici destroys the body it was given, and the edge's access log still
          // reads the request's socket once the answer is sent.
          body: bodyless ? null : req.pipe(new PassThrough()),
          signal: abort.signal,
        })
        .then(
          (up) => {
            if (done) return void up.body.destroy();
            const out: OutgoingHttpHeaders = {};
            for (const [k, v] of Object.entries(up.headers))
              if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
            out[REQUEST_ID_HEADER] ??= requestId;
            res.writeHead(up.statusCode, out);
            up.body.pipe(res);
            up.body.on('error', () => res.destroy());
          },
          () => {
            if (done) return;
            plain(res, 502, 'The site’s function failed.');
            finish();
          },
        );
    });
  }

  /** Stops every process (and waits for them to be gone) and the outbound guard. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.live];
    for (const p of all) p.stopping = true;
    await Promise.all(all.map((p) => p.stop()));
    await this.opts.outbound.close();
    await this.opts.logs?.close();
    await this.opts.storage?.close();
    await this.opts.bindings?.close();
    if (this.baseDir) fs.rmSync(this.baseDir, { recursive: true, force: true });
  }
}
