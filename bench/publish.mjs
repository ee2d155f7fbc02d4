#!/usr/bin/env node
// Publish benchmark: 10,000 files of 2 KiB through the versions flow, then a re-publish with one file
// changed, in several rounds (new content each round, so every first publish stores everything).
// Each round's first publish is reported as a ratio to `tar c | tar x` of the same files on the same
// filesystem, measured just before it; the summary gives medians over the rounds.
//   node bench/publish.mjs [--files 10000] [--size 2048] [--rounds 3] [--client cli|inproc]
//   --client cli (default): `spaces publish` runs as its own process, as a user runs it.
//   --client inproc: the same steps in this process (one tar batch; profiles then cover the client).
//   BENCH_CPU_PROF_FIRST=<file> / BENCH_CPU_PROF=<file>: CPU profiles of this process's main thread
//   during the last round's first publish / re-publish; BENCH_CLI_CPU_PROF_DIR=<dir>: of the CLI.
import { execSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { register } from 'tsx/esm/api';

register();
const ROOT = path.resolve(import.meta.dirname, '..');
const { loadConfig } = await import('../src/config.ts');
const { buildServer } = await import('../src/server.ts');
const { request } = await import('undici');
const { collect, hashAll } = await import('../src/cli/files.ts');
const { HashCache } = await import('../src/cli/hash-cache.ts');
const { tarOf } = await import('../src/cli/tar.ts');

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const FILES = arg('files', 10_000);
const SIZE = arg('size', 2048);
/** Who publishes (see the header): `cli` (process start included in the wall time) or `inproc`. */
const CLIENT = process.argv.includes('--client') ? process.argv[process.argv.indexOf('--client') + 1] : 'cli';
if (CLIENT !== 'cli' && CLIENT !== 'inproc') throw new Error('--client cli|inproc');

const ROUNDS = arg('rounds', 3);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-bench-'));
const src = path.join(work, 'site');
const names = [];
for (let i = 0; i < FILES; i++) names.push(`d${String(i % 100).padStart(2, '0')}/f${i}.txt`);
names.push('index.html');
/** (Re)writes every file with new content: each round's first publish finds nothing stored. */
function writeSite(round) {
  for (const name of names) {
    fs.mkdirSync(path.join(src, path.dirname(name)), { recursive: true });
    // Text-like content (base64 of random bytes): compressible like real text assets, never identical.
    const body =
      name === 'index.html'
        ? `<!doctype html><h1>bench ${round}</h1>`
        : randomBytes(Math.ceil((SIZE * 3) / 4))
            .toString('base64')
            .slice(0, SIZE);
    fs.writeFileSync(path.join(src, name), body);
  }
}
const cliConfigDir = path.join(work, 'cli-config');
/** Files the CLI's hash cache answered, per publish. */
let hashCacheHits = [];

// The floor: copy the same files with tar on the same filesystem, three times right before each
// round's publishes (disk speed on a shared machine drifts); the fastest copy is the floor. Dirty
// data is flushed before each copy (untimed), so tar does not pay for writing the site itself.
// Two figures per copy: `tar c | tar x` as it returns (the page cache holds the files) and the same
// followed by `sync -f` (durable, as a finalized version is).
const sync = () => execSync('sync');
const tarCopy = (name) => {
  let plain = Infinity;
  let synced = Infinity;
  for (let i = 0; i < 3; i++) {
    const dst = path.join(work, `${name}-${i}`);
    fs.mkdirSync(dst);
    sync();
    const t = performance.now();
    execSync(`tar c -C ${src} . | tar x -C ${dst}`, { shell: '/bin/bash' });
    const copied = performance.now();
    execSync(`sync -f ${dst}`);
    plain = Math.min(plain, copied - t);
    synced = Math.min(synced, performance.now() - t);
    fs.rmSync(dst, { recursive: true, force: true });
  }
  sync();
  return { plain, synced };
};

const token = `sfa_${randomBytes(32).toString('hex')}`;
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  SPACES_DATA_DIR: path.join(work, 'data'),
  SPACES_BOOTSTRAP_TOKEN: token,
  SPACES_LOG_LEVEL: 'silent',
});
const server = await buildServer(config);
const { url } = await server.listen();
const api = async (method, p, body, raw, type) => {
  const res = await request(`${url}${p}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(type ? { 'content-type': type } : {}),
    },
    body: raw ?? (body ? JSON.stringify(body) : undefined),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text);
};

/**
 * `spaces publish <site> --space <id>` in a child process; phases from its `--json --stream` events,
 * timed as they arrive. Blobs and bytes uploaded come from its result.
 */
async function publishWithCli(spaceId) {
  const tStart = performance.now();
  // BENCH_CLI_CPU_PROF_DIR=<dir>: CPU profiles of the CLI processes.
  const prof = process.env.BENCH_CLI_CPU_PROF_DIR;
  const child = spawn(
    process.execPath,
    [
      ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
      path.join(ROOT, 'bin/spaces.mjs'),
      'publish',
      src,
      '--space',
      spaceId,
      '--json',
      '--stream',
    ],
    {
      env: {
        ...process.env,
        SPACES_API_URL: url,
        SPACES_TOKEN: token,
        SPACES_CONFIG_DIR: cliConfigDir,
        CI: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const at = {};
  let result = null;
  let err = '';
  child.stderr.on('data', (c) => {
    err += c;
  });
  let buf = '';
  child.stdout.on('data', (c) => {
    buf += c;
    for (let i = buf.indexOf('\n'); i !== -1; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.trim()) continue;
      const ev = JSON.parse(line);
      at[ev.event] ??= performance.now();
      if (ev.event === 'hashed') hashCacheHits.push(ev.fromCache);
      if (ev.event === 'result') result = ev;
    }
  });
  const code = await new Promise((r) => child.on('close', r));
  const tEnd = performance.now();
  if (code !== 0 || !result) throw new Error(`spaces publish exited ${code}: ${err.slice(0, 2000)}`);
  const data = result.data ?? result;
  const ms = (a, b) => (at[a] && at[b] ? Math.round(at[b] - at[a]) : null);
  return {
    phasesMs: {
      // Process start, walk and hashing (until the manifest is sent).
      hash: Math.round((at.creating_version ?? tEnd) - tStart),
      create: ms('creating_version', 'upload_plan'),
      upload: ms('upload_plan', 'finalizing'),
      finalize: at.finalizing ? Math.round(tEnd - at.finalizing) : null,
    },
    status: data.version?.status ?? (data.noop ? 'ready' : 'unknown'),
    blobs: data.uploaded.files,
    bytes: data.uploaded.bytes,
  };
}

/** What a CLI does: hash every file, send the manifest, upload what is missing in one tar, finalize. */
async function publish(spaceId) {
  if (CLIENT === 'cli') return publishWithCli(spaceId);
  const tStart = performance.now();
  // The CLI's own walk and hashing, with its hash cache (unchanged files are not read again).
  const cache = new HashCache(cliConfigDir, src);
  const hashed = await hashAll((await collect(src)).files, undefined, 16, cache);
  cache.save();
  hashCacheHits.push(cache.hits);
  const files = hashed.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size }));
  const t1 = performance.now();
  const created = await api('POST', `/v1/spaces/${spaceId}/versions`, { files });
  const t2 = performance.now();
  const targets = created.data.upload.targets;
  const versionId = created.data.version.id;
  if (targets.length) {
    // The CLI's tar builder, with the bytes its hashing kept (files not kept are read into place).
    const byPath = new Map(hashed.map((f) => [f.path, f]));
    const res = await request(`${url}/v1/spaces/${spaceId}/versions/${versionId}/uploads`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-tar' },
      body: tarOf(targets.map((tg) => byPath.get(tg.path))),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`upload: ${res.statusCode} ${text}`);
  }
  const t3 = performance.now();
  const fin = await api('POST', `/v1/spaces/${spaceId}/versions/${versionId}/finalize`);
  const t4 = performance.now();
  return {
    phasesMs: {
      hash: Math.round(t1 - tStart),
      create: Math.round(t2 - t1),
      upload: Math.round(t3 - t2),
      finalize: Math.round(t4 - t3),
    },
    status: fin.data.version.status,
    blobs: targets.length,
    bytes: targets.reduce((s, t) => s + t.size, 0),
  };
}

/**
 * CPU time (user + system, ms) per thread of this process, by thread name, from /proc (Linux only;
 * empty elsewhere); with `since`, the difference. Worker threads are named `WorkerThread`, libuv's
 * pool `libuv-worker`, V8's helpers `V8 DefaultWorke…`.
 */
function threadTimes(since) {
  const out = {};
  const tick = 1000 / 100; // USER_HZ
  let tasks = [];
  try {
    tasks = fs.readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(f[11]) + Number(f[12])) * tick;
      const key = `${name.trim()}#${tid}`;
      out[key] = ms - (since?.[key] ?? 0);
    } catch {}
  }
  if (!since) return out;
  // Threads that did something, busiest first (the main thread's tid is the process id).
  return Object.fromEntries(
    Object.entries(out)
      .filter(([, ms]) => ms >= 20)
      .sort((a, b) => b[1] - a[1])
      .map(([k, ms]) => [k.endsWith(`#${process.pid}`) ? 'main' : k, ms]),
  );
}

