import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'bin/spaces.mjs');

/** A bundle directory of its own, inside the project (a bundle resolves packages from there). */
export function bundleDir(prefix: string): string {
  const base = path.join(ROOT, 'node_modules', '.cache');
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, prefix));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs the `spaces` bin with a minimal environment plus `env`. */
export function runBin(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), NO_COLOR: '1', ...env },
    encoding: 'utf8',
  });
}
