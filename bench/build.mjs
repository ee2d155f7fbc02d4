#!/usr/bin/env node
// Build benchmark: a plain-HTML repository of 1,000 files from `git push` to live, next to the same
// repository's `git clone --depth 1` + `spaces publish` done by hand, measured in the same run.
// Each round rewrites every file (new content, a new commit) and pushes to a new space, so neither
// side finds anything stored. The ratio push→live / (clone + publish) is the figure; goal ≤ 1.5×.
//   node bench/build.mjs [--files 1000] [--size 2048] [--rounds 3]
// Both sides end when the live host answers the round's index page.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { register } from 'tsx/esm/api';

register();
const ROOT = path.resolve(import.meta.dirname, '..');
const { loadConfig } = await import('../src/config.ts');
const { buildServer } = await import('../src/server.ts');
const { request } = await import('undici');
const run = promisify(execFile);

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const FILES = arg('files', 1000);
const SIZE = arg('size', 2048);
const ROUNDS = arg('rounds', 3);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-bench-build-'));
const repo = path.join(work, 'repo');
fs.mkdirSync(repo);
const gitEnv = {
  PATH: process.env.PATH,
  HOME: work,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.test',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.test',
};
const git = (cwd, ...args) => run('git', args, { cwd, env: gitEnv, maxBuffer: 64 * 1024 * 1024 });
await git(repo, 'init', '-q', '-b', 'main');

/** Rewrites every file and commits: the round's marker is in index.html. */
async function writeRound(round) {
  for (let i = 0; i < FILES - 1; i++) {
    const name = path.join(repo, `p${String(i % 20).padStart(2, '0')}`, `page${i}.html`);
    fs.mkdirSync(path.dirname(name), { recursive: true });
    fs.writeFileSync(
      name,
      `<!doctype html><p>${randomBytes(Math.ceil((SIZE * 3) / 4))
        .toString('base64')
        .slice(0, SIZE)}</p>`,
    );
  }
  const marker = `round ${round} ${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(path.join(repo, 'index.html'), `<!doctype html><h1>${marker}</h1>`);
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-qm', marker);
  return marker;
}

const token = `sfa_${randomBytes(32).toString('hex')}`;
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  SPACES_DATA_DIR: path.join(work, 'data'),
  SPACES_BOOTSTRAP_TOKEN: token,
  SPACES_LOG_LEVEL: 'silent',
  SPACES_JOB_POLL_MS: '50',
});
const server = await buildServer(config);
const { url } = await server.listen();
const port = new URL(url).port;
const api = async (method, p, body) => {
  const res = await request(`${url}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text);
};
const newSpace = async (name) =>
  (await api('POST', '/v1/spaces', { slug: `${name}-${randomBytes(3).toString('hex')}`, access: 'public' }))
    .data.space;
