#!/usr/bin/env node
// bench/runtime: a hello-world functions handler through Spaces (edge → workerd pool) against the
// same handler under a bare `workerd serve`, in the same run.
//
//   node bench/runtime.mjs
//
// Starts a Spaces server pinned to CPU 0 (its workerd children inherit the pin), publishes a space
// whose `handler.js` answers "hello", prints the cold start (the version's first request: workerd
// spawned and the bundle loaded), then starts a bare workerd (also on CPU 0) serving the same module
// over TCP and runs wrk (CPU 1, 64 connections, keep-alive) against both, alternating rounds.
// Prints req/s, p99 and the Spaces/workerd ratio (goal ≥ 0.6×, p99 ≤ 10 ms) and writes
// bench/results/runtime-<date>.json. Every process and temp dir is removed at the end.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  children,
  freePort,
  httpRequest,
  isAlive,
  start,
  tempDir,
  tempDirs,
  waitFor,
  wrkPercentileMs,
} from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = 64;
const SLUG = 'bench-fn';
const HOST = `${SLUG}.localhost`;
const HANDLER = "export default { fetch() { return new Response('hello'); } };\n";
const WORKERD = path.join(
  path.dirname(createRequire(import.meta.url).resolve('workerd/package.json')),
  'bin',
  'workerd',
);

function cleanup() {
  for (const c of children) if (c.pid && isAlive(c.pid)) c.kill('SIGKILL');
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
}
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

async function startSpaces() {
  const dataDir = tempDir('spaces-bench-rt-');
  const port = await freePort();
  const token = `sfa_${randomBytes(32).toString('hex')}`;
  // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it stops (a clean stop, before
  // the bare workerd's runs; SIGKILL in cleanup would lose it).
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const child = start('taskset', ['-c', '0', process.execPath, ...prof, 'bin/spaces.mjs', 'server'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SPACES_DATA_DIR: dataDir,
      SPACES_PUBLIC_URL: `http://127.0.0.1:${port}`,
      SPACES_BOOTSTRAP_TOKEN: token,
      SPACES_LOG_LEVEL: 'warn',
      SPACES_THUMBNAILS: 'off',
      NODE_ENV: 'production',
    },
  });
  await waitFor(
    async () => (await httpRequest(port, 'GET', '/readyz')).status === 200,
    'spaces',
    30_000,
    child,
  );
  const api = async (method, pathname, body) => {
    const res = await httpRequest(port, method, pathname, {
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = res.body.toString();
    if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const space = (await api('POST', '/v1/spaces', { slug: SLUG, access: 'public' })).data.space;
  const publish = async (handler) => {
    const files = {
      'index.html': Buffer.from('<h1>static</h1>'),
      'spaces.json': Buffer.from(JSON.stringify({ runtime: { kind: 'functions' } })),
      'handler.js': Buffer.from(handler),
    };
    const manifest = Object.entries(files).map(([p, b]) => ({
      path: p,
      size: b.length,
      sha256: createHash('sha256').update(b).digest('hex'),
    }));
    const receipt = (await api('POST', `/v1/spaces/${space.id}/versions`, { files: manifest })).data;
    for (const t of receipt.upload.targets) {
      const url = new URL(t.url);
      await httpRequest(Number(url.port), 'PUT', url.pathname + url.search, { body: files[t.path] });
    }
    await api('POST', `/v1/spaces/${space.id}/versions/${receipt.version.id}/finalize`);
  };
  const timed = async (expect) => {
    const t0 = performance.now();
    const r = await httpRequest(port, 'GET', '/hello', { host: HOST });
    const ms = performance.now() - t0;
    if (r.status !== 200 || r.body.toString() !== expect) throw new Error(`request: ${r.status} ${r.body}`);
    return ms;
  };
  // The server's first function request (the runtime's own modules load then too), the next one,
  // and then a new version's first request on a warm server: its workerd spawned, its bundle loaded.
  await publish("export default { fetch() { return new Response('first'); } };\n");
  const serverColdMs = await timed('first');
  await publish(HANDLER);
  const coldMs = await timed('hello');
  const warmMs = await timed('hello');
  return { port, coldMs, warmMs, serverColdMs, child };
}

async function startBareWorkerd() {
  const dir = tempDir('workerd-bench-');
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'worker.mjs'), HANDLER);
  fs.writeFileSync(
    path.join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .w)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const w :Workerd.Worker = (
  modules = [(name = "worker.mjs", esModule = embed "worker.mjs")],
  compatibilityDate = "2025-09-01",
);
`,
  );
  const child = start('taskset', ['-c', '0', WORKERD, 'serve', 'config.capnp'], { cwd: dir });
  await waitFor(
    async () => (await httpRequest(port, 'GET', '/hello', { host: HOST })).status === 200,
    'workerd',
    10_000,
    child,
    20,
  );
  return { port };
}

function wrk(port, seconds) {
  return new Promise((resolve, reject) => {
    const args = [
      '-c',
      '1',
      'wrk',
      '-t1',
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      '--latency',
      '-H',
      `Host: ${HOST}`,
      `http://127.0.0.1:${port}/hello`,
    ];
    const child = start('taskset', args);
    child.on('exit', (code) => {
      children.delete(child);
      const out = child.output();
      if (code !== 0) return reject(new Error(`wrk exited ${code}\n${out}`));
      const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
      resolve({
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
        p99Ms: wrkPercentileMs(out, 99),
        non2xx,
      });
    });
  });
}

