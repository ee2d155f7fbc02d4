import type { Static } from '@sinclair/typebox';
import type { RuntimeLogLine } from '../../schemas/crons.ts';
import { streamOf, unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { logLimit, readNdjson, table } from './shared.ts';

type Line = Static<typeof RuntimeLogLine>;

const LEVELS = ['log', 'info', 'debug', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];
const RECONNECT_MS = 2_000;

interface Filters {
  since?: string;
  until?: string;
  requestId?: string;
  level?: Level;
  handler?: string;
}

const lineText = (l: Line) =>
  `${l.at}  ${l.level.toUpperCase().padEnd(5)}  ${l.method ?? ''} ${l.path ?? ''}${l.status !== null ? ` ${l.status}` : ''}` +
  `${l.requestId ? `  [${l.requestId}]` : ''}\n    ${l.message.replace(/\n/g, '\n    ')}`;

/**
 * `spaces logs --runtime`: what the space's functions wrote to the console and threw, per request
 * (newest first; `--follow` streams new lines, reconnecting from the last one seen).
 */
export async function runtimeLogs(
  ctx: Context,
  spaceId: string,
  o: Record<string, unknown>,
  base: { since?: string; until?: string; requestId?: string },
): Promise<void> {
  const f: Filters = { ...base };
  if (o.level !== undefined) {
    const level = String(o.level).toLowerCase();
    if (!LEVELS.includes(level as Level)) throw new UsageError(`--level takes one of ${LEVELS.join(', ')}.`);
    f.level = level as Level;
  }
  if (o.handler !== undefined) f.handler = String(o.handler);
  if (o.status !== undefined || o.path !== undefined)
    throw new UsageError(
      '--status and --path filter access logs; runtime logs take --level, --handler and --request-id.',
    );
  const limit = logLimit(o);
  const page = await unwrap(
    ctx.spaceApi.GET('/v1/spaces/{spaceId}/logs/runtime', {
      params: { path: { spaceId }, query: { limit, ...f } },
    }),
  );
  if (!o.follow) {
    ctx.result(page.data, () =>
      page.data.length
        ? table(
            page.data.map((l) => [
              l.at,
              l.level,
              l.handler ?? '',
              l.requestId ?? '',
              l.message.length > 120
                ? `${l.message.slice(0, 119).replace(/\n/g, ' ')}…`
                : l.message.replace(/\n/g, ' '),
            ]),
            ['TIME', 'LEVEL', 'HANDLER', 'REQUEST', 'MESSAGE'],
          )
        : 'No runtime log lines yet (functions’ console output reaches the log about a second after the request).',
    );
    return;
  }
  const shown = [...page.data].reverse();
  for (const l of shown) ctx.json ? ctx.writeJsonLine(l) : ctx.out(lineText(l));
  let since = shown.length ? shown[shown.length - 1]!.at : f.since;
  let seen = new Set(shown.filter((l) => l.at === since).map((l) => l.id));
  const { since: _s, until: _u, ...streamFilters } = f;
  for (;;) {
    try {
      const res = await streamOf(
        ctx.spaceApi.GET('/v1/spaces/{spaceId}/logs/runtime', {
          params: {
            path: { spaceId },
            query: { follow: true, ...streamFilters, ...(since ? { since } : {}) },
          },
          headers: { accept: 'application/x-ndjson' },
          parseAs: 'stream',
        }),
      );
      await readNdjson<Line>(res, (l) => {
        if (seen.has(l.id)) return;
        if (l.at !== since) seen = new Set();
        since = l.at;
        seen.add(l.id);
        ctx.json ? ctx.writeJsonLine(l) : ctx.out(lineText(l));
      });
    } catch (err) {
      if (err instanceof UsageError || (err as { status?: number }).status) throw err;
    }
    await new Promise((r) => setTimeout(r, RECONNECT_MS));
  }
}
