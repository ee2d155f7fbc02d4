import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A process cage for one build step: a pids cgroup with `pids.max`, so a fork bomb stops at the
 * limit even when the server runs as root (where `prlimit --nproc` binds nothing). Every process the
 * step starts — including ones that leave its process group with `setsid` — is a member, so the cage
 * is also how the step's leftovers are found and killed.
 *
 * Where it works: cgroup v2 with the `pids` controller available at the hierarchy's root
 * (`/sys/fs/cgroup/spaces-builds`, created with `+pids` in its subtree), or cgroup v1's `pids`
 * hierarchy (`/sys/fs/cgroup/pids/spaces-builds`); both need write access (root, or a delegated
 * tree). Elsewhere there is no cage and the limit is prlimit's alone (see docs/guides/builds.md).
 */

export interface ProcessCage {
  /** The argv that enters the cage and then runs `argv` (the shell `exec`s it: no extra process). */
  wrap(argv: string[]): string[];
  /** The step tried to start more processes than the limit allowed. */
  limitHit(): boolean;
  /** SIGKILL every member until none is left (bounded). */
  killAll(): void;
  /** Kill what is left and remove the cgroup. */
  dispose(): Promise<void>;
}

interface Root {
  dir: string;
}

let probedRoot: Root | null | undefined;

function tryRoot(dir: string, v2: boolean): Root | null {
  try {
    if (!fs.existsSync(dir)) fs.mkdirSync(dir);
    if (v2) {
      const enabled = fs.readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8');
      if (!enabled.split(/\s+/).includes('pids'))
        fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+pids');
    }
    // Prove a child can be made and limited.
    const probe = path.join(dir, `probe-${randomBytes(4).toString('hex')}`);
    fs.mkdirSync(probe);
    try {
      fs.writeFileSync(path.join(probe, 'pids.max'), '1');
    } finally {
      fs.rmdirSync(probe);
    }
    return { dir };
  } catch {
    return null;
  }
}

/** The directory cages are made under, or null where this machine gives none (probed once). */
export function cageRoot(): string | null {
  if (probedRoot === undefined) {
    probedRoot = null;
    if (process.platform === 'linux') {
      const v2 = '/sys/fs/cgroup/cgroup.controllers';
      const v1 = '/sys/fs/cgroup/pids';
      try {
        if (fs.existsSync(v2) && fs.readFileSync(v2, 'utf8').split(/\s+/).includes('pids'))
          probedRoot = tryRoot('/sys/fs/cgroup/spaces-builds', true);
        else if (fs.existsSync(path.join(v1, 'cgroup.procs')))
          probedRoot = tryRoot(path.join(v1, 'spaces-builds'), false);
      } catch {
        probedRoot = null;
      }
    }
  }
  return probedRoot?.dir ?? null;
}

const readPids = (file: string): number[] => {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((n) => n > 0);
  } catch {
    return [];
  }
};

/** A new cage limited to `maxProcesses`, or null where there is no cgroup to make one in. */
export function openCage(maxProcesses: number): ProcessCage | null {
  const root = cageRoot();
  if (!root) return null;
  const dir = path.join(root, `step-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'pids.max'), String(maxProcesses));
  } catch {
    try {
      fs.rmdirSync(dir);
    } catch {
      /* never made */
    }
    return null;
  }
  const procs = path.join(dir, 'cgroup.procs');
  const killAll = () => {
    // A member forking while it is being killed can add one more: read again until empty.
    for (let round = 0; round < 50; round++) {
      const pids = readPids(procs);
      if (pids.length === 0) return;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
  };
  return {
    // `$0` is the cage's procs file, `$@` the step: the shell joins the cage, then becomes the step.
    wrap: (argv) => ['sh', '-c', 'echo $$ > "$0" && exec "$@"', procs, ...argv],
    limitHit() {
      try {
        const m = /^max (\d+)/m.exec(fs.readFileSync(path.join(dir, 'pids.events'), 'utf8'));
        return m !== null && Number(m[1]) > 0;
      } catch {
        return false;
      }
    },
    killAll,
    async dispose() {
      killAll();
      // Killed members leave the cgroup once reaped: retry briefly, then leave an empty directory
      // behind rather than block (the kernel frees it when the last zombie goes).
      for (let i = 0; i < 100; i++) {
        try {
          fs.rmdirSync(dir);
          return;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
          killAll();
          await new Promise((r) => setTimeout(r, 10));
        }
      }
    },
  };
}
