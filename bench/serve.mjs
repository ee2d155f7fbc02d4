#!/usr/bin/env node
// bench/serve: the site edge against nginx on the same files, in the same run.
//
//   npm run bench:serve
//
// Installs nginx and wrk from Debian (apt-get) when missing, starts a Spaces server pinned to CPU 0,
// publishes a site (a 4 KB index.html, a 1 MiB binary, 20 `_redirects` rules, `_headers` rules and an
// SPA fallback) to a public space, starts nginx (one worker, also on CPU 0) serving the same files with
// the same headers, then runs wrk on CPU 1 against both: the 4 KB file, the 1 MiB file and the 304
// path, and the 4 KB file over TLS 1.3 (both servers with one self-signed certificate). Prints
// req/s, p99 and the Spaces/nginx ratio, and writes bench/results/serve-<date>.json.
// Every process and temp dir is removed at the end, also on failure or Ctrl-C.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  children,
  ensureTools,
  freePort,
  have,
  httpRequest,
  isAlive,
  nginxBinary,
  nginxConfig,
  start,
  tempDir,
  tempDirs,
  toMs,
  waitFor,
  wrkPercentileMs,
} from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 5); // seconds per measured wrk run
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3); // measured runs per server and case, alternating
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2); // seconds of warm-up per server and case
const CONNECTIONS = 64;
const SLUG = 'bench-site';
const HOST = `${SLUG}.localhost`;
/** A private space with the same site behind a password (the `password` case). */
const PW_SLUG = 'bench-password';
const PW_HOST = `${PW_SLUG}.localhost`;
const SERVER_CPU = '0';
const LOAD_CPU = '1';
/**
 * Development aids: `BENCH_ONLY=spaces` skips nginx; `BENCH_CASES=small,large,notModified` picks
 * cases; `BENCH_CPU_PROF=<dir>` profiles the Spaces server; `BENCH_DURATION`/`BENCH_WARMUP` seconds.
 */
const ONLY = process.env.BENCH_ONLY ?? '';
const CPU_PROF = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;
/** `BENCH_NODE_ARGS="--trace-gc"`: extra node flags for the Spaces server; `BENCH_SERVER_LOG=<file>` keeps its output. */
const NODE_ARGS = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(/\s+/).filter(Boolean) : [];
const SERVER_LOG = process.env.BENCH_SERVER_LOG ? path.resolve(process.env.BENCH_SERVER_LOG) : null;

const TARGETS = {
  small: { ratio: 0.5, label: '4 KB file' },
  large: { ratio: 0.8, label: '1 MiB file' },
  notModified: { ratio: 0.55, label: '304 (If-None-Match)' },
  // The 4 KB file over TLS 1.3 with keep-alive: Spaces' own HTTPS listener against nginx's, the same
  // self-signed certificate on both (issue #21's HTTPS case).
  tls: { ratio: 0.8, label: '4 KB over TLS 1.3' },
  // The same over HTTP/2 (ALPN h2), one stream per connection at a time, measured with h2load
  // (Debian nghttp2-client) when it is installed; h2load reports no percentiles, so no p99 here.
  h2: { ratio: 0.8, label: '4 KB over HTTP/2' },
  // Spaces only: the 4 KB file of a password-protected space with a valid visitor session, against
  // Spaces' own public 4 KB figure of the same run (issue #25: ≥ 0.8×).
  password: { ratio: 0.8, label: '4 KB, password session', spacesOnly: true },
  // The 4 KB file with the access log on (the default) against a second Spaces server with
  // SPACES_ACCESS_LOG=off, same site, same CPU (issue #24): the ratio is logging on / logging off.
  logging: { ratio: 0.95, label: '4 KB, access log on/off' },
};
const P99_TARGET_MS = 5;

// ---------------------------------------------------------------------------------------------
// Cleanup: every child and temp dir (registered by lib.mjs) is removed on any exit path.

let cleaned = false;

function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGTERM');
      } catch {}
    }
  }
  const deadline = Date.now() + 3000;
  for (const child of children) {
    while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
      spawnSync('sleep', ['0.05']);
      if (!isAlive(child.pid)) break;
    }
    if (isAlive(child.pid)) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {}
    }
  }
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
}