/** Starts a CPU profile of this thread when `file` is set; the returned function writes it. */
async function profile(file) {
  if (!file) return async () => {};
  const session = new (await import('node:inspector')).Session();
  session.connect();
  await new Promise((r) => session.post('Profiler.enable', () => session.post('Profiler.start', r)));
  return async () => {
    const { profile: p } = await new Promise((r, j) =>
      session.post('Profiler.stop', (e, res) => (e ? j(e) : r(res))),
    );
    fs.writeFileSync(file, JSON.stringify(p));
    session.disconnect();
  };
}

/** Wall time of `spaces -V` (process start and the CLI bundle's load), median of three. */
async function cliStartMs() {
  const times = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/spaces.mjs'), '-V'], { stdio: 'ignore' });
    await new Promise((r) => child.on('close', r));
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[1];
}
const startMs = CLIENT === 'cli' ? await cliStartMs() : null;

const rounds = [];
for (let round = 0; round < ROUNDS; round++) {
  writeSite(round);
  const tar = tarCopy(`tar-copy-${round}`);
  // The CLI's hash cache never trusts a file changed in the last 2 s (racy-clean). Real sites' files
  // are older than that when a one-file edit is re-published; let these reach that age too.
  await new Promise((r) => setTimeout(r, 2100));
  hashCacheHits = [];
  const space = await api('POST', '/v1/spaces', {});
  const spaceId = space.data.space.id;

  // BENCH_CPU_PROF_FIRST / BENCH_CPU_PROF: CPU profiles of this process (the server; the client too
  // with --client inproc) during the last round's first publish and re-publish.
  const last = round === ROUNDS - 1;
  let stopProfile = await profile(last && process.env.BENCH_CPU_PROF_FIRST);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const threads0 = threadTimes();
  const first = await publish(spaceId);
  const firstMs = performance.now() - t0;
  const firstCpu = process.cpuUsage(cpu0);
  const firstThreads = threadTimes(threads0);
  await stopProfile();

  fs.writeFileSync(path.join(src, names[0]), `changed ${Date.now()}`);
  stopProfile = await profile(last && process.env.BENCH_CPU_PROF);
  const t1 = performance.now();
  const second = await publish(spaceId);
  const secondMs = performance.now() - t1;
  await stopProfile();
  rounds.push({ tar, firstMs, first, firstCpu, firstThreads, secondMs, second, hits: hashCacheHits });
}
await server.close();
fs.rmSync(work, { recursive: true, force: true });

