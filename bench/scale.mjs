#!/usr/bin/env node
// bench/scale: Spaces at scale-out sizes (issue 20), one table.
//
//   node bench/scale.mjs [--spaces N] [--sites N] [--duration S] [--db sqlite,postgres] [--backends disk,s3]
//
// 1. Listing: N spaces (default 1,000,000) generated in bulk with SQL (clones of one space made
//    through the API: `generate_series` on PostgreSQL, a recursive CTE on SQLite), then
//    `GET /v1/spaces` first page and last page (keyset cursor built as the API builds it: the
//    listing's HMAC key is read from `meta`), p99 of each and their ratio — on SQLite and PostgreSQL.
//    With the same database: cold start (process spawn → first byte of a published site).
// 2. Serving: `--sites` (default 10,000) spaces published through the API, each with its own 4 KB
//    index.html, then the server restarted (cold caches) and wrk on random Host headers against it
//    and against nginx serving the same 10,000 directory trees from disk (`server_name
//    ~^(?<s>.+)\.localhost$; root …/$s;`), in the same run; blobs on disk, then on S3 (s3rver).
//    The server's VmRSS after serving them. On disk: serving p99 while a 10,000-file publish (the
//    real CLI) runs on the same instance, against idle p99.
//
// PostgreSQL: SPACES_BENCH_DATABASE_URL, else SPACES_TEST_DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/test — a database of its own per phase is created and dropped.
// The server is pinned to CPU 0 (as nginx), wrk to CPU 1. Traffic goes to 127.0.0.1 only. Every
// process, temp dir and database is removed at the end, also on failure or Ctrl-C.
import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import {
  children,
  ensureTools,
  freePort,
  isAlive,
  nginxBinary,
  nginxConfig,
  httpRequest as request,
  sleep,
  start,
  tempDir,
  tempDirs,
  waitFor,
  wrkPercentileMs,
} from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const SPACES = Number(arg('spaces', 1_000_000));
const SITES = Number(arg('sites', 10_000));
const DURATION = Number(arg('duration', 5));
const DBS = arg('db', 'sqlite,postgres')
  .split(',')
  .filter((d) => d && d !== 'none');
const BACKENDS = arg('backends', 'disk,s3')
  .split(',')
  .filter((b) => b && b !== 'none');
const PUBLISH_FILES = Number(arg('publish-files', 10_000));
/** `--cpu-prof <dir>`: the serving server writes a V8 CPU profile there when it stops. */
const CPU_PROF = arg('cpu-prof', null);
/** `--server-node-args "<flags>"`: extra Node flags for the serving server (e.g. `--max-old-space-size=96`). */
const SERVER_NODE_ARGS = (arg('server-node-args', '') ?? '').split(' ').filter(Boolean);
/** `--cache-bytes <n>`: SPACES_CACHE_BYTES of the server (default: its own default). */
const CACHE_BYTES = Number(arg('cache-bytes', 0));
const PG_URL =
  process.env.SPACES_BENCH_DATABASE_URL ||
  process.env.SPACES_TEST_DATABASE_URL ||
  'postgres://postgres@127.0.0.1:5432/test';
const SERVER_CPU = '0';
const LOAD_CPU = '1';
const CONNECTIONS = 32;
const SECRET_KEY = randomBytes(24).toString('hex');

// ---------------------------------------------------------------------------------------------
// Cleanup: children, temp dirs and databases are registered and removed on every exit path.

const databases = new Set();

function killChildren() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {}
    }
  }
}

function removeDirs() {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

async function dropDatabases() {
  for (const name of databases) {
    await admin(`drop database if exists ${name} with (force)`).catch((err) =>
      console.error(`could not drop database ${name}: ${err.message}`),
    );
  }
  databases.clear();
}

async function cleanup() {
  killChildren();
  for (const child of children) {
    for (let i = 0; i < 100 && isAlive(child.pid); i++) await sleep(20);
  }
  children.clear();
  await dropDatabases();
  removeDirs();
}

process.on('exit', () => {
  killChildren();
  removeDirs();
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    cleanup().finally(() => process.exit(130));
  });
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await gone;
  clearTimeout(t);
  children.delete(child);
}

