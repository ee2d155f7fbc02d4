import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Static } from '@sinclair/typebox';
import type { OperationListResponse } from '../../schemas/spaces.ts';
import { completionScript } from '../completion.ts';
import { ApiProblem, UsageError } from '../http.ts';
import { type Action, definitions } from '../program.ts';
import { enc, readStdin, table } from './shared.ts';

/** Operations, logs, the raw API escape hatch and shell completion. */
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

  /**
   * Access and runtime logs (`GET /v1/spaces/{id}/logs/access|runtime` in the reference) are not served
   * by this server yet: say so, and where to look meanwhile, rather than print nothing.
   */
  async logs(ctx) {
    throw new ApiProblem({
      type: 'about:blank',
      title: 'Logs are not available yet',
      status: 0,
      code: 'feature_unavailable',
      detail: `${ctx.apiUrl} keeps no access or runtime logs of sites yet.`,
      requestId: '',
      suggestions: [
        '`spaces versions get VERSION` shows what a publish reported (its diagnostics).',
        '`spaces channels history` shows what went live when; `spaces operations` lists renames and deletions.',
      ],
    });
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
