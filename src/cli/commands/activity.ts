import type { Static } from '@sinclair/typebox';
import type { ActivityEvent } from '../../schemas/events.ts';
import { streamOf, unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import { table } from './shared.ts';

type Event = Static<typeof ActivityEvent>;

/** `--code` values (repeatable or comma lists) as the server takes them; a matcher for streams. */
function codesOf(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  return list
    .flatMap((c: string) => c.split(','))
    .map((c) => c.trim())
    .filter(Boolean);
}

function matches(codes: string[], code: string): boolean {
  if (codes.length === 0) return true;
  return codes.some((c) => (c.endsWith('.*') ? code.startsWith(c.slice(0, -1)) : c === code));
}

const line = (e: Event) => `${e.createdAt}  ${e.code.padEnd(28)} ${e.message}`;

interface Feed {
  /** A page of the feed, newest first. */
  list(query: { limit: number; code?: string }): Promise<{ data: Event[] }>;
  /** The feed's server-sent events after `since` (a sequence), or null: the feed has no stream. */
  stream: ((since: string | null) => Promise<Response>) | null;
}

/** Where the feed is: a space (--space), a team (--team), or every team of the account. */
function feedOf(ctx: Context, o: Record<string, unknown>): Feed {
  const space = ctx.opts.space;
  const sse = { accept: 'text/event-stream' };
  const after = (since: string | null) => (since === null ? {} : { since });
  if (space) {
    const path = { spaceId: ctx.spaceRef(space) };
    const api = ctx.spaceApi;
    return {
      list: (query) => unwrap(api.GET('/v1/spaces/{spaceId}/activity', { params: { path, query } })),
      stream: (since) =>
        streamOf(
          api.GET('/v1/spaces/{spaceId}/events/stream', {
            params: { path, query: after(since) },
            headers: sse,
            parseAs: 'stream',
          }),
        ),
    };
  }
  if (typeof o.team === 'string') {
    const path = { teamId: o.team };
    return {
      list: (query) => unwrap(ctx.api.GET('/v1/teams/{teamId}/activity', { params: { path, query } })),
      stream: (since) =>
        streamOf(
          ctx.api.GET('/v1/teams/{teamId}/events/stream', {
            params: { path, query: after(since) },
            headers: sse,
            parseAs: 'stream',
          }),
        ),
    };
  }
  return { list: (query) => unwrap(ctx.api.GET('/v1/activity', { params: { query } })), stream: null };
}

/** Reads an SSE response, calling `onEvent` per event; returns when the server ends it. */
async function readStream(res: Response, onEvent: (id: string | null, data: string) => void): Promise<void> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let id: string | null = null;
      const data: string[] = [];
      for (const l of block.split('\n')) {
        if (l.startsWith('id: ')) id = l.slice(4);
        else if (l.startsWith('data: ')) data.push(l.slice(6));
      }
      if (data.length) onEvent(id, data.join('\n'));
    }
  }
}

/** `spaces activity`: the activity feed, newest first; `--follow` streams new events as they happen. */
export const activityActions: Record<string, Action> = {
  async activity(ctx, _a, o) {
    const codes = codesOf(o.code);
    const feed = feedOf(ctx, o);
    const page = await feed.list({
      limit: Number(o.limit ?? 20),
      ...(codes.length ? { code: codes.join(',') } : {}),
    });
    if (!o.follow) {
      ctx.result(page.data, () =>
        page.data.length
          ? table(
              page.data.map((e) => [e.createdAt, e.code, e.message]),
              ['TIME', 'EVENT', 'MESSAGE'],
            )
          : 'No events yet.',
      );
      return;
    }
    if (!feed.stream) throw new UsageError('--follow needs --space <space> or --team <team>.');
    // Oldest first, then everything after the newest shown, as it happens (reconnecting from there).
    const shown = [...page.data].reverse();
    for (const e of shown) ctx.json ? ctx.writeJsonLine(e) : ctx.out(line(e));
    let last: string | null = shown.length ? String(shown[shown.length - 1]!.sequence) : null;
    for (;;) {
      try {
        const res = await feed.stream(last);
        await readStream(res, (id, data) => {
          if (id) last = id;
          const e = JSON.parse(data) as Event;
          if (!matches(codes, e.code)) return;
          ctx.json ? ctx.writeJsonLine(e) : ctx.out(line(e));
        });
      } catch (err) {
        if (err instanceof UsageError || (err as { status?: number }).status) throw err;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  },
};
