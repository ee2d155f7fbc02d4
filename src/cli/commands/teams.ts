import type { Static } from '@sinclair/typebox';
import type { CreateInvitationBody, CreateTeamBody } from '../../schemas/teams.ts';
import { unwrap } from '../../sdk/index.ts';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import type { Access } from '../publish.ts';
import { ACCESS_LABEL } from '../publish-report.ts';
import { table } from './shared.ts';

/** Teams: list, create, members, invitations. */
export const teamActions: Record<string, Action> = {
  async 'teams.ls'(ctx) {
    ctx.requireToken();
    const r = await unwrap(ctx.api.GET('/v1/teams', { params: { query: { limit: 100 } } }));
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
    const r = await unwrap(ctx.api.POST('/v1/teams', { body }));
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
    const r = await unwrap(
      ctx.api.GET('/v1/teams/{teamId}/members', { params: { path: { teamId: t }, query: { limit: 100 } } }),
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
    const r = await unwrap(
      ctx.api.POST('/v1/teams/{teamId}/invitations', { params: { path: { teamId: t } }, body }),
    );
    ctx.result(r.data, () => `Invited ${email} to ${t} as ${o.role}.`);
  },

  async 'teams.set-default-access'(ctx, [access]) {
    ctx.requireToken();
    const t = ctx.team;
    if (!t) throw new UsageError('Which team? Pass --team or run `spaces switch TEAM`.');
    const r = await unwrap(
      ctx.api.PATCH('/v1/teams/{teamId}', {
        params: { path: { teamId: t } },
        body: { defaultAccess: access as 'team' },
      }),
    );
    const now = r.data.defaultAccess ?? (access as Access);
    ctx.result(
      r.data,
      () =>
        `New spaces of ${r.data.slug} are now ${ACCESS_LABEL[now]} by default. Existing spaces keep their access; \`spaces publish --access ${now}\` changes one.`,
    );
  },
};