async function admin(sql, params) {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    return await c.query(sql, params);
  } finally {
    await c.end();
  }
}

async function newPgDatabase(tag) {
  const name = `spaces_bench_${tag}_${randomBytes(4).toString('hex')}`;
  await admin(`create database ${name}`);
  databases.add(name);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function pgQuery(url, sql, params) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(sql, params);
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Requests share one keep-alive agent and wait up to 60 s (a listing over a million rows on a
// loaded machine).

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const httpRequest = (port, method, pathname, opts = {}) =>
  request(port, method, pathname, { agent, timeoutMs: 60_000, ...opts });

function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Heap in use and the edge caches' bytes and bounds, from the server's own `GET /metrics` (MiB). */
async function memoryMetrics(port) {
  const r = await httpRequest(port, 'GET', '/metrics');
  const m = new Map();
  for (const line of String(r.text ?? r.body ?? '').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    m.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  const sum = (name) =>
    [...m].filter(([k]) => k.startsWith(`${name}{`)).reduce((a, [, v]) => a + v, 0) / 1048576;
  return {
    heapUsed: (m.get('spaces_process_memory_bytes{kind="heap_used"}') ?? Number.NaN) / 1048576,
    cacheBytes: sum('spaces_edge_cache_bytes'),
    cacheMax: sum('spaces_edge_cache_max_bytes'),
  };
}

function vmRssMiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

// ---------------------------------------------------------------------------------------------
// The Spaces server

function spacesEnv({ dataDir, port, databaseUrl, blobUrl }) {
  return {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SPACES_DATA_DIR: dataDir,
    SPACES_DATABASE_URL: databaseUrl,
    ...(blobUrl ? { SPACES_BLOB_URL: blobUrl } : {}),
    // Every blob is a file (or an object): the 4 KB page is read from the blob store, not a row.
    SPACES_INLINE_BLOB_BYTES: '0',
    SPACES_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SPACES_BASE_DOMAIN: 'localhost',
    SPACES_SECRET_KEY: SECRET_KEY,
    SPACES_BOOTSTRAP_TOKEN: TOKEN,
    SPACES_LOG_LEVEL: 'warn',
    ...(CACHE_BYTES ? { SPACES_CACHE_BYTES: String(CACHE_BYTES) } : {}),
    // No maintenance sweeps in the middle of a measurement.
    SPACES_WORKER: 'off',
    NODE_ENV: 'production',
  };
}
const TOKEN = `sfa_${randomBytes(32).toString('hex')}`;

async function startSpaces(setup, { waitReady = true } = {}) {
  const prof = setup.profile
    ? [...SERVER_NODE_ARGS, ...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(CPU_PROF)] : [])]
    : [];
  const child = start('taskset', ['-c', SERVER_CPU, process.execPath, ...prof, 'bin/spaces.mjs', 'server'], {
    cwd: ROOT,
    env: spacesEnv(setup),
  });
  const port = setup.port;
  if (waitReady) {
    await waitFor(
      async () => (await httpRequest(port, 'GET', '/readyz')).status === 200,
      'spaces',
      120_000,
      child,
    );
  }
  const api = async (method, pathname, body) => {
    const res = await httpRequest(port, method, pathname, {
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = res.body.toString();
    if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  return { child, port, api, pid: child.pid };
}

// ---------------------------------------------------------------------------------------------
// 1. Listing a million spaces, and cold start with them

/** A public space with one index.html; its id. */
async function publishSite(s, slug, html) {
  const space = (await s.api('POST', '/v1/spaces', { slug, access: 'public' })).data.space;
  await s.api('POST', '/v1/publish', { spaceId: space.id, files: [{ path: 'index.html', content: html }] });
  return space.id;
}

/** Clones the template row n times: ids below every real id, in keyset order of the counter. */
function cloneSql(kind, columns, prefix) {
  const num = kind === 'postgres' ? `lpad(g::text, 24, '0')` : `printf('%024d', g.n)`;
  const n = kind === 'postgres' ? 'g' : 'g.n';
  const expr = (c) => {
    if (c === 'id') return `'${prefix}_00' || ${num}`;
    if (c === 'slug' || c === 'public_name') return `'bench-' || ${n}`;
    if (c === 'title') return `'Bench space ' || ${n}`;
    return `t.${c}`;
  };
  const list = columns.join(', ');
  const select = columns.map(expr).join(', ');
  return kind === 'postgres'
    ? `insert into spaces (${list}) select ${select} from spaces t, generate_series(1, $1) g where t.id = $2`
    : `with recursive g(n) as (select 1 union all select n + 1 from g where n < ?) insert into spaces (${list}) select ${select} from g, spaces t where t.id = ?`;
}

async function listingPhase(kind) {
  const dataDir = tempDir(`spaces-scale-${kind}-`);
  const port = await freePort();
  const databaseUrl =
    kind === 'postgres' ? await newPgDatabase('list') : `sqlite:${path.join(dataDir, 'spaces.db')}`;
  const setup = { dataDir, port, databaseUrl };
  let s = await startSpaces(setup);
  const template = await publishSite(s, 'home', '<h1>home</h1>');
  await stop(s.child);

  // Bulk rows, the server stopped (SQLite: no other writer).
  const prefix = template.slice(0, template.indexOf('_'));
  const count = SPACES - 1;
  const t0 = performance.now();
  let secret;
  if (kind === 'postgres') {
    const cols = (
      await pgQuery(
        databaseUrl,
        `select column_name from information_schema.columns where table_name = 'spaces' and table_schema = current_schema() order by ordinal_position`,
      )
    ).rows.map((r) => r.column_name);
    await pgQuery(databaseUrl, cloneSql(kind, cols, prefix), [count, template]);
    await pgQuery(databaseUrl, 'analyze spaces');
    secret = (await pgQuery(databaseUrl, `select value from meta where key = 'secret:cursor'`)).rows[0].value;
  } else {
    const db = new Sqlite(databaseUrl.slice('sqlite:'.length));
    const cols = db
      .prepare('select name from pragma_table_info(?)')
      .all('spaces')
      .map((r) => r.name);
    db.prepare(cloneSql(kind, cols, prefix)).run(count, template);
    db.exec('analyze');
    secret = db.prepare(`select value from meta where key = 'secret:cursor'`).get().value;
    db.close();
  }
  const insertMs = performance.now() - t0;

  // Cold start: spawn → first byte of the published site, with the rows in the database.
  const spawnedAt = performance.now();
  s = await startSpaces(setup, { waitReady: false });
  let coldStartMs = Number.NaN;
  for (;;) {
    if (s.child.exitCode !== null) throw new Error(`spaces exited: ${s.child.output()}`);
    const r = await new Promise((resolve) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: '/', headers: { host: 'home.localhost' } },
        (res) => {
          res.once('data', () => resolve(res.statusCode));
          res.once('end', () => resolve(res.statusCode));
        },
      );
      req.on('error', () => resolve(0));
    });
    if (r === 200) {
      coldStartMs = performance.now() - spawnedAt;
      break;
    }
    if (performance.now() - spawnedAt > 120_000) throw new Error(`no first byte: ${s.child.output()}`);
    await sleep(2);
  }
  await waitFor(
    async () => (await httpRequest(port, 'GET', '/readyz')).status === 200,
    'spaces',
    60_000,
    s.child,
  );

  // First page, and a cursor to the last page built as the API builds it.
  const first = await s.api('GET', '/v1/spaces?limit=20');
  if (first.data.length !== 20 || !first.pagination.nextCursor) throw new Error('first page is not full');
  const listing = JSON.parse(
    Buffer.from(first.pagination.nextCursor.split('.')[0], 'base64url').toString(),
  ).l;
  const after = `${prefix}_00${String(21).padStart(24, '0')}`;
  const payload = Buffer.from(JSON.stringify({ l: listing, a: after })).toString('base64url');
  const mac = createHmac('sha256', Buffer.from(secret, 'base64')).update(payload).digest('base64url');
  const lastCursor = `${payload}.${mac}`;
  const last = await s.api('GET', `/v1/spaces?limit=20&cursor=${encodeURIComponent(lastCursor)}`);
  if (last.data.length !== 20 || last.pagination.hasMore) {
    throw new Error(`last page: ${last.data.length} rows, hasMore ${last.pagination.hasMore}`);
  }
  const time = async (p, n) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const r = await httpRequest(port, 'GET', p, { headers: { authorization: `Bearer ${TOKEN}` } });
      out.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${p}: ${r.status}`);
    }
    return out.sort((a, b) => a - b);
  };
  const firstPath = '/v1/spaces?limit=20';
  const lastPath = `/v1/spaces?limit=20&cursor=${encodeURIComponent(lastCursor)}`;
  await time(firstPath, 50);
  await time(lastPath, 50);
  // Interleaved rounds, so both pages see the same machine.
  const firsts = [];
  const lasts = [];
  for (let r = 0; r < 4; r++) {
    firsts.push(...(await time(firstPath, 100)));
    lasts.push(...(await time(lastPath, 100)));
  }
  firsts.sort((a, b) => a - b);
  lasts.sort((a, b) => a - b);
  const rss = vmRssMiB(s.pid);
  await stop(s.child);
  return {
    kind,
    spaces: SPACES,
    insertMs,
    coldStartMs,
    firstP50: percentile(firsts, 0.5),
    firstP99: percentile(firsts, 0.99),
    lastP50: percentile(lasts, 0.5),
    lastP99: percentile(lasts, 0.99),
    rss,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Serving many sites

function pageFor(i) {
  const head = `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Site ${i}</title>\n</head>\n<body>\n`;
  const tail = '</body>\n</html>\n';
  let body = '';
  for (let k = 0; body.length < 4096; k++) body += `<p>Site ${i}, paragraph ${k}: the quick brown fox.</p>\n`;
  const html = head + body.slice(0, 4096 - head.length - tail.length) + tail;
  if (Buffer.byteLength(html) !== 4096) throw new Error('page is not 4 KB');
  return html;
}

/** GET / of every site once, 32 at a time; the time it took (ms). */
async function visitEverySite(port, n) {
  const t = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const r = await httpRequest(port, 'GET', '/', { host: `s${i}.localhost` });
      if (r.status !== 200) throw new Error(`warm-up s${i}: ${r.status}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return performance.now() - t;
}

async function publishSites(s, n) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await publishSite(s, `s${i}`, pageFor(i));
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

function buildNginxTrees(n) {
  const dir = tempDir('nginx-scale-');
  const root = path.join(dir, 'sites');
  fs.mkdirSync(root);
  for (let i = 0; i < n; i++) {
    fs.mkdirSync(path.join(root, `s${i}`));
    fs.writeFileSync(path.join(root, `s${i}`, 'index.html'), pageFor(i));
  }
  spawnSync('chmod', ['-R', 'a+rX', dir]);
  return { dir, root };
}

async function startNginx({ dir, root }) {
  const port = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(
    conf,
    nginxConfig(dir, {
      servers: `  server {
    listen 127.0.0.1:${port};
    server_name ~^(?<s>.+)\\.localhost$;
    root ${root}/$s;
  }
`,
    }),
  );
  const child = start('taskset', ['-c', SERVER_CPU, nginxBinary(), '-p', dir, '-c', conf]);
  await waitFor(
    async () => (await httpRequest(port, 'GET', '/index.html', { host: 's0.localhost' })).status === 200,
    'nginx',
    10_000,
    child,
  );
  return { child, port };
}

function parseWrk(out) {
  const p = (q) => wrkPercentileMs(out, q);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: p(50),
    p99: p(99),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: /Socket errors: (.*)/.exec(out)?.[1] ?? '',
  };
}

