import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** One sample: a metric name, its labels and value. */
export interface Sample {
  name: string;
  labels?: Record<string, string>;
  value: number;
}

/** A family of samples: what it measures (`help`), its Prometheus type, and how to read it now. */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  collect(): Sample[] | Promise<Sample[]>;
}

/**
 * The process's operational metrics, for `GET /metrics` (Prometheus text format 0.0.4). Areas
 * register families while the server is built (the edge its caches, the change feed its lag, the job
 * queue its counts); process memory and event-loop delay are built in. Reading is on demand: nothing
 * is computed between scrapes except the event-loop delay histogram, which Node keeps natively.
 */
export class Metrics {
  private readonly families: MetricFamily[] = [];
  private loopDelay: IntervalHistogram | null = null;

  constructor() {
    this.register({
      name: 'spaces_process_memory_bytes',
      help: 'Memory of this process by kind: rss (resident), heap_used, heap_total, external, array_buffers.',
      type: 'gauge',
      collect: () => {
        const m = process.memoryUsage();
        return [
          ['rss', m.rss],
          ['heap_used', m.heapUsed],
          ['heap_total', m.heapTotal],
          ['external', m.external],
          ['array_buffers', m.arrayBuffers],
        ].map(([kind, value]) => ({
          name: 'spaces_process_memory_bytes',
          labels: { kind: kind as string },
          value: value as number,
        }));
      },
    });
    this.register({
      name: 'spaces_event_loop_delay_seconds',
      help: 'Event-loop delay since the previous scrape (or start): p50, p99 and max.',
      type: 'gauge',
      collect: () => {
        const h = this.loopDelay;
        if (!h) return [];
        const out = [
          { q: '0.5', v: h.percentile(50) },
          { q: '0.99', v: h.percentile(99) },
          { q: '1', v: h.max },
        ].map(({ q, v }) => ({
          name: 'spaces_event_loop_delay_seconds',
          labels: { quantile: q },
          value: Number.isFinite(v) ? v / 1e9 : 0,
        }));
        h.reset();
        return out;
      },
    });
  }

  /** Starts measuring the event-loop delay (from `listen()`; stopped by `stop()`). */
  start(): void {
    if (this.loopDelay) return;
    this.loopDelay = monitorEventLoopDelay({ resolution: 10 });
    this.loopDelay.enable();
  }

  stop(): void {
    this.loopDelay?.disable();
    this.loopDelay = null;
  }

  register(family: MetricFamily): void {
    if (this.families.some((f) => f.name === family.name))
      throw new Error(`metric ${family.name} registered twice`);
    this.families.push(family);
  }

  /** Every family's samples now, in the Prometheus text exposition format. */
  async render(): Promise<string> {
    const lines: string[] = [];
    for (const f of this.families) {
      const samples = await f.collect();
      lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      lines.push(`# TYPE ${f.name} ${f.type}`);
      for (const s of samples) lines.push(`${s.name}${labelText(s.labels)} ${formatValue(s.value)}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

function labelText(labels: Record<string, string> | undefined): string {
  if (!labels) return '';
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return parts.length ? `{${parts.join(',')}}` : '';
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}
