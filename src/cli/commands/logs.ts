import type { Static } from '@sinclair/typebox';
import type { AccessLogLineSchema, AnalyticsResponse } from '../../schemas/analytics.ts';
import { streamOf, unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import { human } from '../publish-report.ts';
import { runtimeLogs } from './runtime-logs.ts';
import { logLimit, readNdjson, table } from './shared.ts';

type Line = Static<typeof AccessLogLineSchema>;
type Analytics = Static<typeof AnalyticsResponse>['data'];

/** How long `--follow` waits before it opens the stream again after the server ended it. */
const RECONNECT_MS = 2_000;

/**
 * `--since`/`--until`: an ISO time, or a duration back from now (`90s`, `15m`, `2h`, `7d`).
 */
export function timeOf(flag: string, raw: unknown, now = Date.now()): string | undefined {
  if (raw === undefined) return undefined;
  const s = String(raw).trim();
  const rel = /^(\d+)(s|m|h|d)$/.exec(s);
  if (rel) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now - Number(rel[1]) * unit).toISOString();
  }
  const t = Date.parse(s);
  if (!/^\d{4}-\d\d-\d\d/.test(s) || Number.isNaN(t)) {
    throw new UsageError(`${flag} takes an ISO time (2026-01-31T12:00:00Z) or a duration (30m, 2h, 7d).`);
  }
  return new Date(t).toISOString();
}

interface Filters {
  since?: string;
  until?: string;
  status?: string;
  pathPrefix?: string;
  requestId?: string;
}

function filtersOf(o: Record<string, unknown>): Filters {
  const f: Filters = {};
  const since = timeOf('--since', o.since);
  const until = timeOf('--until', o.until);
  if (since) f.since = since;
  if (until) f.until = until;
  if (o.status !== undefined) {
    const s = String(o.status).toLowerCase();
    if (!/^([1-5][0-9][0-9]|[1-5]xx)$/.test(s))
      throw new UsageError('--status takes a status (404) or a class (4xx).');
    f.status = s;
  }
  if (o.path !== undefined) {
    const p = String(o.path);
    if (!p.startsWith('/')) throw new UsageError('--path takes a path prefix starting with / (e.g. /blog/).');
    f.pathPrefix = p;
  }
  if (o.requestId !== undefined) f.requestId = String(o.requestId);
  return f;
}

/** The server applies no filter but `since` to a followed stream: the same filters, applied here. */
function matches(f: Filters, l: Line): boolean {
  if (f.until && l.time >= f.until) return false;
  if (f.status) {
    if (
      f.status.endsWith('xx')
        ? Math.floor(l.status / 100) !== Number(f.status[0])
        : l.status !== Number(f.status)
    )
      return false;
  }
  if (f.pathPrefix && !l.path.startsWith(f.pathPrefix)) return false;
  if (f.requestId && l.requestId !== f.requestId) return false;
  return true;
}

const lineText = (l: Line) =>
  `${l.time}  ${l.status}  ${l.method} ${l.path}  ${human(l.bytes)}  ${l.durationMs} ms` +
  `${l.referrer ? `  ← ${l.referrer}` : ''}${l.requestId ? `  [${l.requestId}]` : ''}`;

/** Streams lines newer than the last one seen, reconnecting (from that line's time) when the stream ends. */
async function follow(ctx: Context, spaceId: string, f: Filters, shown: Line[]): Promise<never> {
  let since = shown.length ? shown[shown.length - 1]!.time : f.since;
  // Lines at the `since` millisecond come again after a reconnect: skip the ones already printed.
  let seen = new Set(shown.filter((l) => l.time === since).map((l) => l.id));
  for (;;) {
    try {
      const res = await streamOf(
        ctx.spaceApi.GET('/v1/spaces/{spaceId}/logs/access', {
          params: { path: { spaceId }, query: { follow: true, ...(since ? { since } : {}) } },
          headers: { accept: 'application/x-ndjson' },
          parseAs: 'stream',
        }),
      );
      await readNdjson<Line>(res, (l) => {
        if (seen.has(l.id)) return;
        if (l.time !== since) seen = new Set();
        since = l.time;
        seen.add(l.id);
        if (!matches(f, l)) return;
        ctx.json ? ctx.writeJsonLine(l) : ctx.out(lineText(l));
      });
    } catch (err) {
      if (err instanceof UsageError || (err as { status?: number }).status) throw err;
    }
    await new Promise((r) => setTimeout(r, RECONNECT_MS));
  }
}