process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------------------------
// The site

function buildSite() {
  const shellHead =
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Bench</title>\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n</head>\n<body>\n<div id="app">\n';
  const tail = '</div>\n<script src="/assets/app.js"></script>\n</body>\n</html>\n';
  let filler = '';
  for (let i = 0; filler.length < 4096 - shellHead.length - tail.length; i++) {
    filler += `<p>Paragraph ${i}: the quick brown fox jumps over the lazy dog.</p>\n`;
  }
  const html = (shellHead + filler).slice(0, 4096 - tail.length) + tail;
  if (Buffer.byteLength(html) !== 4096) throw new Error('index.html is not 4 KB');

  // 1 MiB of incompressible bytes (no precomputed br/gzip variant to hide behind).
  const big = randomBytes(1024 * 1024);

  const redirects = [];
  for (let i = 1; i <= 12; i++) redirects.push(`/old-page-${i} /page-${i} 301`);
  redirects.push('/blog/:year/:slug /posts/:year/:slug 301');
  redirects.push('/docs/v1/* /docs/:splat 301');
  redirects.push('/news/* /posts/:splat 302');
  redirects.push('/shop/:id /store/items/:id 308');
  redirects.push('/api/* https://api.example.com/:splat 302');
  redirects.push('/legacy/:a/:b/* /new/:b/:a/:splat 301');
  redirects.push('/search q=:q /find?term=:q 302');
  redirects.push('/team/:name/profile /people/:name 301');
  if (redirects.length !== 20) throw new Error('expected 20 redirect rules');
  // The SPA fallback: every path that is not a file serves the shell.
  const redirectsFile = `${redirects.join('\n')}\n/* /index.html 200\n`;

  const headersFile = [
    '/*',
    '  X-Frame-Options: DENY',
    '  Referrer-Policy: strict-origin-when-cross-origin',
    '  Permissions-Policy: camera=(), microphone=()',
    '/assets/*',
    '  Cache-Control: public, max-age=31536000, immutable',
    '  Access-Control-Allow-Origin: *',
    '',
  ].join('\n');

  return {
    files: {
      'index.html': Buffer.from(html),
      'assets/big.bin': big,
      _redirects: Buffer.from(redirectsFile),
      _headers: Buffer.from(headersFile),
    },
    // Spaces answers the home page at `/` (it redirects `/index.html` there); nginx gets its cheapest
    // path, the file by name, so its `index` directive lookup is not counted against it.
    paths: {
      spaces: { small: '/', large: '/assets/big.bin' },
      nginx: { small: '/index.html', large: '/assets/big.bin' },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Servers

/** A throwaway certificate for HOST, presented by both servers in the TLS case. */
function makeCertificate() {
  const dir = tempDir('bench-tls-');
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  const r = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${HOST}`,
    '-addext',
    `subjectAltName=DNS:${HOST}`,
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  fs.chmodSync(dir, 0o755);
  fs.chmodSync(key, 0o644);
  return { cert, key };
}

async function startSpaces(site, tls, extraEnv = {}, name = 'spaces') {
  const dataDir = tempDir('spaces-bench-');
  const port = await freePort();
  const tlsPort = await freePort();
  const token = `sfa_${randomBytes(32).toString('hex')}`;
  const nodeArgs = [...NODE_ARGS, ...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : [])];
  const child = start(
    'taskset',
    ['-c', SERVER_CPU, process.execPath, ...nodeArgs, 'bin/spaces.mjs', 'server'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        SPACES_DATA_DIR: dataDir,
        SPACES_PUBLIC_URL: `http://127.0.0.1:${port}`,
        SPACES_BOOTSTRAP_TOKEN: token,
        SPACES_LOG_LEVEL: 'warn',
        SPACES_HTTPS_PORT: String(tlsPort),
        SPACES_TLS_CERT: tls.cert,
        SPACES_TLS_KEY: tls.key,
        NODE_ENV: 'production',
        ...extraEnv,
      },
    },
  );
  if (SERVER_LOG) {
    const log = fs.createWriteStream(SERVER_LOG);
    child.stdout.pipe(log);
    child.stderr.pipe(log);
  }
  await waitFor(
    async () => (await httpRequest(port, 'GET', '/readyz')).status === 200,
    'spaces server',
    30_000,
    child,
  );

  const api = async (method, pathname, body) => {
    const res = await httpRequest(port, method, pathname, {
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = res.body.toString();
    if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };

  const publish = async (slug, access) => {
    const space = (await api('POST', '/v1/spaces', { slug, access })).data.space;
    const manifest = Object.entries(site.files).map(([p, buf]) => ({
      path: p,
      sha256: createHash('sha256').update(buf).digest('hex'),
      size: buf.length,
    }));
    const receipt = (await api('POST', `/v1/spaces/${space.id}/versions`, { files: manifest })).data;
    for (const t of receipt.upload.targets) {
      const url = new URL(t.url);
      const res = await httpRequest(Number(url.port), 'PUT', url.pathname + url.search, {
        headers: { 'content-type': 'application/octet-stream' },
        body: site.files[t.path],
      });
      if (res.status !== 200) throw new Error(`upload ${t.path}: ${res.status} ${res.body}`);
    }
    await api('POST', `/v1/spaces/${space.id}/versions/${receipt.version.id}/finalize`);
    // Say the access explicitly in case defaults ever change.
    if (space.access !== access) await api('PATCH', `/v1/spaces/${space.id}`, { access });
    return space;
  };
  await publish(SLUG, 'public');
  // The password case: the same site in a private space behind a password, and a visitor session.
  const pw = await publish(PW_SLUG, 'private');
  await api('POST', `/v1/spaces/${pw.id}/password-credentials`, { password: 'bench password' });
  const signIn = await httpRequest(port, 'POST', '/__service/password', {
    host: PW_HOST,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'password=bench+password&return=%2F',
  });
  const cookie = String([signIn.headers['set-cookie']].flat()[0] ?? '').split(';')[0];
  if (signIn.status !== 303 || !cookie) throw new Error(`password sign-in: ${signIn.status}`);
  return { name, port, tlsPort, child, pid: child.pid, sessionCookie: cookie };
}

async function startNginx(site, tls) {
  const dir = tempDir('nginx-bench-');
  const root = path.join(dir, 'root');
  fs.mkdirSync(path.join(root, 'assets'), { recursive: true });
  for (const [p, buf] of Object.entries(site.files)) {
    if (p.startsWith('_')) continue; // rule files are compiled by Spaces, never served
    fs.writeFileSync(path.join(root, p), buf);
  }
  // nginx workers run as nobody when started by root: let them read the tree.
  for (const d of [dir, root, path.join(root, 'assets')]) fs.chmodSync(d, 0o755);
  for (const p of ['index.html', 'assets/big.bin']) fs.chmodSync(path.join(root, p), 0o644);
  const port = await freePort();
  const tlsPort = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(
    conf,
    nginxConfig(dir, {
      http: '  keepalive_timeout 65;\n',
      servers: `  server {
    listen 127.0.0.1:${port};
    listen 127.0.0.1:${tlsPort} ssl http2;
    ssl_certificate ${tls.cert};
    ssl_certificate_key ${tls.key};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:1m;
    server_name ${HOST};
    root ${root};
    # The same response headers the Spaces site sends from its _headers file.
    add_header X-Frame-Options DENY;
    add_header Referrer-Policy strict-origin-when-cross-origin;
    add_header Permissions-Policy "camera=(), microphone=()";
    add_header X-Content-Type-Options nosniff;
    location / { try_files $uri /index.html; }
    location /assets/ {
      add_header X-Frame-Options DENY;
      add_header Referrer-Policy strict-origin-when-cross-origin;
      add_header Permissions-Policy "camera=(), microphone=()";
      add_header X-Content-Type-Options nosniff;
      add_header Cache-Control "public, max-age=31536000, immutable";
      add_header Access-Control-Allow-Origin *;
    }
  }
`,
    }),
  );
  const child = start('taskset', ['-c', SERVER_CPU, nginxBinary(), '-p', dir, '-c', conf]);
  await waitFor(
    async () => (await httpRequest(port, 'GET', '/index.html', { host: HOST })).status === 200,
    'nginx',
    10_000,
    child,
  );
  return { name: 'nginx', port, tlsPort, child, pid: child.pid };
}

// ---------------------------------------------------------------------------------------------
// CPU accounting: on a shared machine throughput moves with other load, CPU time per request much
// less. A server's CPU time is its process plus its children (nginx's worker), from /proc.

const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

function processTree(pid) {
  const out = [pid];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const kids = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const k of kids ? kids.split(/\s+/) : []) out.push(...processTree(Number(k)));
    }
  } catch {}
  return out;
}

