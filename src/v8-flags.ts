import os from 'node:os';
import v8 from 'node:v8';

/**
 * V8 flags the server sets for itself when it may use one CPU only (a cgroup/cpuset or `taskset`
 * limit: `os.availableParallelism()` is 1).
 *
 * `--no-parallel-scavenge`: a young-generation collection otherwise splits its work over V8's helper
 * threads and waits for them. With one CPU they cannot run beside the main thread, so the split only
 * adds thread hand-offs to every pause; measured on the site edge under load, pauses are ~20–30%
 * shorter without it (bench/README.md). The flag is read at every collection, so setting it at
 * start-up takes effect at once (unlike heap sizes, which V8 fixes when the isolate is created).
 * On two or more CPUs nothing changes, nor when node was started with GC threading flags of the
 * operator's own (`node --parallel-scavenge bin/spaces.mjs server`; NODE_OPTIONS does not allow them).
 */
export function tuneGcForCpus(
  cpus: number = os.availableParallelism(),
  nodeFlags: string = process.execArgv.join(' '),
): string[] {
  if (cpus > 1 || /parallel-scavenge|single-threaded-gc/.test(nodeFlags)) return [];
  const flags = ['--no-parallel-scavenge'];
  for (const flag of flags) v8.setFlagsFromString(flag);
  return flags;
}
