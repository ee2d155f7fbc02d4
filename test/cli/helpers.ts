import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BIN = path.resolve(import.meta.dirname, '../../bin/spaces.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json<T = any>(): T;
}

export interface CliEnv {
  configDir: string;
  cwd: string;
  apiUrl: string;
  env?: Record<string, string>;
}

/** A temp config dir and project dir for one test. */
export function cliEnv(apiUrl: string): CliEnv {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-cli-'));
  const configDir = path.join(root, 'config');
  const cwd = path.join(root, 'project');
  fs.mkdirSync(cwd, { recursive: true });
  return { configDir, cwd, apiUrl };
}

/**
 * Runs the real `spaces` bin as a subprocess. Asynchronous on purpose: the server under test lives
 * in this process and must keep answering while the CLI runs.
 */
export function cli(
  e: CliEnv,
  args: string[],
  o: { stdin?: string; env?: Record<string, string>; readAfterMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: e.cwd,
      SPACES_CONFIG_DIR: e.configDir,
      SPACES_API_URL: e.apiUrl,
      NO_COLOR: '1',
      ...e.env,
      ...o.env,
    };
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: e.cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    // A slow reader (`readAfterMs`): the pipe fills up and the CLI must wait for it before exiting.
    if (o.readAfterMs) {
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), o.readAfterMs);
    }
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        json() {
          try {
            return JSON.parse(stdout);
          } catch {
            throw new Error(`stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
          }
        },
      }),
    );
    child.stdin.end(o.stdin ?? '');
  });
}

/** A site of `n` small files under `dir`. */
export function writeSite(dir: string, n: number): void {
  fs.mkdirSync(path.join(dir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>home</title><h1>Hello</h1>');
  fs.writeFileSync(path.join(dir, '404.html'), '<!doctype html><title>nope</title>');
  for (let i = 0; i < n - 2; i++) {
    fs.writeFileSync(
      path.join(dir, 'assets', `file-${String(i).padStart(4, '0')}.txt`),
      `file ${i}\n`.repeat(8),
    );
  }
}