/** User + system CPU seconds used so far by `pid` and its descendants (null without /proc). */
function cpuSeconds(pid) {
  let ticks = 0;
  try {
    for (const p of processTree(pid)) {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    }
  } catch {
    return null;
  }
  return ticks / TICKS;
}

// ---------------------------------------------------------------------------------------------
// wrk

function parseWrk(out) {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p = (q) => wrkPercentileMs(out, q);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const transfer = /Transfer\/sec:\s+([\d.]+)(\w+)/.exec(out);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  return {
    requestsPerSec: rps,
    requests,
    p50Ms: p(50),
    p90Ms: p(90),
    p99Ms: p(99),
    transferPerSec: transfer ? `${transfer[1]}${transfer[2]}` : null,
    socketErrors: errors
      ? { connect: +errors[1], read: +errors[2], write: +errors[3], timeout: +errors[4] }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
    non2xx3xx: non2xx,
  };
}

/** h2load over HTTP/2 for `seconds`, one thread and CONNECTIONS connections with one stream each. */
function h2load(port, pathname, seconds) {
  return new Promise((resolve, reject) => {
    const args = ['-c', LOAD_CPU, 'h2load', '-t1', `-c${CONNECTIONS}`, '-m1', `-D${seconds}`];
    args.push('-H', `:authority: ${HOST}`, `https://127.0.0.1:${port}${pathname}`);
    const child = start('taskset', args);
    const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 15) * 1000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      const out = child.output();
      if (code !== 0) return reject(new Error(`h2load exited ${code}\n${out}`));
      if (!/Application protocol: h2/.test(out)) return reject(new Error(`h2load did not get h2\n${out}`));
      const done = /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed/.exec(out);
      const status = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
      const mean = /time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)/.exec(out);
      resolve({
        requestsPerSec: Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(out)?.[1]),
        requests: Number(done?.[3] ?? 0),
        p50Ms: Number.NaN,
        p90Ms: Number.NaN,
        p99Ms: Number.NaN,
        meanMs: mean ? toMs(mean[1], mean[2]) : Number.NaN,
        socketErrors: { connect: 0, read: 0, write: 0, timeout: Number(done?.[4] ?? 0) },
        non2xx3xx: status ? Number(status[3]) + Number(status[4]) : 0,
      });
    });
  });
}

