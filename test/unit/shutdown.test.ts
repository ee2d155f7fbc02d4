import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EXIT_FORCED, shutdownOnSignal } from '../../src/shutdown.ts';

describe('shutdown on signals', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const setup = (close: () => Promise<void>, timeoutMs = 10_000) => {
    const exits: number[] = [];
    const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const onSignal = shutdownOnSignal({ close, timeoutMs, log, exit: (code) => exits.push(code) });
    return { exits, log, onSignal };
  };

  it('exits 0 once the close finishes', async () => {
    const { exits, onSignal } = setup(() => Promise.resolve());
    onSignal('SIGTERM');
    await vi.advanceTimersByTimeAsync(0);
    expect(exits).toEqual([0]);
    // The forced exit was cancelled.
    await vi.advanceTimersByTimeAsync(20_000);
    expect(exits).toEqual([0]);
  });

  it('exits 1 when the close hangs past the timeout', async () => {
    const close = vi.fn(() => new Promise<void>(() => {}));
    const { exits, log, onSignal } = setup(close, 3000);
    onSignal('SIGTERM');
    await vi.advanceTimersByTimeAsync(2999);
    expect(exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(exits).toEqual([EXIT_FORCED]);
    expect(close).toHaveBeenCalledTimes(1);
    expect(log.error).toHaveBeenCalled();
  });

  it('exits 1 when the close fails', async () => {
    const { exits, onSignal } = setup(() => Promise.reject(new Error('pool gone')));
    onSignal('SIGINT');
    await vi.advanceTimersByTimeAsync(0);
    expect(exits).toEqual([EXIT_FORCED]);
  });

  it('exits at once, 128 + the signal number, on a second signal', async () => {
    const close = vi.fn(() => new Promise<void>(() => {}));
    const { exits, onSignal } = setup(close);
    onSignal('SIGTERM');
    onSignal('SIGTERM');
    expect(exits).toEqual([143]);
    onSignal('SIGINT');
    expect(exits).toEqual([143, 130]);
    expect(close).toHaveBeenCalledTimes(1);
  });
});
