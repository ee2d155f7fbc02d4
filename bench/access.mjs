#!/usr/bin/env node
// bench/access: is a private space, to a visitor holding nothing, as fast to answer as a hostname with
// no space at all? (issue #25, behaviour §3.4: unknown private spaces are never revealed.)
//
//   node bench/access.mjs            (BENCH_ACCESS_N=1000 requests per host and mode)
//
// Starts a Spaces server (production mode, SQLite, a temp data dir) pinned to CPU 0, publishes a
// private space with a team grant, a share link and a password elsewhere, then sends BENCH_ACCESS_N
// GETs of `/a/b` to the private host and as many to a hostname with no space, interleaved one to one
// (which host goes first alternates), in two modes: over one kept-alive connection, and a fresh
// connection per request. Checks status, body and headers (less Date and the host label) are equal,
// prints the median and p99 latency of each and their ratio, and removes everything at the end.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { children, freePort, httpRequest, start, tempDir, tempDirs, waitFor } from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.BENCH_ACCESS_N ?? 1000);
const PRIVATE = 'hidden-one.localhost';
const UNKNOWN = 'hidden-two.localhost';

function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(130));

const port = await freePort();
const token = `sfa_${randomBytes(32).toString('hex')}`;
const child = start('taskset', ['-c', '0', process.execPath, 'bin/spaces.mjs', 'server'], {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SPACES_DATA_DIR: tempDir('spaces-access-bench-'),
    SPACES_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SPACES_BOOTSTRAP_TOKEN: token,
    SPACES_LOG_LEVEL: 'warn',
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

const space = (await api('POST', '/v1/spaces', { slug: 'hidden-one', access: 'private' })).data.space;
const files = { 'index.html': Buffer.from('secret'), 'a/b.html': Buffer.from('x') };
const manifest = Object.entries(files).map(([p, b]) => ({
  path: p,
  sha256: createHash('sha256').update(b).digest('hex'),
  size: b.length,
}));
const receipt = (await api('POST', `/v1/spaces/${space.id}/versions`, { files: manifest })).data;
for (const t of receipt.upload.targets) {
  const url = new URL(t.url);
  await httpRequest(Number(url.port), 'PUT', url.pathname + url.search, {
    headers: { 'content-type': 'application/octet-stream' },
    body: files[t.path],
  });
}
await api('POST', `/v1/spaces/${space.id}/versions/${receipt.version.id}/finalize`);
await api('POST', `/v1/spaces/${space.id}/grants`, { audience: { type: 'team' }, paths: ['/a/**'] });
await api('POST', `/v1/spaces/${space.id}/share-links`, { paths: ['/a/**'] });
await api('POST', `/v1/spaces/${space.id}/password-credentials`, {
  password: 'long enough',
  paths: ['/p/**'],
});

const scrub = (host, s) => s.split(host).join('<host>');
async function hit(host, agent) {
  const t0 = process.hrtime.bigint();
  const r = await httpRequest(port, 'GET', '/a/b', { host, agent });
  const ns = Number(process.hrtime.bigint() - t0);
  const headers = { ...r.headers };
  delete headers.date;
  return { ns, shape: scrub(host, JSON.stringify([r.status, headers, r.body.toString()])) };
}

const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const rows = [];
for (const [mode, agentOf] of [
  ['kept-alive connection', () => new http.Agent({ keepAlive: true, maxSockets: 1 })],
  ['new connection each', () => false],
]) {
  const agent = agentOf();
  const t = { private: [], unknown: [] };
  for (let i = 0; i < 200; i++) await hit(i % 2 ? PRIVATE : UNKNOWN, agent); // warm-up
  for (let i = 0; i < N; i++) {
    const order = i % 2 === 0 ? [PRIVATE, UNKNOWN] : [UNKNOWN, PRIVATE];
    const [a, b] = [await hit(order[0], agent), await hit(order[1], agent)];
    if (a.shape !== b.shape) throw new Error(`answers differ:\n${a.shape}\n${b.shape}`);
    t[order[0] === PRIVATE ? 'private' : 'unknown'].push(a.ns);
    t[order[1] === PRIVATE ? 'private' : 'unknown'].push(b.ns);
  }
  if (agent) agent.destroy();
  const us = (x) => x / 1e3;
  const row = {
    mode,
    n: N,
    privateMedianUs: us(q(t.private, 0.5)),
    unknownMedianUs: us(q(t.unknown, 0.5)),
    privateP99Us: us(q(t.private, 0.99)),
    unknownP99Us: us(q(t.unknown, 0.99)),
  };
  row.medianRatio = row.privateMedianUs / row.unknownMedianUs;
  row.p99Ratio = row.privateP99Us / row.unknownP99Us;
  rows.push(row);
  console.log(
    `${mode.padEnd(22)} private median ${row.privateMedianUs.toFixed(0)} µs p99 ${row.privateP99Us.toFixed(0)} µs | ` +
      `unknown median ${row.unknownMedianUs.toFixed(0)} µs p99 ${row.unknownP99Us.toFixed(0)} µs | ` +
      `ratio median ${row.medianRatio.toFixed(2)} p99 ${row.p99Ratio.toFixed(2)}`,
  );
}
console.log('status, headers (less Date) and body identical on every pair');
console.log(JSON.stringify({ n: N, rows }));
process.exit(0);
