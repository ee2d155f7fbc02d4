import { newId } from '../../ids.ts';
import type { Store } from '../../store/repos/index.ts';

/** Largest log a build keeps, bytes (later lines are dropped, one notice says so). */
export const MAX_LOG_BYTES = 1024 * 1024;

/** Every form of a secret a log must not show: the value, and its base64 (standard and URL-safe). */
export function secretForms(values: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const v of values) {
    if (!v) continue;
    forms.add(v);
    const b = Buffer.from(v, 'utf8');
    forms.add(b.toString('base64'));
    forms.add(b.toString('base64').replace(/=+$/, ''));
    forms.add(b.toString('base64url'));
  }
  // Longest first, so a value containing another is replaced whole.
  return [...forms].filter(Boolean).sort((a, b) => b.length - a.length);
}

export function redact(line: string, forms: readonly string[]): string {
  let out = line;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join('[redacted]');
  return out;
}

/**
 * A build's log as it is written: lines redacted, buffered and stored in batches (a quarter second
 * or 200 lines), capped at MAX_LOG_BYTES.
 */
export class BuildLog {
  private buffer: Array<{ id: string; build_id: string; stream: string; line: string; created_at: string }> =
    [];
  private bytes = 0;
  private truncated = false;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** The last lines written (for the failure message). */
  readonly tail: string[] = [];

  constructor(
    private readonly store: Store,
    private readonly buildId: string,
    private forms: readonly string[],
  ) {}

  setSecrets(forms: readonly string[]): void {
    this.forms = forms;
  }

  write(stream: 'stdout' | 'stderr' | 'system', raw: string): void {
    if (this.truncated) return;
    const line = redact(raw, this.forms);
    const size = Buffer.byteLength(line) + 1;
    if (this.bytes + size > MAX_LOG_BYTES) {
      this.truncated = true;
      this.push('system', `log truncated: builds keep at most ${MAX_LOG_BYTES} bytes of log`);
      return;
    }
    this.bytes += size;
    this.push(stream, line);
  }

  private push(stream: string, line: string): void {
    this.buffer.push({
      id: newId('bl'),
      build_id: this.buildId,
      stream,
      line,
      created_at: new Date().toISOString(),
    });
    this.tail.push(line);
    if (this.tail.length > 20) this.tail.shift();
    if (this.buffer.length >= 200) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), 250);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.buffer;
    this.buffer = [];
    const bytes = rows.reduce((n, r) => n + Buffer.byteLength(r.line) + 1, 0);
    this.flushing = this.flushing.then(async () => {
      if (!rows.length) return;
      await this.store.repos.buildLogs.append(rows);
      await this.store.repos.builds.addLogBytes(this.buildId, bytes);
    });
    return this.flushing;
  }
}
