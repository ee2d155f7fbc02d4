import fsp from 'node:fs/promises';
import path from 'node:path';
import { paginate, sendRaw, unwrap } from '../../sdk/index.ts';
import { completionScript } from '../completion.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { type Action, definitions } from '../program.ts';
import { readStdin, table } from './shared.ts';

/** A path of the API (or a whole URL) with `query` added, as `spaces api` takes it. */
function apiUrl(ctx: Context, p: string, query: Record<string, string>): string {
  const u = new URL(/^https?:\/\//.test(p) ? p : `${ctx.apiUrl}${p.startsWith('/') ? '' : '/'}${p}`);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u.toString();
}

/** Operations, the raw API escape hatch and shell completion. */
export const toolActions: Record<string, Action> = {
  async operations(ctx, _a, o) {
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/operations', {
        params: { path: { spaceId: ctx.spaceRef() }, query: { limit: Number(o.limit) } },
      }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((x) => [x.createdAt, x.id, x.kind, x.status]),
            ['CREATED', 'ID', 'KIND', 'STATUS'],
          )
        : 'No operations yet (renames, restores and deletions show up here).',
    );
  },

  async api(ctx, [method, p], o) {
    const m = method!.toUpperCase();
    let raw: Buffer | undefined;
    if (o.input === '-') raw = Buffer.from(await readStdin(ctx));
    else if (typeof o.input === 'string') {
      if (!o.input.startsWith('@')) throw new UsageError('--input takes @file or - (stdin).');
      raw = await fsp.readFile(path.resolve(ctx.io.cwd, o.input.slice(1)));
    }
    const idempotencyKey = o.idempotencyKey as string | undefined;
    if (o.paginate) {
      if (m !== 'GET') throw new UsageError('--paginate works with GET.');
      const [pathPart, qs] = p!.split('?');
      const query = Object.fromEntries(new URLSearchParams(qs ?? ''));
      const fetcher = ctx.fetchWith(ctx.apiToken);
      const pages = paginate<unknown>(async (cursor) => {
        const url = apiUrl(ctx, pathPart!, { limit: '100', ...query, ...(cursor ? { cursor } : {}) });
        const response = await sendRaw(fetcher, url, { method: 'GET' });
        return { data: (await response.json()) as { data: unknown[] }, response };
      });
      for await (const item of pages) ctx.writeJsonLine(item);
      return;
    }
    const res = await sendRaw(ctx.fetchWith(ctx.apiToken), apiUrl(ctx, p!, {}), {
      method: m,
      headers: {
        ...(raw ? { 'content-type': 'application/json' } : {}),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      ...(raw ? { body: new Uint8Array(raw) } : {}),
    });
    const text = await res.text();
    ctx.io.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
  },

  async completion(ctx, [shell]) {
    ctx.io.stdout.write(completionScript(definitions(), shell!));
  },
};
