#!/usr/bin/env node
// CLI publish benchmark: 10,000 × 2 KiB files, first publish and a one-file re-publish, driving the real
// `spaces` bin as a subprocess against a server on port 0. Prints the API-only figure beside it when
// bench/publish.mjs exists. Usage: node bench/publish-cli.mjs [--files N] [--size BYTES]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { register } from 'tsx/esm/api';

register();
const { loadConfig } = await import('../src/config.ts');
const { buildServer } = await import('../src/server.ts');

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const FILES = arg('files', 10_000);
const SIZE = arg('size', 2048);
const here = path.dirname(new URL(import.meta.url).pathname);
const BIN = path.resolve(here, '../bin/spaces.mjs');

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-bench-cli-'));
const token = `sfa_${randomBytes(32).toString('hex')}`;
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  SPACES_DATA_DIR: path.join(root, 'data'),
  SPACES_BOOTSTRAP_TOKEN: token,
  SPACES_LOG_LEVEL: 'silent',
});
const server = await buildServer(config);
const { url } = await server.listen();

const project = path.join(root, 'project');
const site = path.join(project, 'site');
for (let i = 0; i < FILES; i++) {
  const dir = path.join(site, `d${Math.floor(i / 500)}`);
  if (i % 500 === 0) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `f${i}.txt`), randomBytes(SIZE / 2).toString('hex'));
}
fs.writeFileSync(path.join(site, 'index.html'), '<h1>bench</h1>');

function cli(args) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: project,
      env: { ...process.env, SPACES_CONFIG_DIR: path.join(root, 'config'), SPACES_API_URL: url, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) reject(new Error(`spaces ${args.join(' ')} exited ${code}\n${err}${out}`));
      else resolve({ ms, out });
    });
  });
}

try {
  await cli(['login', '--token', token]);
  const startup = await cli(['-V']);
  const first = await cli(['publish', 'site', '--json']);
  const r1 = JSON.parse(first.out);
  fs.writeFileSync(path.join(site, 'index.html'), '<h1>bench, again</h1>');
  const second = await cli(['publish', 'site', '--json']);
  const r2 = JSON.parse(second.out);
  const mb = (FILES * SIZE) / 1024 / 1024;
  console.log(`CLI publish, ${FILES} × ${SIZE} B (${mb.toFixed(1)} MiB), server in this process:`);
  console.log(`  CLI start-up (spaces -V):   ${startup.ms.toFixed(0)} ms`);
  console.log(
    `  first publish:              ${first.ms.toFixed(0)} ms  (uploaded ${r1.uploaded.files} files)`,
  );
  console.log(
    `  one-file re-publish:        ${second.ms.toFixed(0)} ms  (uploaded ${r2.uploaded.files} file)`,
  );
  const apiBench = path.join(here, 'publish.mjs');
  if (fs.existsSync(apiBench)) {
    console.log('\nAPI-only (bench/publish.mjs):');
    await new Promise((resolve) => {
      const child = spawn(process.execPath, [apiBench], { stdio: 'inherit' });
      child.on('close', resolve);
    });
  } else console.log('\n(bench/publish.mjs not present: no API-only figure to compare with)');
} finally {
  await server.close();
  fs.rmSync(root, { recursive: true, force: true });
}
