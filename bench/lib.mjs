// Helpers the benches share: child processes and temp dirs (registered, so each script's cleanup can
// remove them on every exit path), the tools they install, ports, HTTP requests, waiting.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Every child started with `start`; the script's cleanup stops them. */
export const children = new Set();
/** Every dir made with `tempDir`; the script's cleanup removes them. */
export const tempDirs = new Set();

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Whether `pid` still runs (an exited child we have not reaped yet is a zombie: not alive). */
export function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Spawns a registered child keeping the last 8,000 characters of its output (`child.output()`). */
export function start(cmd, args, opts = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  children.add(child);
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.output = () => output;
  return child;
}

export function have(bin) {
  return spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
}

export function nginxBinary() {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(p)) return p;
  return have('nginx') ? 'nginx' : null;
}

/** Installs nginx, wrk and taskset with apt-get (non-interactive; `sudo -n` when not root) if missing. */
export function ensureTools() {
  const missing = [];
  if (!nginxBinary()) missing.push('nginx');
  if (!have('wrk')) missing.push('wrk');
  if (!have('taskset')) missing.push('util-linux');
  if (missing.length === 0) return;
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  console.log(`installing ${missing.join(', ')} with apt-get…`);
  const run = (args) => {
    const full = [...sudo, ...args];
    const r = spawnSync(full[0], full.slice(1), { env, stdio: 'inherit', timeout: 180_000 });
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed (status ${r.status})`);
  };
  run(['apt-get', 'update', '-qq']);
  run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing]);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** One HTTP request to 127.0.0.1 over node:http (which lets us set Host). */
export function httpRequest(
  port,
  method,
  pathname,
  { host, headers = {}, body, agent, timeoutMs = 15_000 } = {},
) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathname,
        ...(agent ? { agent } : {}),
        headers: { ...(host ? { host } : {}), ...headers },
      },
      (res) => {
        const parts = [];
        res.on('data', (c) => parts.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${pathname}: timeout`)));
    req.end(body);
  });
}

/** Polls `check` until it is true, the child exits, or `ms` pass. */
export async function waitFor(check, what, ms, child, pollMs = 100) {
  const until = Date.now() + ms;
  let last;
  while (Date.now() < until) {
    if (child && child.exitCode !== null) throw new Error(`${what}: process exited\n${child.output()}`);
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await sleep(pollMs);
  }
  throw new Error(
    `${what}: not ready after ${ms} ms (${last?.message ?? 'no answer'})\n${child?.output() ?? ''}`,
  );
}

/** A wrk latency figure in milliseconds. */
export function toMs(value, unit) {
  const n = Number(value);
  if (unit === 'us') return n / 1000;
  if (unit === 'ms') return n;
  if (unit === 's') return n * 1000;
  if (unit === 'm') return n * 60_000;
  return Number.NaN;
}

/** wrk's `--latency` percentile `q` (50, 90, 99…) in milliseconds; NaN when absent. */
export function wrkPercentileMs(out, q) {
  const m = new RegExp(`^\\s+${q}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out);
  return m ? toMs(m[1], m[2]) : Number.NaN;
}

/**
 * An nginx.conf for a benchmark peer: one worker in the foreground, everything it writes under
 * `dir`, sendfile and long keep-alive; `http` adds lines to the http block, `servers` its server blocks.
 */
export function nginxConfig(dir, { http = '', servers }) {
  return `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
${http}  client_body_temp_path ${dir}/tmp-body;
  proxy_temp_path ${dir}/tmp-proxy;
  fastcgi_temp_path ${dir}/tmp-fastcgi;
  uwsgi_temp_path ${dir}/tmp-uwsgi;
  scgi_temp_path ${dir}/tmp-scgi;
${servers}}
`;
}