function analyticsText(ref: string, a: Analytics): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const s = a.statusClasses;
  const out = [
    `${ref}: last ${a.window} (${a.from} → ${a.to})`,
    '',
    table([
      ['Requests', n(a.requests)],
      ['Visitors', n(a.visitors)],
      ['Bandwidth', human(a.bytes)],
      ['Status', `2xx ${n(s['2xx'])}  3xx ${n(s['3xx'])}  4xx ${n(s['4xx'])}  5xx ${n(s['5xx'])}`],
    ]),
  ];
  const top = (title: string, rows: Array<{ key: string; requests: number }>) => {
    if (rows.length)
      out.push(
        '',
        table(
          rows.map((r) => [r.key, n(r.requests)]),
          [title, 'REQUESTS'],
        ),
      );
  };
  top('TOP PATHS', a.topPaths);
  top('TOP REFERRERS', a.topReferrers);
  top('TOP COUNTRIES', a.topCountries);
  if (a.series.length) {
    const hourly = a.window === '48h';
    out.push(
      '',
      table(
        a.series.map((p) => [
          hourly ? `${p.at.slice(0, 13)}:00Z` : p.at.slice(0, 10),
          n(p.requests),
          human(p.bytes),
        ]),
        [hourly ? 'HOUR' : 'DAY', 'REQUESTS', 'BYTES'],
      ),
    );
  }
  if (a.requests === 0) out.push('', 'No requests in this window yet.');
  return out.join('\n');
}

/** `spaces logs` (access or runtime logs, listed or followed) and `spaces analytics`. */
export const logActions: Record<string, Action> = {
  async logs(ctx, [ref], o) {
    const spaceId = ctx.spaceRef(ref);
    if (o.runtime) {
      const since = timeOf('--since', o.since);
      const until = timeOf('--until', o.until);
      return runtimeLogs(ctx, spaceId, o, {
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
        ...(o.requestId !== undefined ? { requestId: String(o.requestId) } : {}),
      });
    }
    const f = filtersOf(o);
    const limit = logLimit(o);
    const page = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/logs/access', {
        params: { path: { spaceId }, query: { limit, ...f } },
      }),
    );
    if (!o.follow) {
      ctx.result(page.data, () =>
        page.data.length
          ? table(
              page.data.map((l) => [
                l.time,
                String(l.status),
                l.method,
                l.path,
                human(l.bytes),
                `${l.durationMs} ms`,
                l.referrer ?? '',
              ]),
              ['TIME', 'STATUS', 'METHOD', 'PATH', 'BYTES', 'DURATION', 'REFERRER'],
            )
          : 'No requests logged yet (lines reach the log about a second after the request).',
      );
      return;
    }
    // Oldest first, then every newer line as it arrives (NDJSON with --json), until interrupted.
    const shown = [...page.data].reverse();
    for (const l of shown) ctx.json ? ctx.writeJsonLine(l) : ctx.out(lineText(l));
    await follow(ctx, spaceId, f, shown);
  },

  async analytics(ctx, [ref], o) {
    const window = ((o.window as string | undefined) ?? '7d') as '48h' | '7d' | '30d';
    const spaceRef = ctx.spaceRef(ref);
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/analytics', {
        params: { path: { spaceId: spaceRef }, query: { window } },
      }),
    );
    ctx.result(r.data, () => analyticsText(spaceRef, r.data));
  },
};