function wrk(port, pathname, headers, seconds, scheme = 'http') {
  return new Promise((resolve, reject) => {
    const args = [
      '-c',
      LOAD_CPU,
      'wrk',
      '-t1',
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      '--latency',
      '-H',
      `Host: ${headers.Host ?? HOST}`,
    ];
    for (const [k, v] of Object.entries(headers)) if (k !== 'Host') args.push('-H', `${k}: ${v}`);
    args.push(`${scheme}://127.0.0.1:${port}${pathname}`);
    const child = start('taskset', args);
    const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 15) * 1000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      if (code !== 0) return reject(new Error(`wrk exited ${code}\n${child.output()}`));
      resolve(parseWrk(child.output()));
    });
  });
}

// ---------------------------------------------------------------------------------------------

/** The middle element by `key` (the lower middle for an even count). */
function portOf(c, server) {
  return c.port ? c.port(server) : server.port;
}

/** The case's load generator: wrk, or h2load for the HTTP/2 case. */
function load(c, server, pathname, seconds) {
  if (c.tool === 'h2load') return h2load(portOf(c, server), pathname, seconds);
  return wrk(portOf(c, server), pathname, c.headers(server), seconds, c.scheme);
}

function median(items, key) {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function fmtRps(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—';
}
function fmtMs(n) {
  return Number.isFinite(n) ? `${n.toFixed(2)} ms` : '—';
}

async function main() {
  const began = Date.now();
  if (os.cpus().length < 2) throw new Error('needs at least 2 CPUs (server on CPU 0, wrk on CPU 1)');
  ensureTools();
  const site = buildSite();
  const tls = makeCertificate();
  const spaces = await startSpaces(site, tls);
  const nginx = ONLY === 'spaces' ? null : await startNginx(site, tls);
  const servers = [spaces, nginx].filter(Boolean);

  // Check both answer the same bytes and learn each server's ETag for the 304 case.
  const cases = [];
  for (const server of servers) {
    for (const [key, p] of Object.entries(site.paths[server.name])) {
      const res = await httpRequest(server.port, 'GET', p, { host: HOST });
      const expected = key === 'small' ? site.files['index.html'] : site.files['assets/big.bin'];
      if (res.status !== 200 || !res.body.equals(expected))
        throw new Error(`${server.name} ${p}: status ${res.status}, ${res.body.length} bytes`);
      if (key === 'small') {
        const etag = res.headers.etag;
        const cond = await httpRequest(server.port, 'GET', p, {
          host: HOST,
          headers: { 'if-none-match': etag },
        });
        if (cond.status !== 304) throw new Error(`${server.name} ${p}: If-None-Match gave ${cond.status}`);
        server.etag = etag;
      }
    }
  }
  cases.push({ key: 'small', path: (s) => site.paths[s.name].small, headers: () => ({}) });
  cases.push({ key: 'large', path: (s) => site.paths[s.name].large, headers: () => ({}) });
  cases.push({
    key: 'notModified',
    path: (s) => site.paths[s.name].small,
    headers: (s) => ({ 'If-None-Match': s.etag }),
  });
  cases.push({
    key: 'tls',
    path: (s) => site.paths[s.name].small,
    headers: () => ({}),
    port: (s) => s.tlsPort,
    scheme: 'https',
  });
  cases.push({
    key: 'password',
    path: () => '/',
    headers: (s) => ({ Host: PW_HOST, Cookie: s.sessionCookie }),
  });
  // Spaces offers h2 only with SPACES_HTTP2=on (off by default): without it the case would measure
  // nothing but a refused protocol.
  if (have('h2load') && process.env.SPACES_HTTP2 !== 'on') {
    console.error('bench:serve: the h2 case runs only with SPACES_HTTP2=on (Spaces offers HTTP/2 only then)');
  } else if (have('h2load')) {
    cases.push({
      key: 'h2',
      path: (s) => site.paths[s.name].small,
      headers: () => ({}),
      port: (s) => s.tlsPort,
      tool: 'h2load',
    });
  }

  const results = [];
  /** Spaces-only cases (the password session) and, with BENCH_ONLY=spaces, the rows without nginx. */
  const spacesOnly = [];
  const publicOnly = [];
  const only = process.env.BENCH_CASES ? process.env.BENCH_CASES.split(',') : null;
  // The access log case: a second Spaces server with logging off is the peer (started only for it).
  if (!only || only.includes('logging')) {
    const nolog = await startSpaces(site, tls, { SPACES_ACCESS_LOG: 'off' }, 'nolog');
    const res = await httpRequest(nolog.port, 'GET', site.paths.spaces.small, { host: HOST });
    if (res.status !== 200 || !res.body.equals(site.files['index.html']))
      throw new Error(`nolog ${site.paths.spaces.small}: status ${res.status}`);
    cases.push({
      key: 'logging',
      path: () => site.paths.spaces.small,
      headers: () => ({}),
      servers: [spaces, nolog],
      peer: 'nolog',
      // Lets the logging server's last flush finish before the peer is measured (not charged to it).
      settleMs: 1500,
    });
  }
  let logging = null;
  for (const c of cases) {
    if (only && !only.includes(c.key)) continue;
    const row = { case: c.key, label: TARGETS[c.key].label, paths: {}, rounds: [] };
    const caseServers = c.servers ?? (TARGETS[c.key].spacesOnly ? [spaces] : servers);
    const peer = c.peer ?? 'nginx';
    for (const server of caseServers) {
      row.paths[server.name] = c.path(server);
      if (WARMUP > 0) await load(c, server, row.paths[server.name], WARMUP);
    }
    // Rounds alternate the order (Spaces first, then nginx first, …) so drift in the machine's load
    // hits both alike; each round's ratio compares two runs seconds apart.
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? caseServers : [...caseServers].reverse();
      const got = {};
      for (const server of order) {
        const p = row.paths[server.name];
        const cpuBefore = cpuSeconds(server.pid);
        const r = await load(c, server, p, DURATION);
        // The logging case waits for the last flush and counts its CPU time to the run.
        if (c.settleMs) await new Promise((res) => setTimeout(res, c.settleMs));
        const cpuAfter = cpuSeconds(server.pid);
        r.serverCpuSeconds =
          cpuBefore === null || cpuAfter === null ? null : +(cpuAfter - cpuBefore).toFixed(2);
        r.requestsPerCpuSecond = r.serverCpuSeconds ? Math.round(r.requests / r.serverCpuSeconds) : null;
        got[server.name] = r;
        process.stdout.write(
          `  ${row.label.padEnd(20)} ${server.name.padEnd(7)} round ${round + 1}/${ROUNDS} ${fmtRps(r.requestsPerSec).padStart(9)} req/s  p99 ${fmtMs(r.p99Ms)}  ${fmtRps(r.requestsPerCpuSecond).padStart(9)} req/CPU-s\n`,
        );
      }
      if (got[peer]) got.ratio = got.spaces.requestsPerSec / got[peer].requestsPerSec;
      row.rounds.push(got);
    }
    // Each server's figures are its median round (by req/s); the ratio is the median round ratio.
    for (const server of caseServers) {
      const runs = row.rounds.map((r) => r[server.name]);
      row[server.name] = median(runs, (r) => r.requestsPerSec);
      row[server.name].p99MsRange = [
        Math.min(...runs.map((r) => r.p99Ms)),
        Math.max(...runs.map((r) => r.p99Ms)),
      ];
    }
    if (TARGETS[c.key].spacesOnly) {
      // Against Spaces' public 4 KB figure of this run.
      const pub = results.find((r) => r.case === 'small') ?? publicOnly.find((r) => r.case === 'small');
      row.publicRps = pub ? pub.spaces.requestsPerSec : null;
      row.ratioToPublic = row.publicRps ? row.spaces.requestsPerSec / row.publicRps : null;
      row.target = TARGETS[c.key].ratio;
      row.meetsRatio = row.ratioToPublic !== null && row.ratioToPublic >= row.target;
      console.log(
        `  ${row.label}: ${fmtRps(row.spaces.requestsPerSec)} req/s = ${row.ratioToPublic?.toFixed(2) ?? '—'}× the public 4 KB (${fmtRps(row.publicRps)} req/s), target ≥ ${row.target}× ${row.meetsRatio ? 'ok' : 'MISS'}`,
      );
      spacesOnly.push(row);
      continue;
    }
    if (c.key === 'logging') {
      const ratios = row.rounds.map((r) => r.ratio);
      row.ratio = median(ratios, (x) => x);
      row.ratioRange = [Math.min(...ratios), Math.max(...ratios)];
      row.target = TARGETS.logging.ratio;
      row.meetsRatio = row.ratio >= row.target;
      const cpu = row.rounds.map((r) =>
        r.spaces.requestsPerCpuSecond && r.nolog.requestsPerCpuSecond
          ? r.spaces.requestsPerCpuSecond / r.nolog.requestsPerCpuSecond
          : Number.NaN,
      );
      row.cpuRatio = median(cpu, (x) => x);
      row.cpuRatioRange = [Math.min(...cpu), Math.max(...cpu)];
      logging = row;
      continue;
    }
    if (!nginx) {
      publicOnly.push(row);
      continue;
    }
    const ratios = row.rounds.map((r) => r.ratio);
    row.ratioRange = [Math.min(...ratios), Math.max(...ratios)];
    if (!nginx) continue;
    row.ratio = median(ratios, (x) => x);
    row.cpuRatio =
      row.spaces.requestsPerCpuSecond && row.nginx.requestsPerCpuSecond
        ? row.spaces.requestsPerCpuSecond / row.nginx.requestsPerCpuSecond
        : null;
    row.target = TARGETS[c.key].ratio;
    row.meetsRatio = row.ratio >= row.target;
    row.meetsP99 = Number.isFinite(row.spaces.p99Ms) ? row.spaces.p99Ms <= P99_TARGET_MS : null;
    results.push(row);
  }

  const header = [
    'case',
    'Spaces req/s',
    'Spaces p99',
    'nginx req/s',
    'nginx p99',
    'ratio (range)',
    'req/CPU-s ratio',
    'target',
  ];
  const lines = results.map((r) => [
    r.label,
    fmtRps(r.spaces.requestsPerSec),
    fmtMs(r.spaces.p99Ms),
    fmtRps(r.nginx.requestsPerSec),
    fmtMs(r.nginx.p99Ms),
    `${r.ratio.toFixed(2)}× (${r.ratioRange[0].toFixed(2)}–${r.ratioRange[1].toFixed(2)})`,
    r.cpuRatio === null ? '—' : `${r.cpuRatio.toFixed(2)}×`,
    `≥ ${r.target}× ${r.meetsRatio ? 'ok' : 'MISS'}${r.meetsP99 === null ? '' : `, p99 ≤ ${P99_TARGET_MS} ms ${r.meetsP99 ? 'ok' : 'MISS'}`}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmtLine = (cells) =>
    `| ${cells.map((c, i) => (i === 0 || i === 7 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  console.log('');
  console.log(fmtLine(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const l of lines) console.log(fmtLine(l));

  if (logging) {
    const on = logging.spaces;
    const off = logging.nolog;
    console.log(
      `\n${logging.label}: on ${fmtRps(on.requestsPerSec)} req/s, p99 ${fmtMs(on.p99Ms)} (${on.p99MsRange.map((x) => x.toFixed(2)).join('–')}); ` +
        `off ${fmtRps(off.requestsPerSec)} req/s, p99 ${fmtMs(off.p99Ms)} (${off.p99MsRange.map((x) => x.toFixed(2)).join('–')}); ` +
        `on/off ${logging.ratio.toFixed(3)}× (${logging.ratioRange.map((x) => x.toFixed(3)).join('–')}), ` +
        `goal ≥ ${logging.target}× ${logging.meetsRatio ? 'ok' : 'MISS'}; ` +
        `req/CPU-s on/off ${logging.cpuRatio.toFixed(3)}× (${logging.cpuRatioRange.map((x) => x.toFixed(3)).join('–')})`,
    );
  }

  const errors = results.flatMap((r) =>
    ['spaces', 'nginx'].flatMap((s) => {
      const e = r[s].socketErrors;
      const n = e.connect + e.read + e.write + e.timeout + r[s].non2xx3xx;
      return n > 0 ? [`${s} ${r.label}: ${JSON.stringify(e)}, non-2xx/3xx ${r[s].non2xx3xx}`] : [];
    }),
  );
  if (errors.length) console.log(`\nerrors during the runs:\n  ${errors.join('\n  ')}`);

  const cpu = os.cpus()[0];
  const report = {
    date: new Date().toISOString(),
    machine: {
      cpu: cpu?.model ?? 'unknown',
      cpus: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      kernel: `${os.type()} ${os.release()}`,
      node: process.version,
      nginx: spawnSync(nginxBinary(), ['-v'], { encoding: 'utf8' }).stderr.trim(),
      wrk: spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout.split('\n')[0].trim(),
      note: 'Shared machine; server and nginx pinned to CPU 0, wrk to CPU 1, loopback network.',
    },
    settings: {
      durationSeconds: DURATION,
      rounds: ROUNDS,
      warmupSeconds: WARMUP,
      connections: CONNECTIONS,
      threads: 1,
      host: HOST,
      site: '4 KB index.html, 1 MiB random bytes, 20 _redirects rules + SPA fallback (/* /index.html 200), _headers rules',
    },
    targets: {
      ...Object.fromEntries(Object.entries(TARGETS).map(([k, v]) => [k, v.ratio])),
      p99Ms: P99_TARGET_MS,
    },
    results,
    spacesOnly,
    logging,
    errors,
    elapsedSeconds: Math.round((Date.now() - began) / 1000),
  };
  const outDir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, `serve-${report.date.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(ROOT, file)} (${report.elapsedSeconds} s)`);
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (err) => {
    console.error(`bench:serve failed: ${err?.stack ?? err}`);
    cleanup();
    process.exit(1);
  },
);
