import type { Clock } from '../../clock.ts';
import { newId } from '../../ids.ts';
import type { LogSource, TailEvent } from '../../runtime/log-sink.ts';
import type { Store } from '../../store/repos/index.ts';
import type { RuntimeLogFilter, RuntimeLogRow } from '../../store/repos/runtime-logs.ts';

/** Lines kept per request (a handler logging in a loop fills its own quota, not the table). */
export const MAX_LINES_PER_REQUEST = 200;
/** Characters kept per line. */
export const MAX_LINE_CHARS = 8192;
const MAX_PATH = 1024;
const LEVELS = new Set(['log', 'info', 'debug', 'warn', 'error']);
const DAY = 86400_000;

export interface RuntimeLogLine {
  id: string;
  at: string;
  level: string;
  message: string;
  requestId: string | null;
  handler: string | null;
  method: string | null;
  path: string | null;
  status: number | null;
  outcome: string | null;
  versionId: string;
}

export function presentRuntimeLine(r: RuntimeLogRow): RuntimeLogLine {
  return {
    id: r.id,
    at: r.at,
    level: r.level,
    message: r.message,
    requestId: r.request_id,
    handler: r.handler,
    method: r.method,
    path: r.path,
    status: r.status === null ? null : Number(r.status),
    outcome: r.outcome,
    versionId: r.version_id,
  };
}

/** A console argument as text: strings as they are, anything else as JSON (or its String()). */
function text(part: unknown): string {
  if (typeof part === 'string') return part;
  try {
    return JSON.stringify(part) ?? String(part);
  } catch {
    return String(part);
  }
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The route pattern a path falls to (the router's own rule: most specific first), or null. */
export function handlerOf(source: LogSource, pathname: string | null): string | null {
  if (source.entry !== null) return source.entry;
  if (pathname === null) return null;
  const segs = pathname
    .split('/')
    .filter(Boolean)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  for (const route of source.routes) {
    const pattern = route.split('/').filter(Boolean);
    let ok = true;
    let i = 0;
    for (; i < pattern.length; i++) {
      const p = pattern[i]!;
      if (p === '*') break;
      if (i >= segs.length || (!p.startsWith(':') && p !== segs[i])) {
        ok = false;
        break;
      }
    }
    if (ok && (pattern[i] === '*' || pattern.length === segs.length)) return route;
  }
  return null;
}

/**
 * Turns workerd's tail events (one per request a worker handled) into log rows: each console call
 * with its level, each uncaught exception as an `error` line with its stack, and — when the request
 * did not end `ok` and left no line saying why — one `error` line naming the outcome. Every row
 * carries the request's id (the edge's `x-request-id`), method, path and status.
 */
export function rowsOf(source: LogSource, events: TailEvent[], now: number): RuntimeLogRow[] {
  const rows: RuntimeLogRow[] = [];
  for (const e of events) {
    const req = e.event?.request;
    let path: string | null = null;
    let pathname: string | null = null;
    if (req?.url) {
      try {
        const u = new URL(req.url);
        pathname = u.pathname;
        path = clip(u.pathname + u.search, MAX_PATH);
      } catch {
        path = clip(req.url, MAX_PATH);
      }
    }
    const base = {
      space_id: source.spaceId,
      version_id: source.versionId,
      request_id: req?.headers?.['x-request-id']?.slice(0, 64) ?? null,
      handler: handlerOf(source, pathname),
      method: req?.method?.slice(0, 16) ?? null,
      path,
      status: typeof e.event?.response?.status === 'number' ? e.event.response.status : null,
      outcome: e.outcome?.slice(0, 32) ?? null,
    };
    const lines: Array<{ at: number; level: string; message: string }> = [];
    for (const l of e.logs ?? []) {
      const level = l.level && LEVELS.has(l.level) ? l.level : 'log';
      lines.push({ at: l.timestamp ?? now, level, message: (l.message ?? []).map(text).join(' ') });
    }
    for (const x of e.exceptions ?? []) {
      const head = `${x.name ?? 'Error'}: ${x.message ?? ''}`;
      lines.push({ at: x.timestamp ?? now, level: 'error', message: x.stack ? `${head}\n${x.stack}` : head });
    }
    if (e.outcome && e.outcome !== 'ok' && !(e.exceptions ?? []).length) {
      lines.push({
        at: e.eventTimestamp ?? now,
        level: 'error',
        message: `The request ended: ${e.outcome}.`,
      });
    }
    const kept = lines.slice(0, MAX_LINES_PER_REQUEST);
    if (lines.length > kept.length) {
      kept.push({
        at: kept[kept.length - 1]!.at,
        level: 'warn',
        message: `${lines.length - MAX_LINES_PER_REQUEST} more lines of this request were not kept (at most ${MAX_LINES_PER_REQUEST}).`,
      });
    }
    for (const l of kept) {
      const at = Number.isFinite(l.at) && l.at > 0 ? l.at : now;
      rows.push({
        ...base,
        id: newId('rlg', at),
        at: new Date(at).toISOString(),
        level: l.level,
        message: clip(l.message, MAX_LINE_CHARS),
      });
    }
  }
  return rows;
}

/**
 * Runtime logs (issue 26): what functions write to the console and throw, per request, kept for
 * `retentionDays`; read newest first with filters, or followed.
 */
export class RuntimeLogService {
  constructor(
    private readonly d: {
      store: Store;
      clock: Clock;
      retentionDays: number;
      onError: (err: unknown) => void;
    },
  ) {}

  /** The log sink's callback: stores one batch of tail events. Never rejects. */
  async record(source: LogSource, events: TailEvent[]): Promise<void> {
    try {
      const rows = rowsOf(source, events, this.d.clock.now().getTime());
      if (rows.length) await this.d.store.repos.runtimeLogs.insertMany(rows);
    } catch (err) {
      this.d.onError(err);
    }
  }

  list(
    spaceId: string,
    filter: RuntimeLogFilter,
    after: string | null,
    limit: number,
  ): Promise<RuntimeLogRow[]> {
    return this.d.store.repos.runtimeLogs.list(spaceId, filter, after, limit);
  }

  newer(spaceId: string, after: string, limit: number, filter: RuntimeLogFilter): Promise<RuntimeLogRow[]> {
    return this.d.store.repos.runtimeLogs.newer(spaceId, after, limit, filter);
  }

  /** Removes lines past the retention (the maintenance job, hourly). */
  sweep(): Promise<number> {
    return this.d.store.repos.runtimeLogs.sweep(
      new Date(this.d.clock.now().getTime() - this.d.retentionDays * DAY).toISOString(),
    );
  }
}
