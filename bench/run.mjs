#!/usr/bin/env node
// `npm run bench`: runs every benchmark in this directory, one after another, each in its own process.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const dir = import.meta.dirname;
for (const f of fs.readdirSync(dir).sort()) {
  if (!f.endsWith('.mjs') || f === 'run.mjs') continue;
  console.log(`# ${f}`);
  const r = spawnSync(process.execPath, [path.join(dir, f), ...process.argv.slice(2)], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
