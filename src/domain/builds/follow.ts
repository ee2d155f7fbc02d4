import type { BuildRow } from '../../store/repos/builds/builds.ts';
import type { BuildLogRow } from '../../store/repos/builds/logs.ts';
import type { Store } from '../../store/repos/index.ts';

const TERMINAL = new Set(['succeeded', 'failed', 'canceled', 'skipped']);

export type FollowItem = { kind: 'line'; row: BuildLogRow } | { kind: 'end'; build: BuildRow };

/**
 * A build's log oldest first, as it is written: every stored line, then new ones as the runner
 * stores them (read from the database, so a build running on another instance is followed too),
 * ending with the build once it is finished and its last lines were read. Stops early, yielding
 * nothing more, when `signal` aborts (the client went away).
 */
export async function* followLog(
  store: Store,
  buildId: string,
  signal: AbortSignal,
  pollMs = 250,
): AsyncGenerator<FollowItem> {
  let last: string | null = null;
  for (;;) {
    if (signal.aborted) return;
    // Read the state first: lines stored before a build finishes are all there once it is.
    const build = await store.repos.builds.byId(buildId);
    if (!build) return;
    for (;;) {
      const rows = await store.repos.buildLogs.listAfter(buildId, last, 500);
      for (const row of rows) yield { kind: 'line', row };
      if (rows.length) last = rows[rows.length - 1]!.id;
      if (rows.length < 500 || signal.aborted) break;
    }
    if (TERMINAL.has(build.status)) {
      yield { kind: 'end', build };
      return;
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, pollMs);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