/** wrk on CPU 1 for `seconds`, each request to a random one of the n sites. */
function wrk(port, n, pathname, seconds, dir) {
  const script = path.join(dir, `random-${pathname === '/' ? 'spaces' : 'nginx'}.lua`);
  fs.writeFileSync(
    script,
    `local n = ${n}
local counter = 0
function setup(thread) counter = counter + 1; thread:set("id", counter) end
function init(args) math.randomseed(os.time() * 1000 + id) end
function request()
  return wrk.format("GET", "${pathname}", { Host = "s" .. math.random(0, n - 1) .. ".localhost" })
end
`,
  );
  return new Promise((resolve, reject) => {
    const child = start('taskset', [
      '-c',
      LOAD_CPU,
      'wrk',
      '-t1',
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      '--latency',
      '-s',
      script,
      `http://127.0.0.1:${port}`,
    ]);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => {
      children.delete(child);
      if (code !== 0) reject(new Error(`wrk failed: ${child.output()}`));
      else resolve(parseWrk(out));
    });
  });
}

async function publishWithCli(port, spaceId, siteDir, configDir) {
  const t = performance.now();
  const child = start(
    process.execPath,
    [path.join(ROOT, 'bin/spaces.mjs'), 'publish', siteDir, '--space', spaceId, '--json'],
    {
      env: {
        ...process.env,
        SPACES_API_URL: `http://127.0.0.1:${port}`,
        SPACES_TOKEN: TOKEN,
        SPACES_CONFIG_DIR: configDir,
        CI: 'true',
      },
    },
  );
  const code = await new Promise((r) => child.on('exit', r));
  children.delete(child);
  if (code !== 0) throw new Error(`spaces publish failed (${code}): ${child.output()}`);
  return performance.now() - t;
}

