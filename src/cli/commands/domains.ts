import type { Static } from '@sinclair/typebox';
import type { CreateDomainBody, DomainSchema } from '../../schemas/domains.ts';
import { unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import { confirm, table } from './shared.ts';

type Domain = Static<typeof DomainSchema>;

/** What a person needs to do next: the records to create and what DNS holds now. */
function describe(d: Domain): string {
  const lines = [`${d.hostname}  ${d.id}  ${d.status}${d.spaceId ? `  → ${d.spaceId}` : '  (not bound)'}`];
  if (d.role === 'redirect' && d.redirect)
    lines.push(`  Redirects (${d.redirect.status}) to ${d.redirect.target}`);
  lines.push('  DNS records:');
  lines.push(
    table(
      d.records.map((r) => ['   ', r.type, r.name, r.value ?? '(see note)', r.state]),
      ['   ', 'TYPE', 'NAME', 'VALUE', 'STATE'],
    ),
  );
  for (const r of d.records) if (r.note) lines.push(`  Note: ${r.note}`);
  if (d.status !== 'verified')
    lines.push(`  Create the records above, then \`spaces domains verify ${d.hostname}\`.`);
  return lines.join('\n');
}

/** A domain of the caller's teams by id or hostname. */
async function find(ctx: Context, ref: string): Promise<Domain> {
  if (ref.startsWith('dom_')) {
    return (await unwrap(ctx.api.GET('/v1/domains/{domainId}', { params: { path: { domainId: ref } } })))
      .data;
  }
  const wanted = ref.toLowerCase().replace(/\.$/, '');
  let cursor: string | undefined;
  for (;;) {
    const page = await unwrap(
      ctx.api.GET('/v1/domains', {
        params: {
          query: { limit: 100, ...(ctx.team ? { team: ctx.team } : {}), ...(cursor ? { cursor } : {}) },
        },
      }),
    );
    const hit = page.data.find((d) => d.hostname === wanted || d.asciiHostname === wanted);
    if (hit) return hit;
    if (!page.pagination.nextCursor) break;
    cursor = page.pagination.nextCursor;
  }
  throw new UsageError(`No domain ${ref} in your teams. \`spaces domains ls\` lists them.`);
}

/** Custom domains: add (and bind), list, verify, remove. */
export const domainActions: Record<string, Action> = {
  async 'domains.add'(ctx, [hostname], o) {
    ctx.requireToken();
    const body: Static<typeof CreateDomainBody> = {
      hostname: hostname!,
      ...(ctx.team ? { team: ctx.team } : {}),
      ...(o.unbound ? {} : { spaceId: ctx.spaceRef() }),
      ...(o.redirectTo
        ? {
            role: 'redirect' as const,
            redirect: { target: o.redirectTo as string, status: Number(o.status ?? 308) as 308 },
          }
        : {}),
    };
    const r = await unwrap(ctx.api.POST('/v1/domains', { body }));
    ctx.result(r.data, () => `Added ${r.data.hostname}.\n${describe(r.data)}`);
  },

  async 'domains.ls'(ctx, _args, o) {
    ctx.requireToken();
    if (o.all) {
      const r = await unwrap(
        ctx.api.GET('/v1/domains', {
          params: { query: { limit: 100, ...(ctx.team ? { team: ctx.team } : {}) } },
        }),
      );
      ctx.result(r.data, () =>
        r.data.length
          ? table(
              r.data.map((d) => [d.hostname, d.id, d.status, d.spaceId ?? '-', d.role]),
              ['HOSTNAME', 'ID', 'STATUS', 'SPACE', 'ROLE'],
            )
          : 'No domains.',
      );
      return;
    }
    const r = await unwrap(
      ctx.api.GET('/v1/spaces/{spaceId}/domains', { params: { path: { spaceId: ctx.spaceRef() } } }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((d) => [d.hostname, d.id, d.status, d.role]),
            ['HOSTNAME', 'ID', 'STATUS', 'ROLE'],
          )
        : 'No domains bound to this space. `spaces domains add HOSTNAME` adds one.',
    );
  },

  async 'domains.verify'(ctx, [ref]) {
    ctx.requireToken();
    const d = await find(ctx, ref!);
    const r = await unwrap(
      ctx.api.POST('/v1/domains/{domainId}/verify', { params: { path: { domainId: d.id } } }),
    );
    ctx.result(
      r.data,
      () => `${r.data.status === 'verified' ? 'Verified' : 'Not verified yet'}: ${describe(r.data)}`,
    );
  },

  async 'domains.rm'(ctx, [ref]) {
    ctx.requireToken();
    const d = await find(ctx, ref!);
    await confirm(ctx, `Remove ${d.hostname} from the team's domains? DNS records are left as they are.`);
    if (d.spaceId)
      await unwrap(
        ctx.api.PATCH('/v1/domains/{domainId}', {
          params: { path: { domainId: d.id } },
          body: { spaceId: null },
        }),
      );
    await unwrap(ctx.api.DELETE('/v1/domains/{domainId}', { params: { path: { domainId: d.id } } }));
    ctx.result({ id: d.id, hostname: d.hostname, removed: true }, () => `Removed ${d.hostname}.`);
  },
};
