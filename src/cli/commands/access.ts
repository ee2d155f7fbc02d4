import { unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import { confirm, readStdin, table } from './shared.ts';

const list = (v: unknown) =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

function scopeOf(o: Record<string, unknown>) {
  const paths = list(o.paths);
  const constraints: Record<string, unknown> = {};
  if (o.expires) constraints.expiresAt = new Date(o.expires as string).toISOString();
  if (o.maxUses) constraints.maxUses = Number(o.maxUses);
  if (o.ip) constraints.ip = list(o.ip);
  return {
    ...(paths ? { paths } : {}),
    ...(o.target ? { target: o.target as string } : {}),
    ...(Object.keys(constraints).length ? { constraints } : {}),
  };
}

async function password(ctx: Context, o: Record<string, unknown>): Promise<string> {
  const p = (o.password as string | undefined) ?? (await readStdin(ctx)).replace(/\r?\n$/, '');
  if (!p) throw new UsageError('give the password with --password or on stdin');
  return p;
}

/** `spaces access …`: grants, share links, password and machine credentials, logout-all. */
export const accessActions: Record<string, Action> = {
  async 'access.grants'(ctx) {
    const r = await unwrap(
      ctx.api.GET('/v1/spaces/{spaceId}/grants', { params: { path: { spaceId: ctx.spaceRef() } } }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((g) => [g.id, g.audience.type, g.role, g.target, g.paths.join(' '), String(g.uses)]),
            ['ID', 'AUDIENCE', 'ROLE', 'TARGET', 'PATHS', 'USES'],
          )
        : 'No grants beyond the space’s own access.',
    );
  },

  async 'access.grant'(ctx, [who], o) {
    const audience =
      who === 'public' || who === 'team'
        ? { type: who as 'public' | 'team' }
        : who?.includes('@')
          ? { type: 'person' as const, email: who }
          : who?.startsWith('usr_')
            ? { type: 'person' as const, userId: who }
            : null;
    if (!audience) throw new UsageError('audience: public, team, an e-mail address or a user id (usr_…)');
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/grants', {
        params: { path: { spaceId: ctx.spaceRef() } },
        body: { audience, ...(o.role ? { role: o.role as 'viewer' } : {}), ...scopeOf(o) },
      }),
    );
    ctx.result(
      r.data,
      () => `Added grant ${r.data.id}: ${r.data.role} for ${who} on ${r.data.paths.join(' ')}.`,
    );
  },

  async 'access.revoke'(ctx, [id]) {
    await unwrap(
      ctx.api.DELETE('/v1/spaces/{spaceId}/grants/{grantId}', {
        params: { path: { spaceId: ctx.spaceRef(), grantId: id! } },
      }),
    );
    ctx.result({ id, revoked: true }, () => `Revoked grant ${id}.`);
  },

  async 'access.check'(ctx, [url], o) {
    const query: Record<string, string> & { url: string } = { url: url! };
    for (const k of ['email', 'ip', 'country', 'capability', 'credential'] as const)
      if (typeof o[k] === 'string') query[k] = o[k] as string;
    if (o.teamMember) query.teamMember = 'true';
    const r = await unwrap(
      ctx.api.GET('/v1/spaces/{spaceId}/grants/check', {
        params: { path: { spaceId: ctx.spaceRef() }, query },
      }),
    );
    ctx.result(r.data, () =>
      r.data.allowed
        ? `Allowed (${r.data.target} ${r.data.path}) through ${r.data.via === 'grant' ? `grant ${r.data.grantId}` : r.data.via}.`
        : `Not allowed (${r.data.target} ${r.data.path}).${r.data.misses.map((m) => `\n  ${m.grantId}: ${m.miss}`).join('')}`,
    );
  },

  async 'access.links'(ctx) {
    const r = await unwrap(
      ctx.api.GET('/v1/spaces/{spaceId}/share-links', { params: { path: { spaceId: ctx.spaceRef() } } }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((l) => [l.id, l.role, l.name ?? '', l.url]),
            ['ID', 'ROLE', 'NAME', 'URL'],
          )
        : 'No share links. `spaces access link` makes one.',
    );
  },

  async 'access.link'(ctx, _args, o) {
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/share-links', {
        params: { path: { spaceId: ctx.spaceRef() } },
        body: {
          ...(o.name ? { name: o.name as string } : {}),
          ...(o.role ? { role: o.role as 'viewer' } : {}),
          ...(o.landing ? { landing: o.landing as string } : {}),
          ...scopeOf(o),
        },
      }),
    );
    ctx.result(r.data, () => `Share link ${r.data.id} (${r.data.role}):\n${r.data.url}`);
  },

  async 'access.unlink'(ctx, [id]) {
    await unwrap(
      ctx.api.DELETE('/v1/spaces/{spaceId}/share-links/{linkId}', {
        params: { path: { spaceId: ctx.spaceRef(), linkId: id! } },
      }),
    );
    ctx.result({ id, revoked: true }, () => `Revoked share link ${id}.`);
  },

  async 'access.credentials'(ctx, [kind]) {
    if (kind !== 'machine' && kind !== 'password') throw new UsageError('kind: machine or password');
    const params = { path: { spaceId: ctx.spaceRef() } };
    const r = await unwrap(
      kind === 'password'
        ? ctx.api.GET('/v1/spaces/{spaceId}/password-credentials', { params })
        : ctx.api.GET('/v1/spaces/{spaceId}/machine-credentials', { params }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((c) => [c.id, c.role, c.name ?? '', c.paths.join(' '), c.lastUsedAt ?? '']),
            ['ID', 'ROLE', 'NAME', 'PATHS', 'LAST USED'],
          )
        : `No ${kind} credentials.`,
    );
  },

  async 'access.machine'(ctx, _args, o) {
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/machine-credentials', {
        params: { path: { spaceId: ctx.spaceRef() } },
        body: {
          ...(o.name ? { name: o.name as string } : {}),
          ...(o.role ? { role: o.role as 'viewer' } : {}),
          ...scopeOf(o),
        },
      }),
    );
    ctx.result(
      r.data,
      () =>
        `Machine credential ${r.data.id} (${r.data.role}).\nToken: ${r.data.token}\nSend it as the X-Spaces-Access-Token header; it is not shown again.`,
    );
  },

  async 'access.password'(ctx, _args, o) {
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/password-credentials', {
        params: { path: { spaceId: ctx.spaceRef() } },
        body: {
          password: await password(ctx, o),
          ...(o.name ? { name: o.name as string } : {}),
          ...(o.role ? { role: o.role as 'viewer' } : {}),
          ...scopeOf(o),
        },
      }),
    );
    ctx.result(
      r.data,
      () => `Password credential ${r.data.id} (${r.data.role}) on ${r.data.paths.join(' ')}.`,
    );
  },

  async 'access.rotate'(ctx, [kind, id], o) {
    if (kind !== 'machine' && kind !== 'password') throw new UsageError('kind: machine or password');
    const params = { path: { spaceId: ctx.spaceRef(), credentialId: id! } };
    const r =
      kind === 'password'
        ? await unwrap(
            ctx.api.POST('/v1/spaces/{spaceId}/password-credentials/{credentialId}/rotate', {
              params,
              body: { password: await password(ctx, o) },
            }),
          )
        : await unwrap(
            ctx.api.POST('/v1/spaces/{spaceId}/machine-credentials/{credentialId}/rotate', {
              params,
              body: {},
            }),
          );
    ctx.result(r.data, () =>
      kind === 'machine'
        ? `New token: ${'token' in r.data ? r.data.token : ''}\nThe old one no longer works; it is not shown again.`
        : 'Password changed; every visitor session it started has ended.',
    );
  },

  async 'access.rm'(ctx, [kind, id]) {
    if (kind !== 'machine' && kind !== 'password') throw new UsageError('kind: machine or password');
    await confirm(ctx, `Revoke ${kind} credential ${id}?`);
    const params = { path: { spaceId: ctx.spaceRef(), credentialId: id! } };
    await unwrap(
      kind === 'password'
        ? ctx.api.DELETE('/v1/spaces/{spaceId}/password-credentials/{credentialId}', { params })
        : ctx.api.DELETE('/v1/spaces/{spaceId}/machine-credentials/{credentialId}', { params }),
    );
    ctx.result({ id, revoked: true }, () => `Revoked ${kind} credential ${id}.`);
  },

  async 'access.logout-all'(ctx) {
    await confirm(ctx, 'End every visitor session of this space?');
    const r = await unwrap(
      ctx.api.POST('/v1/spaces/{spaceId}/sharing/logout-all', {
        params: { path: { spaceId: ctx.spaceRef() } },
      }),
    );
    ctx.result(r.data, () => 'Every visitor session has ended.');
  },
};
