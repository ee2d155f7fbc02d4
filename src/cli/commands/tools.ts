import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Static } from '@sinclair/typebox';
import type { OperationListResponse } from '../../schemas/spaces.ts';
import { completionScript } from '../completion.ts';
import { UsageError } from '../http.ts';
import { type Action, definitions } from '../program.ts';
import { enc, readStdin, table } from './shared.ts';

/** Operations, the raw API escape hatch and shell completion. */
export const toolActions: Record<string, Action> = {
  async operations(ctx, _a, o) {
    const r = await ctx.spaceClient.request<Static<typeof OperationListResponse>>(
      'GET',
      `/v1/spaces/${enc(ctx.spaceRef())}/operations`,
      {
        query: { limit: Number(o.limit) },
      },
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
      for await (const item of ctx.client.paginate(pathPart!, query)) ctx.writeJsonLine(item);
      return;
    }
    const res = (await ctx.client.request(m, p!, {
      ...(raw ? { raw: new Uint8Array(raw), contentType: 'application/json' } : {}),
      idempotencyKey,
      stream: true,
    })) as Response;
    const text = await res.text();
    ctx.io.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
  },

  async completion(ctx, [shell]) {
    ctx.io.stdout.write(completionScript(definitions(), shell!));
  },
};
