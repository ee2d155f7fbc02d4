import { type RequestBody, unwrap } from '../../sdk/index.ts';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import { confirm, table } from './shared.ts';

const ROLES = ['viewer', 'commenter', 'editor', 'manager'];

function role(o: Record<string, unknown>): string | undefined {
  const r = o.role as string | undefined;
  if (r !== undefined && !ROLES.includes(r)) throw new UsageError(`--role is one of ${ROLES.join(', ')}.`);
  return r;
}

function paths(o: Record<string, unknown>): string[] | undefined {
  const raw = o.paths as string | undefined;
  const list = raw
    ?.split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return list?.length ? list : undefined;
}

/** People of a space (invited by e-mail, no account needed) and visitors' access requests. */
export const peopleActions: Record<string, Action> = {
  async 'people.ls'(ctx) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.GET('/v1/spaces/{spaceId}/people', {
        params: { path: { spaceId: ctx.spaceRef() }, query: { limit: 100 } },
      }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((p) => [
              p.id,
              p.email,
              p.status,
              p.grants.map((g) => `${g.role} ${g.paths.join(' ')}`).join('; ') || '(no access)',
            ]),
            ['ID', 'EMAIL', 'STATUS', 'GRANTS'],
          )
        : 'No people. `spaces people invite EMAIL` shares the space with someone.',
    );
  },

  async 'people.invite'(ctx, [email], o) {
    ctx.requireToken();
    const r0 = role(o);
    const p0 = paths(o);
    const body: RequestBody<'/v1/spaces/{spaceId}/people', 'post'> = {
      email: email!,
      ...(r0 ? { role: r0 as 'viewer' } : {}),
      ...(p0 ? { paths: p0 } : {}),
      ...(o.name ? { name: o.name as string } : {}),
      ...(o.note ? { note: o.note as string } : {}),
    };
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/people', { params: { path: { spaceId: ctx.spaceRef() } }, body }),
    );
    const g = r.data.grants[0];
    ctx.result(
      r.data,
      () =>
        `Invited ${r.data.email} (${r.data.id}) as ${g?.role ?? 'viewer'} of ${g?.paths.join(' ') ?? '/**'}. An e-mail with their sign-in link is on its way.`,
    );
  },

  async 'people.grant'(ctx, [id], o) {
    ctx.requireToken();
    const r0 = role(o);
    const p0 = paths(o);
    const grants = o.none ? [] : [{ ...(r0 ? { role: r0 as 'viewer' } : {}), ...(p0 ? { paths: p0 } : {}) }];
    const r = await unwrap(
      ctx.api.PUT('/v1/spaces/{spaceId}/people/{personId}/grants', {
        params: { path: { spaceId: ctx.spaceRef(), personId: id! } },
        body: { grants },
      }),
    );
    ctx.result(r.data, () =>
      r.data.grants.length
        ? `${r.data.email} may now: ${r.data.grants.map((g) => `${g.role} ${g.paths.join(' ')}`).join('; ')}.`
        : `${r.data.email} keeps their place but has no access.`,
    );
  },

  async 'people.resend'(ctx, [id]) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/people/{personId}/resend', {
        params: { path: { spaceId: ctx.spaceRef(), personId: id! } },
      }),
    );
    ctx.result(r.data, () => `Sent ${r.data.email} a new link; the previous one no longer works.`);
  },

  async 'people.rm'(ctx, [id]) {
    ctx.requireToken();
    await confirm(ctx, `Remove ${id} and revoke their access?`);
    await unwrap(
      ctx.api.DELETE('/v1/spaces/{spaceId}/people/{personId}', {
        params: { path: { spaceId: ctx.spaceRef(), personId: id! } },
      }),
    );
    ctx.result({ id, removed: true }, () => `Removed ${id}; their next request is refused.`);
  },

  async 'requests.ls'(ctx, _args, o) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.GET('/v1/spaces/{spaceId}/requests', {
        params: {
          path: { spaceId: ctx.spaceRef() },
          query: { limit: 100, ...(o.all ? {} : { status: 'pending' }) },
        },
      }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((q) => [q.id, q.status, q.email, q.path, q.message ?? '']),
            ['ID', 'STATUS', 'EMAIL', 'PATH', 'MESSAGE'],
          )
        : 'No access requests waiting.',
    );
  },

  async 'requests.approve'(ctx, [id], o) {
    ctx.requireToken();
    const r0 = role(o);
    const p0 = paths(o);
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/requests/{requestId}/approve', {
        params: { path: { spaceId: ctx.spaceRef(), requestId: id! } },
        body: { ...(r0 ? { role: r0 as 'viewer' } : {}), ...(p0 ? { paths: p0 } : {}) },
      }),
    );
    ctx.result(
      r.data,
      () => `Approved: ${r.data.email} is person ${r.data.personId} and was sent a sign-in link.`,
    );
  },

  async 'requests.deny'(ctx, [id]) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/requests/{requestId}/deny', {
        params: { path: { spaceId: ctx.spaceRef(), requestId: id! } },
      }),
    );
    ctx.result(r.data, () => `Denied the request of ${r.data.email}.`);
  },
};
