import type { Static } from '@sinclair/typebox';
import type { ClaimResponse } from '../../schemas/anonymous.ts';
import type { PutVariableBody, VariableListResponse, VariableResponse } from '../../schemas/publishing.ts';
import type {
  CreateSpaceBody,
  SpaceCreateResponse,
  SpaceListResponse,
  SpaceOperationResponse,
} from '../../schemas/spaces.ts';
import { UsageError } from '../http.ts';
import type { Action } from '../program.ts';
import { ACCESS_LABEL } from '../publish-report.ts';
import { confirm, enc, readStdin, space, table } from './shared.ts';

/** Spaces (list, create, rename, delete, claim) and their variables. */
export const spaceActions: Record<string, Action> = {
  async 'spaces.ls'(ctx, _a, o) {
    ctx.requireToken();
    const r = await ctx.client.request<Static<typeof SpaceListResponse>>('GET', '/v1/spaces', {
      query: {
        limit: Number(o.limit),
        team: ctx.opts.team ?? ctx.io.env.SPACES_TEAM,
        ...(o.sort ? { sort: String(o.sort) } : {}),
        ...(o.search ? { q: String(o.search) } : {}),
      },
    });
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
    const body: Static<typeof CreateSpaceBody> = {
      teamId: ctx.team,
      slug: o.slug as string | undefined,
      title: o.name as string | undefined,
      ...(o.access ? { access: o.access as Static<typeof CreateSpaceBody>['access'] } : {}),
    };
    const r = await ctx.client.request<Static<typeof SpaceCreateResponse>>('POST', '/v1/spaces', { body });
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
    const r = await ctx.spaceClient.request<Static<typeof SpaceOperationResponse>>(
      'POST',
      `/v1/spaces/${enc(ref)}/rename`,
      { body: { slug } },
    );
    const s = r.data.space;
    const linked = ctx.linked;
    if (linked?.spaceId === s.id) ctx.state.write({ ...linked, slug: s.slug, liveUrl: s.liveUrl });
    ctx.result(r.data, () => `Renamed to ${s.slug}: ${s.liveUrl}`);
  },

  async 'spaces.rm'(ctx, [ref]) {
    const s = await space(ctx, ref);
    await confirm(ctx, `Delete space ${s.slug} (${s.liveUrl})?`);
    const r = await ctx.spaceClient.request<Static<typeof SpaceOperationResponse>>(
      'DELETE',
      `/v1/spaces/${enc(s.id)}`,
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
    const r = await ctx.clientWith(token).request<Static<typeof ClaimResponse>>('POST', '/v1/claim', {
      body: { key, ...(ctx.team ? { team: ctx.team } : {}) },
    });
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
    const r = await ctx.spaceClient.request<Static<typeof VariableListResponse>>(
      'GET',
      `/v1/spaces/${enc(ctx.spaceRef())}/variables`,
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(r.data.map((v) => [v.name, v.secret ? '(secret)' : (v.value ?? '')]))
        : 'No variables.',
    );
  },

  async 'vars.set'(ctx, [name, value], o) {
    const ref = enc(ctx.spaceRef());
    let v = value;
    if (v === undefined) {
      if (ctx.io.stdin.isTTY) ctx.err(`Value for ${name} (not echoed; end with Ctrl-D):`);
      v = (await readStdin(ctx)).replace(/\r?\n$/, '');
    }
    const body: Static<typeof PutVariableBody> = { value: v, secret: Boolean(o.secret) };
    const r = await ctx.spaceClient.request<Static<typeof VariableResponse>>(
      'PUT',
      `/v1/spaces/${ref}/variables/${enc(name!)}`,
      { body },
    );
    ctx.result(r.data, () => `Set ${name}${r.data.secret ? ' (secret)' : ''}.`);
  },

  async 'vars.rm'(ctx, [name]) {
    await ctx.spaceClient.request('DELETE', `/v1/spaces/${enc(ctx.spaceRef())}/variables/${enc(name!)}`);
    ctx.result({ name, deleted: true }, () => `Deleted ${name}.`);
  },
};
