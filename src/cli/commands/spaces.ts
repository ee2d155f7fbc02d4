import type { Static } from '@sinclair/typebox';
import type { PutVariableBody } from '../../schemas/publishing.ts';
import { type RequestBody, unwrap } from '../../sdk/index.ts';
import { UsageError } from '../errors.ts';
import type { Action } from '../program.ts';
import { ACCESS_LABEL } from '../publish-report.ts';
import { confirm, readStdin, space, table } from './shared.ts';

/** Spaces (list, create, rename, delete, claim) and their variables. */
export const spaceActions: Record<string, Action> = {
  async 'spaces.ls'(ctx, _a, o) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.GET('/v1/spaces', {
        params: {
          query: {
            limit: Number(o.limit),
            team: ctx.opts.team ?? ctx.io.env.SPACES_TEAM,
            ...(o.sort ? { sort: String(o.sort) as 'name' } : {}),
            ...(o.search ? { q: String(o.search) } : {}),
          },
        },
      }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((s) => [
              s.slug,
              s.id,
              s.teamSlug ?? '-',
              s.channels.live ? 'live' : 'empty',
              s.liveUrl,
            ]),
            ['SLUG', 'ID', 'TEAM', 'STATE', 'URL'],
          )
        : 'No spaces.',
    );
  },

  async 'spaces.create'(ctx, _a, o) {
    ctx.requireToken();
    const body: RequestBody<'/v1/spaces', 'post'> = {
      teamId: ctx.team,
      slug: o.slug as string | undefined,
      title: o.name as string | undefined,
      ...(o.access ? { access: o.access as RequestBody<'/v1/spaces', 'post'>['access'] } : {}),
    };
    const r = await unwrap(ctx.api.POST('/v1/spaces', { body }));
    const s = r.data.space;
    if (o.link)
      ctx.state.write({
        apiUrl: ctx.apiUrl,
        spaceId: s.id,
        slug: s.slug,
        liveUrl: s.liveUrl,
        teamId: s.teamId,
      });
    ctx.result(
      r.data,
      () =>
        `Created ${s.slug} (${s.id}), ${ACCESS_LABEL[r.data.access]}: ${s.liveUrl}${o.link ? ' — linked here' : ''}`,
    );
  },

  async 'spaces.rename'(ctx, [slug]) {
    const ref = ctx.spaceRef();
    const r = await unwrap(
      ctx.spaceApi.POST('/v1/spaces/{spaceId}/rename', {
        params: { path: { spaceId: ref } },
        body: { slug },
      }),
    );
    const s = r.data.space;
    const linked = ctx.linked;
    if (linked?.spaceId === s.id) ctx.state.write({ ...linked, slug: s.slug, liveUrl: s.liveUrl });
    ctx.result(r.data, () => `Renamed to ${s.slug}: ${s.liveUrl}`);
  },

  async 'spaces.rm'(ctx, [ref]) {
    const s = await space(ctx, ref);
    await confirm(ctx, `Delete space ${s.slug} (${s.liveUrl})?`);
    const r = await unwrap(
      ctx.spaceApi.DELETE('/v1/spaces/{spaceId}', { params: { path: { spaceId: s.id } } }),
    );
    if (ctx.linked?.spaceId === s.id) ctx.state.clear();
    ctx.result(r.data, () => `Deleted ${s.slug}.`);
  },

  async 'spaces.claim'(ctx, _a, o) {
    const token = ctx.requireToken();
    const linked = ctx.linked;
    const key = (o.key as string | undefined) ?? linked?.spaceKey;
    if (!key)
      throw new UsageError(
        'No space key here: pass --key sfc_… (from the claim link) or run this where you published.',
      );
    const r = await unwrap(
      ctx.apiWith(token).POST('/v1/claim', { body: { key, ...(ctx.team ? { team: ctx.team } : {}) } }),
    );
    const s = r.data.space;
    if (linked && (linked.spaceKey === key || linked.spaceId === s.id)) {
      ctx.state.write({
        apiUrl: linked.apiUrl,
        spaceId: s.id,
        slug: s.slug,
        liveUrl: s.liveUrl,
        teamId: s.teamId,
      });
    }
    ctx.result(r.data, () => `Claimed ${s.slug} into ${s.teamSlug ?? 'your team'}: ${s.liveUrl}`);
  },

  async 'vars.ls'(ctx) {
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/variables', { params: { path: { spaceId: ctx.spaceRef() } } }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(r.data.map((v) => [v.name, v.secret ? '(secret)' : (v.value ?? '')]))
        : 'No variables.',
    );
  },

  async 'vars.set'(ctx, [name, value], o) {
    const ref = ctx.spaceRef();
    let v = value;
    if (v === undefined) {
      if (ctx.io.stdin.isTTY) ctx.err(`Value for ${name} (not echoed; end with Ctrl-D):`);
      v = (await readStdin(ctx)).replace(/\r?\n$/, '');
    }
    const body: Static<typeof PutVariableBody> = { value: v, secret: Boolean(o.secret) };
    const r = await unwrap(
      ctx.spaceApi.PUT('/v1/spaces/{spaceId}/variables/{name}', {
        params: { path: { spaceId: ref, name: name! } },
        body,
      }),
    );
    ctx.result(r.data, () => `Set ${name}${r.data.secret ? ' (secret)' : ''}.`);
  },

  async 'vars.rm'(ctx, [name]) {
    await unwrap(
      ctx.spaceApi.DELETE('/v1/spaces/{spaceId}/variables/{name}', {
        params: { path: { spaceId: ctx.spaceRef(), name: name! } },
      }),
    );
    ctx.result({ name, deleted: true }, () => `Deleted ${name}.`);
  },
};
