import type { Static } from '@sinclair/typebox';
import type { GrantCheckResponse, GrantListResponse, GrantResponse } from '../../schemas/access.ts';
import type {
  CredentialListResponse,
  CredentialWithTokenResponse,
  ShareLinkListResponse,
  ShareLinkResponse,
} from '../../schemas/sharing.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../http.ts';
import type { Action } from '../program.ts';
import { confirm, enc, readStdin, table } from './shared.ts';

const base = (ctx: Context) => `/v1/spaces/${enc(ctx.spaceRef())}`;
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
    const r = await ctx.client.request<Static<typeof GrantListResponse>>('GET', `${base(ctx)}/grants`);
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
        ? { type: who }
        : who?.includes('@')
          ? { type: 'person', email: who }
          : who?.startsWith('usr_')
            ? { type: 'person', userId: who }
            : null;
    if (!audience) throw new UsageError('audience: public, team, an e-mail address or a user id (usr_…)');
    const r = await ctx.client.request<Static<typeof GrantResponse>>('POST', `${base(ctx)}/grants`, {
      body: { audience, ...(o.role ? { role: o.role } : {}), ...scopeOf(o) },
    });
    ctx.result(
      r.data,
      () => `Added grant ${r.data.id}: ${r.data.role} for ${who} on ${r.data.paths.join(' ')}.`,
    );
  },

  async 'access.revoke'(ctx, [id]) {
    await ctx.client.request('DELETE', `${base(ctx)}/grants/${enc(id!)}`);
    ctx.result({ id, revoked: true }, () => `Revoked grant ${id}.`);
  },

  async 'access.check'(ctx, [url], o) {
    const query: Record<string, string> = { url: url! };
    for (const k of ['email', 'ip', 'country', 'capability', 'credential'] as const)
      if (typeof o[k] === 'string') query[k] = o[k] as string;
    if (o.teamMember) query.teamMember = 'true';
    const r = await ctx.client.request<Static<typeof GrantCheckResponse>>(
      'GET',
      `${base(ctx)}/grants/check`,
      {
        query,
      },
    );
    ctx.result(r.data, () =>
      r.data.allowed
        ? `Allowed (${r.data.target} ${r.data.path}) through ${r.data.via === 'grant' ? `grant ${r.data.grantId}` : r.data.via}.`
        : `Not allowed (${r.data.target} ${r.data.path}).${r.data.misses.map((m) => `\n  ${m.grantId}: ${m.miss}`).join('')}`,
    );
  },

  async 'access.links'(ctx) {
    const r = await ctx.client.request<Static<typeof ShareLinkListResponse>>(
      'GET',
      `${base(ctx)}/share-links`,
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
    const r = await ctx.client.request<Static<typeof ShareLinkResponse>>('POST', `${base(ctx)}/share-links`, {
      body: {
        ...(o.name ? { name: o.name } : {}),
        ...(o.role ? { role: o.role } : {}),
        ...(o.landing ? { landing: o.landing } : {}),
        ...scopeOf(o),
      },
    });
    ctx.result(r.data, () => `Share link ${r.data.id} (${r.data.role}):\n${r.data.url}`);
  },

  async 'access.unlink'(ctx, [id]) {
    await ctx.client.request('DELETE', `${base(ctx)}/share-links/${enc(id!)}`);
    ctx.result({ id, revoked: true }, () => `Revoked share link ${id}.`);
  },

  async 'access.credentials'(ctx, [kind]) {
    const r = await ctx.client.request<Static<typeof CredentialListResponse>>(
      'GET',
      `${base(ctx)}/${kind}-credentials`,
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
    const r = await ctx.client.request<Static<typeof CredentialWithTokenResponse>>(
      'POST',
      `${base(ctx)}/machine-credentials`,
      { body: { ...(o.name ? { name: o.name } : {}), ...(o.role ? { role: o.role } : {}), ...scopeOf(o) } },
    );
    ctx.result(
      r.data,
      () =>
        `Machine credential ${r.data.id} (${r.data.role}).\nToken: ${r.data.token}\nSend it as the X-Spaces-Access-Token header; it is not shown again.`,
    );
  },

  async 'access.password'(ctx, _args, o) {
    const r = await ctx.client.request<Static<typeof CredentialWithTokenResponse>>(
      'POST',
      `${base(ctx)}/password-credentials`,
      {
        body: {
          password: await password(ctx, o),
          ...(o.name ? { name: o.name } : {}),
          ...(o.role ? { role: o.role } : {}),
          ...scopeOf(o),
        },
      },
    );
    ctx.result(
      r.data,
      () => `Password credential ${r.data.id} (${r.data.role}) on ${r.data.paths.join(' ')}.`,
    );
  },

  async 'access.rotate'(ctx, [kind, id], o) {
    if (kind !== 'machine' && kind !== 'password') throw new UsageError('kind: machine or password');
    const r = await ctx.client.request<Static<typeof CredentialWithTokenResponse>>(
      'POST',
      `${base(ctx)}/${kind}-credentials/${enc(id!)}/rotate`,
      { body: kind === 'password' ? { password: await password(ctx, o) } : {} },
    );
    ctx.result(r.data, () =>
      kind === 'machine'
        ? `New token: ${r.data.token}\nThe old one no longer works; it is not shown again.`
        : 'Password changed; every visitor session it started has ended.',
    );
  },

  async 'access.rm'(ctx, [kind, id]) {
    if (kind !== 'machine' && kind !== 'password') throw new UsageError('kind: machine or password');
    await confirm(ctx, `Revoke ${kind} credential ${id}?`);
    await ctx.client.request('DELETE', `${base(ctx)}/${kind}-credentials/${enc(id!)}`);
    ctx.result({ id, revoked: true }, () => `Revoked ${kind} credential ${id}.`);
  },

  async 'access.logout-all'(ctx) {
    await confirm(ctx, 'End every visitor session of this space?');
    const r = await ctx.client.request<{ data: { epoch: number } }>(
      'POST',
      `${base(ctx)}/sharing/logout-all`,
    );
    ctx.result(r.data, () => 'Every visitor session has ended.');
  },
};
