import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { openCage } from './pids.ts';

/**
 * Runs one build step (git, the install, the build command) as its own process group, with limits:
 * a wall-clock deadline, `prlimit` caps (processes, address space, file size, CPU seconds) where the
 * tool exists, a pids cgroup where one can be made (`pids.ts`: the process cap that binds root too),
 * and inside `bwrap` (bubblewrap) where it is installed and works, with the whole file system
 * read-only except the work directory and a private /tmp. Cancel and timeout kill the group and
 * every member of the cgroup.
 */

export interface Limits {
  /** Processes at once: the step's pids cgroup, and prlimit's per-user cap (root is exempt from that). */
  processes: number;
  /** Address space per process, bytes. */
  memoryBytes: number;
  /** Largest file a process may write, bytes. */
  fileBytes: number;
  /** CPU seconds per process. */
  cpuSeconds: number;
}

export const DEFAULT_LIMITS: Limits = {
  processes: 512,
  memoryBytes: 4 * 1024 ** 3,
  fileBytes: 512 * 1024 ** 2,
  cpuSeconds: 3600,
};

export type Isolation = 'bubblewrap' | 'process';

let probed: { prlimit: boolean; bwrap: boolean } | null = null;

/** Which tools this machine has (probed once: bwrap must actually start, not just be installed). */
export function sandboxTools(): { prlimit: boolean; bwrap: boolean } {
  if (probed) return probed;
  const works = (cmd: string, args: string[]) => {
    try {
      return spawnSync(cmd, args, { stdio: 'ignore', timeout: 5000 }).status === 0;
    } catch {
      return false;
    }
  };
  probed = {
    prlimit: works('prlimit', ['--nofile=1024', '--', 'true']),
    bwrap: works('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--', 'true']),
  };
  return probed;
}

export interface StepOptions {
  command: string;
  args: string[];
  cwd: string;
  /** The one writable directory when sandboxed. */
  workDir: string;
  /** Paths the sandbox shows read-only even under its private /tmp (a local repository to clone). */
  readOnly?: string[];
  env: NodeJS.ProcessEnv;
  limits: Limits;
  /** Run inside bubblewrap when it is available. */
  sandbox: boolean;
  deadline: number;
  signal: AbortSignal;
  onLine: (stream: 'stdout' | 'stderr', line: string) => void;
}

export interface StepResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  canceled: boolean;
  isolation: Isolation;
  /** The step tried to start more processes than `limits.processes` (its pids cgroup refused). */
  processLimitHit: boolean;
  /** A pids cgroup held the step (false: the process cap was prlimit's alone). */
  caged: boolean;
}

const MAX_LINE = 4096;

/** Splits a stream into lines (long lines cut at MAX_LINE characters). */
function lineSplitter(emit: (line: string) => void) {
  let rest = '';
  return {
    push(chunk: Buffer) {
      rest += chunk.toString('utf8');
      for (let i = rest.indexOf('\n'); i >= 0; i = rest.indexOf('\n')) {
        emit(rest.slice(0, i).replace(/\r$/, '').slice(0, MAX_LINE));
        rest = rest.slice(i + 1);
      }
      while (rest.length > MAX_LINE) {
        emit(rest.slice(0, MAX_LINE));
        rest = rest.slice(MAX_LINE);
      }
    },
    end() {
      if (rest) emit(rest.replace(/\r$/, ''));
      rest = '';
    },
  };
}

export function runStep(o: StepOptions): Promise<StepResult> {
  const tools = sandboxTools();
  let argv = [o.command, ...o.args];
  const isolation: Isolation = o.sandbox && tools.bwrap ? 'bubblewrap' : 'process';
  if (isolation === 'bubblewrap') {
    argv = [
      'bwrap',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      ...(o.readOnly ?? []).flatMap((p) => ['--ro-bind', p, p]),
      '--bind',
      o.workDir,
      o.workDir,
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--die-with-parent',
      '--chdir',
      o.cwd,
      '--',
      ...argv,
    ];
  }
  if (tools.prlimit) {
    argv = [
      'prlimit',
      `--nproc=${o.limits.processes}`,
      `--as=${o.limits.memoryBytes}`,
      `--fsize=${o.limits.fileBytes}`,
      `--cpu=${o.limits.cpuSeconds}`,
      '--core=0',
      '--',
      ...argv,
    ];
  }
  const cage = openCage(o.limits.processes);
  if (cage) argv = cage.wrap(argv);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: o.cwd,
      env: o.env,
      detached: true, // its own process group: killed as a whole
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    let canceled = false;
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      // Members that left the group (setsid) are still in the cage.
      cage?.killAll();
    };
    const out = lineSplitter((l) => o.onLine('stdout', l));
    const err = lineSplitter((l) => o.onLine('stderr', l));
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const timer = setTimeout(
      () => {
        timedOut = true;
        killGroup();
      },
      Math.max(0, o.deadline - Date.now()),
    );
    const onAbort = () => {
      canceled = true;
      killGroup();
    };
    if (o.signal.aborted) onAbort();
    else o.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      void cage?.dispose();
      reject(e);
    });
    // When the step's own process ends, what it left running in its group (a daemonized child
    // holding the pipes open) is killed, so 'close' comes.
    child.on('exit', killGroup);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      // Whatever the step left behind in its group (a daemonized child) goes with it.
      killGroup();
      out.end();
      err.end();
      const processLimitHit = cage?.limitHit() ?? false;
      const done = () =>
        resolve({ code, signal, timedOut, canceled, isolation, processLimitHit, caged: cage !== null });
      if (cage) cage.dispose().then(done, done);
      else done();
    });
  });
}

/** Total bytes of regular files under a directory (links not followed). */
export function treeBytes(dir: string): number {
  let n = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) n += fs.lstatSync(p).size;
    }
  };
  walk(dir);
  return n;
}
