import type { Static } from '@sinclair/typebox';
import type { AccountResponse, CreateApiKeyBody } from '../../schemas/account.ts';
import { SpacesProblem, unwrap } from '../../sdk/index.ts';
import { expiryOf } from '../credentials.ts';
import { deviceLogin, revokeToken } from '../device.ts';
import { browserLogin } from '../login.ts';
import type { TokenSet } from '../oauth-form.ts';
import type { Action } from '../program.ts';
import { canOpenBrowser, openBrowser, table } from './shared.ts';

/** `3600` → `1 hour`, `5400` → `90 minutes`. */
function duration(seconds: number): string {
  const minutes = Math.round(seconds / 60);
  if (minutes % 60 === 0) return minutes === 60 ? '1 hour' : `${minutes / 60} hours`;
  return `${minutes} minutes`;
}

/** login, logout, whoami, status, switch, profiles and API keys. */
export const accountActions: Record<string, Action> = {
  async login(ctx, _args, o) {
    let tokens: TokenSet;
    let method: 'api_key' | 'browser' | 'device';
    if (ctx.opts.token) {
      tokens = { accessToken: ctx.opts.token };
      method = 'api_key';
    } else {
      const browser = o.browser !== false && canOpenBrowser(ctx.io.env);
      method = o.device ? 'device' : 'browser';
      tokens = await (o.device ? deviceLogin : browserLogin)(ctx, { browser, open: openBrowser });
    }
    const token = tokens.accessToken;
    const me = (await unwrap(ctx.apiWith(token).GET('/v1/account'))).data;
    const name = ctx.profileName;
    const expiresAt = expiryOf(tokens.expiresIn);
    ctx.configStore.update((c) => {
      const prev = c.profiles[name];
      c.profiles[name] = {
        apiUrl: ctx.apiUrl,
        token,
        tokenKind: method === 'api_key' ? 'api_key' : 'oauth',
        ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        ...(expiresAt ? { expiresAt } : {}),
        team: prev?.apiUrl === ctx.apiUrl ? (prev.team ?? me.teams[0]?.slug) : me.teams[0]?.slug,
        user: me.user?.email ?? me.credential.id,
      };
      c.currentProfile ??= name;
    });
    const lasts =
      method === 'device' && tokens.expiresIn
        ? [
            `This login lasts ${duration(tokens.expiresIn)} (a device login gets no refresh token); then run \`spaces login\` again.`,
            'For CI and scripts use an API key instead: SPACES_TOKEN=sfa_… (`spaces docs teams-and-api-keys` says how to make one).',
          ]
        : tokens.refreshToken
          ? ['The login renews itself as long as you use it at least once every 30 days.']
          : [];
    ctx.result(
      {
        profile: name,
        apiUrl: ctx.apiUrl,
        method,
        expiresAt: expiresAt ?? null,
        renews: Boolean(tokens.refreshToken),
        user: me.user,
        teams: me.teams,
        credential: me.credential,
      },
      () =>
        [
          `Logged in to ${ctx.apiUrl} as ${me.user?.email ?? me.credential.id} (profile "${name}"). Stored in ${ctx.configStore.file}.`,
          ...lasts,
        ].join('\n'),
    );
  },

  async logout(ctx) {
    const name = ctx.profileName;
    const p = ctx.profile;
    if (!p?.token) {
      ctx.result({ profile: name, loggedOut: false }, () => `Not logged in (profile "${name}").`);
      return;
    }
    let revoked = false;
    // Revoking the refresh token ends the whole login (every access token it gave out too).
    if (p.tokenKind === 'oauth') revoked = await revokeToken(p.apiUrl, p.refreshToken ?? p.token);
    ctx.configStore.update((c) => {
      const cur = c.profiles[name];
      if (cur) {
        delete cur.token;
        delete cur.refreshToken;
        delete cur.expiresAt;
        delete cur.tokenKind;
        delete cur.user;
      }
    });
    ctx.result(
      { profile: name, loggedOut: true, revoked },
      () => `Logged out of ${p.apiUrl} (profile "${name}")${revoked ? '; the login is revoked' : ''}.`,
    );
  },

  async whoami(ctx) {
    ctx.requireToken();
    const me = (await unwrap(ctx.api.GET('/v1/account'))).data;
    ctx.result(me, () =>
      [
        `${me.user ? `${me.user.email}` : `credential ${me.credential.id}`} on ${ctx.apiUrl}`,
        `  credential: ${me.credential.kind} ${me.credential.id} (${me.credential.scopes.join(', ')})`,
        `  teams: ${me.teams.map((t) => `${t.slug} (${t.role})`).join(', ') || 'none'}`,
      ].join('\n'),
    );
  },

  async status(ctx) {
    const linked = ctx.linked;
    let account: Static<typeof AccountResponse>['data'] | null = null;
    let problem: string | null = null;
    if (ctx.token) {
      try {
        account = (await unwrap(ctx.api.GET('/v1/account'))).data;
      } catch (err) {
        if (!(err instanceof SpacesProblem)) throw err;
        problem = `${err.problem.code}: ${err.problem.detail}`;
      }
    }
    const out = {
      profile: ctx.profileName,
      apiUrl: ctx.apiUrl,
      loggedIn: Boolean(account),
      user: account?.user?.email ?? null,
      team: ctx.team ?? null,
      linked: linked
        ? {
            spaceId: linked.spaceId,
            slug: linked.slug,
            liveUrl: linked.liveUrl,
            anonymous: Boolean(linked.spaceKey),
            claimUrl: linked.claimUrl ?? null,
            expiresAt: linked.expiresAt ?? null,
          }
        : null,
      problem,
    };
    ctx.result(out, () =>
      [
        `Profile:  ${out.profile}`,
        `API:      ${out.apiUrl}`,
        `Account:  ${out.user ?? (account ? account.credential.id : problem ? `credential refused (${problem})` : 'not logged in')}`,
        `Team:     ${out.team ?? '-'}`,
        `Linked:   ${linked ? `${linked.slug} (${linked.spaceId}) ${linked.liveUrl}` : 'no space linked here'}`,
        ...(linked?.spaceKey
          ? [
              ...(linked.openUrl ? [`Open:     ${linked.openUrl}`] : []),
              `Claim:    ${linked.claimUrl ?? ''}${linked.expiresAt ? ` (expires ${linked.expiresAt})` : ''}`,
            ]
          : []),
      ].join('\n'),
    );
  },

  async switch(ctx, [team]) {
    ctx.requireToken();
    const t = (await unwrap(ctx.api.GET('/v1/teams/{teamId}', { params: { path: { teamId: team! } } }))).data;
    const name = ctx.profileName;
    ctx.configStore.update((c) => {
      c.profiles[name] = { ...(c.profiles[name] ?? { apiUrl: ctx.apiUrl }), team: t.slug };
    });
    ctx.result(
      { profile: name, team: { id: t.id, slug: t.slug, name: t.name } },
      () => `Default team of profile "${name}" is now ${t.slug}.`,
    );
  },

  async profiles(ctx) {
    const c = ctx.configStore.read();
    const current = ctx.profileName;
    const list = Object.entries(c.profiles).map(([name, p]) => ({
      name,
      current: name === current,
      apiUrl: p.apiUrl,
      user: p.user ?? null,
      team: p.team ?? null,
      loggedIn: Boolean(p.token),
    }));
    ctx.result(list, () =>
      list.length === 0
        ? 'No profiles yet. `spaces login` creates one (`--profile NAME --api-url URL` for more servers).'
        : table(
            list.map((p) => [p.current ? '*' : ' ', p.name, p.apiUrl, p.user ?? '-', p.team ?? '-']),
            [' ', 'PROFILE', 'API', 'USER', 'TEAM'],
          ),
    );
  },

  async 'api-keys.create'(ctx, [name], o) {
    ctx.requireToken();
    const body = {
      name: name!,
      ...(ctx.team ? { team: ctx.team } : {}),
      ...(o.preset ? { preset: o.preset } : {}),
      ...(o.expiresAt ? { expiresAt: o.expiresAt } : {}),
    } as Static<typeof CreateApiKeyBody>;
    const r = await unwrap(ctx.api.POST('/v1/account/api-keys', { body }));
    ctx.result(
      r.data,
      () =>
        `${r.data.token}\n\nCreated key ${r.data.id} (${r.data.preset}). This is the only time it is shown.`,
    );
  },

  async 'api-keys.ls'(ctx) {
    ctx.requireToken();
    const r = await unwrap(ctx.api.GET('/v1/account/api-keys', { params: { query: { limit: 100 } } }));
    ctx.result(r.data, () =>
      table(
        r.data.map((k) => [
          k.id,
          k.name,
          k.preset,
          `…${k.hint}`,
          k.revokedAt ? 'revoked' : (k.expiresAt ?? 'no expiry'),
        ]),
        ['ID', 'NAME', 'PRESET', 'ENDS', 'EXPIRES'],
      ),
    );
  },

  async 'api-keys.revoke'(ctx, [id]) {
    ctx.requireToken();
    await unwrap(ctx.api.DELETE('/v1/account/api-keys/{keyId}', { params: { path: { keyId: id! } } }));
    ctx.result({ id, revoked: true }, () => `Revoked ${id}.`);
  },
};
