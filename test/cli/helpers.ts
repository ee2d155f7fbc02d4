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

function envOf(e: CliEnv, extra?: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: e.cwd,
    SPACES_CONFIG_DIR: e.configDir,
    SPACES_API_URL: e.apiUrl,
    NO_COLOR: '1',
    ...e.env,
    ...extra,
  };
}

/** A CLI still running: what it printed so far, a wait for a line, and its end. */
export interface RunningCli {
  stderr(): string;
  /** What it printed on stdout so far. */
  stdout(): string;
  /** Ends it (SIGTERM): for commands that run until interrupted, like `--follow`. */
  kill(): void;
  /** Resolves with the first match of `re` in stderr once it appears. */
  waitForStderr(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  done: Promise<CliResult>;
}

/** Starts the real `spaces` bin and lets the test act while it runs (a login waiting for a browser). */
export function cliStart(e: CliEnv, args: string[], o: { env?: Record<string, string> } = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: e.cwd,
    env: envOf(e, o.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  child.stdin.end();
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        json: () => JSON.parse(stdout),
      }),
    );
  });
  return {
    stderr: () => stderr,
    stdout: () => stdout,
    kill: () => child.kill(),
    done,
    waitForStderr(re, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs;
        const check = () => {
          const m = re.exec(stderr);
          if (m) return resolve(m);
          if (child.exitCode !== null || Date.now() > deadline)
            return reject(new Error(`no ${re} in stderr (exit ${child.exitCode}):\n${stderr}\n${stdout}`));
          setTimeout(check, 25);
        };
        check();
      });
    },
  };
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
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: e.cwd,
      env: envOf(e, o.env),
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