const r = (x) => Math.round(x);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const serverMs = (ph) => (ph.create ?? 0) + (ph.upload ?? 0) + (ph.finalize ?? 0);
const ratios = rounds.map((x) => x.firstMs / x.tar.plain);
const syncedRatios = rounds.map((x) => x.firstMs / x.tar.synced);
console.log(
  JSON.stringify(
    {
      bench: 'publish',
      client: CLIENT,
      files: names.length,
      fileBytes: SIZE,
      rounds: ROUNDS,
      ...(startMs !== null ? { cliStartMs: r(startMs) } : {}),
      // Medians over the rounds; each round's ratios are its first publish over the fastest of the
      // tar copies measured just before it, without and with `sync -f`.
      tarCopyMs: r(median(rounds.map((x) => x.tar.plain))),
      tarCopySyncedMs: r(median(rounds.map((x) => x.tar.synced))),
      firstPublishMs: r(median(rounds.map((x) => x.firstMs))),
      firstPublishRatioToTar: Number(median(ratios).toFixed(2)),
      firstPublishRatioToSyncedTar: Number(median(syncedRatios).toFixed(2)),
      republishMs: r(median(rounds.map((x) => x.secondMs))),
      republishServerMs: r(median(rounds.map((x) => serverMs(x.second.phasesMs)))),
      firstPublishBlobsUploaded: rounds.map((x) => x.first.blobs),
      republishBlobsUploaded: rounds.map((x) => x.second.blobs),
      republishBytesUploaded: rounds.map((x) => x.second.bytes),
      status: rounds.map((x) => [x.first.status, x.second.status]),
      perRound: rounds.map((x, i) => ({
        tarCopyMs: r(x.tar.plain),
        tarCopySyncedMs: r(x.tar.synced),
        firstPublishMs: r(x.firstMs),
        ratio: Number(ratios[i].toFixed(2)),
        ratioToSynced: Number(syncedRatios[i].toFixed(2)),
        firstPhasesMs: x.first.phasesMs,
        // CPU time of this process (all threads) during the first publish: user, system; by thread.
        firstCpuMs: [r(x.firstCpu.user / 1000), r(x.firstCpu.system / 1000)],
        firstThreadCpuMs: x.firstThreads,
        republishMs: r(x.secondMs),
        republishPhasesMs: x.second.phasesMs,
        hashCacheHits: x.hits,
      })),
    },
    null,
    2,
  ),
);