async function servingPhase(backend, nginx) {
  const dataDir = tempDir(`spaces-serve-${backend}-`);
  const port = await freePort();
  const databaseUrl = await newPgDatabase(backend);
  let s3 = null;
  if (backend === 's3') {
    const s3dir = tempDir('s3rver-scale-');
    const child = start(
      process.execPath,
      ['--openssl-legacy-provider', path.join(ROOT, 'test/helpers/s3rver-main.mjs'), s3dir, 'bench'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    ); // s3rver-main exits when its stdin closes
    const s3port = await new Promise((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d) => {
        buf += d;
        const m = /\{"port":(\d+)\}/.exec(buf);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (c) => reject(new Error(`s3rver exited (${c}): ${child.output()}`)));
    });
    const q = new URLSearchParams({
      endpoint: `http://127.0.0.1:${s3port}`,
      region: 'us-east-1',
      forcePathStyle: 'true',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
    });
    s3 = { child, blobUrl: `s3://bench/blobs?${q}` };
  }
  const setup = { dataDir, port, databaseUrl, blobUrl: s3?.blobUrl };
  let s = await startSpaces(setup);
  const t0 = performance.now();
  await publishSites(s, SITES);
  const publishSitesMs = performance.now() - t0;
  // Restart: every cache is cold.
  await stop(s.child);
  s = await startSpaces({ ...setup, profile: true });
  const rssStart = vmRssMiB(s.pid);
  const wrkDir = tempDir('wrk-scale-');
  const cold = await wrk(port, SITES, '/', DURATION, wrkDir);
  const nginx1 = await wrk(nginx.port, SITES, '/index.html', DURATION, wrkDir);
  // Every site once, so "warm" means warm: a short cold run reaches only part of many sites.
  const warmUpMs = await visitEverySite(port, SITES);
  const warm = await wrk(port, SITES, '/', DURATION, wrkDir);
  const nginx2 = await wrk(nginx.port, SITES, '/index.html', DURATION, wrkDir);
  const rssAfter = vmRssMiB(s.pid);
  const memory = await memoryMetrics(port);
  const result = {
    backend,
    publishSitesMs,
    cold,
    warm,
    nginx1,
    nginx2,
    rssStart,
    rssAfter,
    memory,
    warmUpMs,
  };

  if (backend === 'disk' && PUBLISH_FILES > 0) {
    // Serving while a PUBLISH_FILES-file publish runs on the same instance (the real CLI).
    const siteDir = tempDir('publish-scale-');
    for (let d = 0; d < 100; d++) fs.mkdirSync(path.join(siteDir, `d${d}`));
    for (let i = 0; i < PUBLISH_FILES; i++) {
      fs.writeFileSync(
        path.join(siteDir, `d${i % 100}`, `f${i}.txt`),
        `file ${i} ${randomBytes(48).toString('base64')}\n`,
      );
    }
    fs.writeFileSync(path.join(siteDir, 'index.html'), '<h1>big</h1>');
    const big = (await s.api('POST', '/v1/spaces', { slug: 'big-publish', access: 'public' })).data.space;
    const idle = await wrk(port, SITES, '/', DURATION, wrkDir);
    await sleep(2500); // the CLI's hash cache trusts files older than 2 s only; none is used here anyway
    const publishing = publishWithCli(port, big.id, siteDir, tempDir('cli-scale-'));
    const during = await wrk(port, SITES, '/', DURATION, wrkDir);
    const publishMs = await publishing;
    Object.assign(result, { idle, during, publishMs });
  }
  await stop(s.child);
  if (s3) {
    s3.child.kill('SIGTERM');
    await new Promise((r) => s3.child.once('exit', r));
    children.delete(s3.child);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------

const fmt = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const mark = (ok) => (ok ? 'met' : 'NOT met');

async function main() {
  ensureTools();
  console.log(
    `bench/scale: ${SPACES.toLocaleString('en')} spaces (${DBS.join(', ')}), ${SITES.toLocaleString('en')} sites (${BACKENDS.join(', ')}), wrk ${DURATION} s × ${CONNECTIONS} connections; ${os.cpus().length} CPUs, ${os.cpus()[0]?.model}`,
  );
  const listings = [];
  for (const kind of DBS) {
    console.log(`listing on ${kind}…`);
    const r = await listingPhase(kind);
    console.log(JSON.stringify(r));
    listings.push(r);
    await dropDatabases();
    removeDirs();
  }
  const serving = [];
  const failures = [];
  if (BACKENDS.length) {
    console.log(`writing ${SITES} nginx trees…`);
    const trees = buildNginxTrees(SITES);
    const nginx = await startNginx(trees);
    for (const backend of BACKENDS) {
      console.log(`serving from ${backend}…`);
      try {
        const r = await servingPhase(backend, nginx);
        console.log(JSON.stringify(r));
        serving.push(r);
      } catch (err) {
        // One backend failing (s3rver under load) still reports the others.
        console.error(`serving from ${backend} failed: ${err.message}`);
        for (const c of children)
          if (c !== nginx.child) console.error(`--- ${c.spawnargs.join(' ')}\n${c.output()}`);
        failures.push([
          `serving, blobs on ${backend}`,
          `FAILED: ${err.message.split('\n')[0].slice(0, 160)}`,
          '',
        ]);
        for (const c of [...children]) {
          if (c === nginx.child) continue;
          if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
          children.delete(c);
        }
      }
      await dropDatabases();
    }
    await stop(nginx.child);
  }

  const rows = [];
  for (const l of listings) {
    const ratio = l.lastP99 / l.firstP99;
    rows.push([
      `GET /v1/spaces, ${l.kind}, ${l.spaces.toLocaleString('en')} spaces`,
      `first p99 ${fmt(l.firstP99, 2)} ms, last p99 ${fmt(l.lastP99, 2)} ms (p50 ${fmt(l.firstP50, 2)} / ${fmt(l.lastP50, 2)}); last/first ${fmt(ratio, 2)}; rows inserted in ${fmt(l.insertMs / 1000)} s`,
      `p99 ≤ 5 ms: ${mark(Math.max(l.firstP99, l.lastP99) <= 5)}; ratio ≤ 1.5: ${mark(ratio <= 1.5)}`,
    ]);
    rows.push([
      `cold start → first byte, ${l.kind}, ${l.spaces.toLocaleString('en')} spaces`,
      `${fmt(l.coldStartMs, 0)} ms`,
      `≤ 300 ms: ${mark(l.coldStartMs <= 300)}`,
    ]);
  }
  for (const r of serving) {
    const bestNginx = Math.max(r.nginx1.rps, r.nginx2.rps);
    rows.push([
      `4 KB from ${SITES.toLocaleString('en')} sites, random, blobs on ${r.backend}`,
      `cold ${fmt(r.cold.rps, 0)} req/s p99 ${fmt(r.cold.p99, 2)} ms; warm ${fmt(r.warm.rps, 0)} req/s p99 ${fmt(r.warm.p99, 2)} ms; nginx ${fmt(r.nginx1.rps, 0)} / ${fmt(r.nginx2.rps, 0)} req/s p99 ${fmt(r.nginx1.p99, 2)} / ${fmt(r.nginx2.p99, 2)} ms; ratio cold ${fmt(r.cold.rps / r.nginx1.rps, 2)}×, warm ${fmt(r.warm.rps / r.nginx2.rps, 2)}×; warm-up (each site once, 32 at a time) ${fmt(r.warmUpMs / 1000)} s${r.cold.non2xx + r.warm.non2xx ? `; NON-2xx ${r.cold.non2xx + r.warm.non2xx}` : ''}`,
      `≥ 0.5× nginx: ${mark(Math.min(r.cold.rps, r.warm.rps) / bestNginx >= 0.5)} (vs best nginx run)`,
    ]);
    rows.push([
      `resident memory, blobs on ${r.backend}`,
      `VmRSS ${fmt(r.rssStart, 0)} MiB after start, ${fmt(r.rssAfter, 0)} MiB after serving ${SITES.toLocaleString('en')} sites; heap in use ${fmt(r.memory.heapUsed, 0)} MiB; edge caches hold ${fmt(r.memory.cacheBytes, 1)} MiB of their ${fmt(r.memory.cacheMax, 0)} MiB bound (SPACES_CACHE_BYTES ${CACHE_BYTES ? `${fmt(CACHE_BYTES / 1048576, 0)} MiB` : 'default, 256 MiB'}; from GET /metrics); ${SITES.toLocaleString('en')} publishes took ${fmt(r.publishSitesMs / 1000)} s`,
      '',
    ]);
    if (r.during) {
      const ratio = r.during.p99 / r.idle.p99;
      rows.push([
        `serving p99 during a ${PUBLISH_FILES.toLocaleString('en')}-file publish (disk)`,
        `idle p99 ${fmt(r.idle.p99, 2)} ms (${fmt(r.idle.rps, 0)} req/s); during p99 ${fmt(r.during.p99, 2)} ms (${fmt(r.during.rps, 0)} req/s); ratio ${fmt(ratio, 2)}×; publish took ${fmt(r.publishMs / 1000, 1)} s`,
        `≤ 2×: ${mark(ratio <= 2)}`,
      ]);
    }
  }
  rows.push(...failures);
  console.log('\n| measure | result | goal |\n|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanup();
  agent.destroy();
}
