#!/usr/bin/env node
// Publish benchmark: 10,000 files of 2 KiB through the versions flow (one batch tar upload), then a
// re-publish with one file changed. Wall time is reported as a ratio to `tar c | tar x` of the same
// files on the same filesystem, measured in this run (before and after the publishes).
//   node bench/publish.mjs [--files 10000] [--size 2048]
//   BENCH_CPU_PROF=<file>: write a CPU profile of the re-publish; BENCH_CPU_PROF_FIRST=<file>: of the
//   first publish (main thread: client and server).
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { register } from 'tsx/esm/api';

register();
const { loadConfig } = await import('../src/config.ts');
const { buildServer } = await import('../src/server.ts');
const { default: tar } = await import('tar-stream');
const { request } = await import('undici');
const { collect, hashAll } = await import('../src/cli/files.ts');
const { HashCache } = await import('../src/cli/hash-cache.ts');

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const FILES = arg('files', 10_000);
const SIZE = arg('size', 2048);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-bench-'));
const src = path.join(work, 'site');
const names = [];
for (let i = 0; i < FILES; i++) {
  const name = `d${String(i % 100).padStart(2, '0')}/f${i}.txt`;
  names.push(name);
  fs.mkdirSync(path.join(src, path.dirname(name)), { recursive: true });
  // Text-like content (base64 of random bytes): compressible like real text assets, never identical.
  fs.writeFileSync(
    path.join(src, name),
    randomBytes(Math.ceil((SIZE * 3) / 4))
      .toString('base64')
      .slice(0, SIZE),
  );
}
fs.writeFileSync(path.join(src, 'index.html'), '<!doctype html><h1>bench</h1>');
names.push('index.html');
const cliConfigDir = path.join(work, 'cli-config');
/** Files the CLI's hash cache answered, per publish. */
const hashCacheHits = [];

// The floor: copy the same files with tar on the same filesystem, synced like our batch is. Measured
// before and after the publishes (disk speed on a shared machine drifts); the ratio uses the mean.
const tarCopy = (name) => {
  const dst = path.join(work, name);
  fs.mkdirSync(dst);
  const t = performance.now();
  execSync(`tar c -C ${src} . | tar x -C ${dst} && sync -f ${dst}`, { shell: '/bin/bash' });
  return performance.now() - t;
};
const tarBeforeMs = tarCopy('tar-copy-1');
// The CLI's hash cache never trusts a file changed in the last 2 s (racy-clean). Real sites' files are
// older than that when a one-file edit is re-published; let these reach that age too.
await new Promise((r) => setTimeout(r, 2100));
let t0;

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

/** What a CLI does: hash every file, send the manifest, upload what is missing in one tar, finalize. */
async function publish(spaceId) {
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
    const pack = tar.pack();
    const upload = request(`${url}/v1/spaces/${spaceId}/versions/${versionId}/uploads`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-tar' },
      body: pack,
    });
    for (const tg of targets) {
      await new Promise((resolve, reject) =>
        pack.entry({ name: tg.path, size: tg.size }, fs.readFileSync(path.join(src, tg.path)), (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    }
    pack.finalize();
    const res = await upload;
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

const space = await api('POST', '/v1/spaces', {});
const spaceId = space.data.space.id;

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

let stopProfile = await profile(process.env.BENCH_CPU_PROF_FIRST);
t0 = performance.now();
const first = await publish(spaceId);
const firstMs = performance.now() - t0;
await stopProfile();

fs.writeFileSync(path.join(src, names[0]), `changed ${Date.now()}`);
// BENCH_CPU_PROF=<file>: a CPU profile of the re-publish (client and server share this process).
stopProfile = await profile(process.env.BENCH_CPU_PROF);
t0 = performance.now();
const second = await publish(spaceId);
const secondMs = performance.now() - t0;
await stopProfile();

await server.close();
const tarAfterMs = tarCopy('tar-copy-2');
const tarMs = (tarBeforeMs + tarAfterMs) / 2;
fs.rmSync(work, { recursive: true, force: true });
const serverMs = (ph) => ph.create + ph.upload + ph.finalize;

const r = (x) => Math.round(x);
console.log(
  JSON.stringify(
    {
      bench: 'publish',
      files: names.length,
      fileBytes: SIZE,
      tarCopyMs: r(tarMs),
      tarCopyBeforeAfterMs: [r(tarBeforeMs), r(tarAfterMs)],
      firstPublishMs: r(firstMs),
      firstPublishRatioToTar: Number((firstMs / tarMs).toFixed(2)),
      firstPublishRatioToTarBeforeAfter: [
        Number((firstMs / tarBeforeMs).toFixed(2)),
        Number((firstMs / tarAfterMs).toFixed(2)),
      ],
      firstPublishBlobsUploaded: first.blobs,
      firstPublishPhasesMs: first.phasesMs,
      republishMs: r(secondMs),
      // The same without the client's reading and hashing of all 10,001 files.
      republishServerMs: serverMs(second.phasesMs),
      republishBlobsUploaded: second.blobs,
      hashCacheHits,
      republishBytesUploaded: second.bytes,
      republishPhasesMs: second.phasesMs,
      status: [first.status, second.status],
    },
    null,
    2,
  ),
);
