import type { Static } from '@sinclair/typebox';
import type {
  CreateInvitationBody,
  CreateTeamBody,
  InvitationResponse,
  MemberListResponse,
  TeamCreateResponse,
  TeamListResponse,
} from '../../schemas/teams.ts';
import { UsageError } from '../http.ts';
import type { Action } from '../program.ts';
import type { Access } from '../publish.ts';
import { ACCESS_LABEL } from '../publish-report.ts';
import { enc, table } from './shared.ts';

/** Teams: list, create, members, invitations. */
export const teamActions: Record<string, Action> = {
  async 'teams.ls'(ctx) {
    ctx.requireToken();
    const r = await ctx.client.request<Static<typeof TeamListResponse>>('GET', '/v1/teams', {
      query: { limit: 100 },
    });
    const cur = ctx.team;
    ctx.result(r.data, () =>
      table(
        r.data.map((t) => [t.slug === cur || t.id === cur ? '*' : ' ', t.slug, t.id, t.role, t.name]),
        [' ', 'SLUG', 'ID', 'ROLE', 'NAME'],
      ),
    );
  },

  async 'teams.create'(ctx, [name], o) {
    ctx.requireToken();
    const body: Static<typeof CreateTeamBody> = {
      name: name!,
      ...(o.slug ? { slug: o.slug as string } : {}),
    };
    const r = await ctx.client.request<Static<typeof TeamCreateResponse>>('POST', '/v1/teams', { body });
    ctx.result(
      r.data,
      () =>
        `Created team ${r.data.slug} (${r.data.id}). \`spaces switch ${r.data.slug}\` makes it the default.`,
    );
  },

  async 'teams.members'(ctx, [team]) {
    ctx.requireToken();
    const t = team ?? ctx.team;
    if (!t) throw new UsageError('Which team? Pass it, or --team, or `spaces switch TEAM`.');
    const r = await ctx.client.request<Static<typeof MemberListResponse>>(
      'GET',
      `/v1/teams/${enc(t)}/members`,
      { query: { limit: 100 } },
    );
    ctx.result(r.data, () =>
      table(r.data.map((m) => Object.values(m).filter((v) => typeof v === 'string') as string[])),
    );
  },

  async 'teams.invite'(ctx, [email], o) {
    ctx.requireToken();
    const t = ctx.team;
    if (!t) throw new UsageError('Which team? Pass --team or run `spaces switch TEAM`.');
    const body: Static<typeof CreateInvitationBody> = { email: email!, role: o.role as 'member' };
    const r = await ctx.client.request<Static<typeof InvitationResponse>>(
      'POST',
      `/v1/teams/${enc(t)}/invitations`,
      { body },
    );
    ctx.result(r.data, () => `Invited ${email} to ${t} as ${o.role}.`);
  },

  async 'teams.set-default-access'(ctx, [access]) {
    ctx.requireToken();
    const t = ctx.team;
    if (!t) throw new UsageError('Which team? Pass --team or run `spaces switch TEAM`.');
    const r = await ctx.client.request<{ data: { slug: string; defaultAccess?: Access } }>(
      'PATCH',
      `/v1/teams/${enc(t)}`,
      { body: { defaultAccess: access } },
    );
    const now = r.data.defaultAccess ?? (access as Access);
    ctx.result(
      r.data,
      () =>
        `New spaces of ${r.data.slug} are now ${ACCESS_LABEL[now]} by default. Existing spaces keep their access; \`spaces publish --access ${now}\` changes one.`,
    );
  },
};
