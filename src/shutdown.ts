import { constants } from 'node:os';

export interface ShutdownOptions {
  /** The graceful part: stop listening, drain, close the database. */
  close(): Promise<void>;
  /** After this long the process exits whether or not `close` finished. */
  timeoutMs: number;
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  exit(code: number): void;
  /**
   * SIGTERM only (an orchestrator or balancer stopping the instance): for this long before closing,
   * `/readyz` answers 503 while everything else is still served, so balancers take the instance out
   * of rotation before it stops accepting. SIGINT (Ctrl-C in a terminal) skips it.
   */
  drainMs?: number;
  /** Called when the drain begins (the readiness flag flips). */
  beginDrain?(): void;
}

/** Exit status when the graceful close failed or ran out of time. */
export const EXIT_FORCED = 1;

/**
 * What a server does on SIGTERM/SIGINT. SIGTERM first drains for `drainMs` (see there). Then the
 * server closes gracefully and exits 0 — or 1 when
 * closing fails or outlasts the timeout: something may hang (a database pool waiting for a client a
 * job still holds, a socket nobody ends), and an orchestrator waiting for the exit must not wait
 * forever. A second signal means the operator does not want to wait: exit at once with the
 * conventional 128 + signal number (130 for SIGINT, 143 for SIGTERM).
 */
export function shutdownOnSignal(opts: ShutdownOptions): (signal: NodeJS.Signals) => void {
  let stopping = false;
  return (signal) => {
    if (stopping) {
      opts.log.warn({ signal }, 'second signal: exiting without finishing the shutdown');
      opts.exit(128 + (constants.signals[signal] ?? 0));
      return;
    }
    stopping = true;
    const drainMs = signal === 'SIGTERM' ? (opts.drainMs ?? 0) : 0;
    opts.beginDrain?.();
    if (drainMs > 0) {
      opts.log.info({ signal, drainMs }, 'draining: /readyz answers 503, requests are still served');
      setTimeout(() => close(signal), drainMs);
    } else close(signal);
  };

  function close(signal: NodeJS.Signals): void {
    opts.log.info({ signal, timeoutMs: opts.timeoutMs }, 'shutting down');
    // Not unref'd: this timer must fire even when whatever hangs keeps nothing else alive.
    const forced = setTimeout(() => {
      opts.log.error({ timeoutMs: opts.timeoutMs }, 'shutdown did not finish in time: exiting anyway');
      opts.exit(EXIT_FORCED);
    }, opts.timeoutMs);
    opts.close().then(
      () => {
        clearTimeout(forced);
        opts.exit(0);
      },
      (err: unknown) => {
        clearTimeout(forced);
        opts.log.error({ err }, 'shutdown failed');
        opts.exit(EXIT_FORCED);
      },
    );
  }
}