/** Polls the space's live host until it answers the marker (every 20 ms). */
async function live(slug, marker) {
  for (let i = 0; i < 30_000; i++) {
    const res = await request(`${url}/`, { headers: { host: `${slug}.localhost` } });
    const text = await res.body.text();
    if (res.statusCode === 200 && text.includes(marker)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${slug} never served ${marker}`);
}

/**
 * Spaces builds it: `git push` of the round's commit to the space's own remote, then until live
 * serves it. One space for all rounds, as a developer pushes to the same remote again and again: each
 * push sends one new commit (1,000 new files), as the peer's shallow clone fetches one. (A new space
 * per round would make round N send the whole history — N × 1,000 files — while the peer's clone
 * still fetches one commit.)
 */
let pushSpace = null;
async function pushToLive(marker) {
  pushSpace ??= await newSpace('push');
  const s = pushSpace;
  const t = performance.now();
  await git(repo, 'push', '-q', `http://t:${token}@127.0.0.1:${port}/git/${s.id}.git`, 'main');
  const pushed = performance.now();
  await live(s.slug, marker);
  const end = performance.now();
  // Live serves the output a moment before the build records its end (untimed check).
  const head = (await git(repo, 'rev-parse', 'HEAD')).stdout.trim();
  for (;;) {
    const b = (await api('GET', `/v1/spaces/${s.id}/builds`)).data.find((x) => x.source.commitSha === head);
    if (b?.status === 'succeeded') {
      if (process.env.BENCH_VERBOSE) {
        const log = (await api('GET', `/v1/builds/${b.id}/logs?limit=100`)).data.reverse();
        const t0 = Date.parse(b.createdAt);
        console.log(
          `  created→started ${Date.parse(b.startedAt) - t0} ms, finished ${Date.parse(b.finishedAt) - t0} ms`,
        );
        for (const l of log)
          if (l.stream === 'system')
            console.log(`  +${Date.parse(l.createdAt) - t0} ms ${l.line.slice(0, 80)}`);
      }
      break;
    }
    if (b && !['queued', 'running'].includes(b.status)) throw new Error(`build ${JSON.stringify(b)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { total: end - t, push: pushed - t, after: end - pushed };
}

/** By hand: a shallow clone of the same repository and `spaces publish` of it (the CLI process). */
async function cloneAndPublish(marker, round) {
  const s = await newSpace('hand');
  const dst = path.join(work, `clone-${round}`);
  const t = performance.now();
  await git(work, 'clone', '-q', '--depth', '1', `file://${repo}`, dst);
  await run(
    process.execPath,
    [path.join(ROOT, 'bin/spaces.mjs'), 'publish', dst, '--space', s.id, '--json'],
    {
      env: {
        ...process.env,
        SPACES_API_URL: url,
        SPACES_TOKEN: token,
        SPACES_CONFIG_DIR: path.join(work, 'cli'),
        CI: 'true',
      },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  await live(s.slug, marker);
  return performance.now() - t;
}

const rows = [];
try {
  // A warm-up round (the CLI bundle, first-use paths) is not counted.
  await writeRound(0).then(async (m) => {
    await cloneAndPublish(m, 0);
    await pushToLive(m);
  });
  for (let round = 1; round <= ROUNDS; round++) {
    const marker = await writeRound(round);
    // Alternate which side goes first, so neither always meets a warmer cache.
    const order = round % 2 ? ['push', 'hand'] : ['hand', 'push'];
    const r = { round };
    for (const side of order) {
      if (side === 'push') Object.assign(r, await pushToLive(marker));
      else r.hand = await cloneAndPublish(marker, round);
    }
    rows.push(r);
  }
} finally {
  await server.close();
  fs.rmSync(work, { recursive: true, force: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cols = [
  ['push → live', (r) => r.total],
  ['of it: git push', (r) => r.push],
  ['pushed → live', (r) => r.after],
  ['clone + publish', (r) => r.hand],
];
const cell = (v, w) => String(v).padStart(w);
const line = (label, values, ratio) =>
  `${label.padEnd(8)}${values.map((v, i) => cell(`${Math.round(v)} ms`, cols[i][0].length + 3)).join('')}${cell(ratio.toFixed(2), 8)}`;
console.log(
  `\nbuild bench: ${FILES} files of ${SIZE} B, plain HTML, ${ROUNDS} rounds (fresh content each; pushes to one space, as a developer does; each publish to a new space)`,
);
console.log(`${'round'.padEnd(8)}${cols.map(([h]) => cell(h, h.length + 3)).join('')}${cell('ratio', 8)}`);
for (const r of rows)
  console.log(
    line(
      String(r.round),
      cols.map(([, f]) => f(r)),
      r.total / r.hand,
    ),
  );
const med = cols.map(([, f]) => median(rows.map(f)));
console.log(line('median', med, med[0] / med[3]));
console.log(
  `ratio = push → live / clone + publish; goal ≤ 1.5: ${med[0] / med[3] <= 1.5 ? 'met' : 'NOT met'} ` +
    `(without the git push itself: ${(med[2] / med[3]).toFixed(2)})`,
);