try {
  const spaces = await startSpaces();
  console.log(
    `cold start (a version's first request, workerd spawned): ${spaces.coldMs.toFixed(1)} ms (goal ≤ 150 ms); next request ${spaces.warmMs.toFixed(1)} ms; the server's first function request ${spaces.serverColdMs.toFixed(1)} ms`,
  );
  // BENCH_CPU_PROF profiles the server alone: the bare workerd is measured after it stops.
  const targets = () => [['spaces', spaces], ...(bare ? [['workerd', bare]] : [])];
  let bare = process.env.BENCH_CPU_PROF ? null : await startBareWorkerd();
  const runs = { spaces: [], workerd: [] };
  for (const [, s] of targets()) await wrk(s.port, WARMUP);
  for (let i = 0; i < ROUNDS; i++)
    for (const [name, s] of targets()) runs[name].push(await wrk(s.port, DURATION));
  if (!bare) {
    spaces.child.kill('SIGINT');
    await new Promise((r) => spaces.child.once('exit', r));
    bare = await startBareWorkerd();
    await wrk(bare.port, WARMUP);
    for (let i = 0; i < ROUNDS; i++) runs.workerd.push(await wrk(bare.port, DURATION));
  }
  const best = (list) => list.reduce((a, b) => (b.rps > a.rps ? b : a));
  const sp = best(runs.spaces);
  const wd = best(runs.workerd);
  const ratio = sp.rps / wd.rps;
  console.log(`hello world, ${CONNECTIONS} connections, best of ${ROUNDS} × ${DURATION}s:`);
  console.log(`  spaces  ${sp.rps.toFixed(0)} req/s  p99 ${sp.p99Ms.toFixed(2)} ms  non-2xx ${sp.non2xx}`);
  console.log(`  workerd ${wd.rps.toFixed(0)} req/s  p99 ${wd.p99Ms.toFixed(2)} ms  non-2xx ${wd.non2xx}`);
  console.log(
    `  ratio ${ratio.toFixed(2)}× (goal ≥ 0.6×), p99 goal ≤ 10 ms: ${ratio >= 0.6 && sp.p99Ms <= 10 ? 'met' : 'NOT met'}`,
  );
  const out = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, `runtime-${new Date().toISOString().slice(0, 10)}.json`);
  fs.writeFileSync(
    file,
    `${JSON.stringify({ coldStartMs: spaces.coldMs, serverFirstFunctionRequestMs: spaces.serverColdMs, runs, ratio }, null, 2)}\n`,
  );
  console.log(`wrote ${path.relative(ROOT, file)}`);
} finally {
  cleanup();
}
