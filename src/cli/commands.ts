import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Static } from '@sinclair/typebox';
import type {
  AccountResponse,
  ApiKeyCreatedResponse,
  ApiKeyListResponse,
  CreateApiKeyBody,
} from '../schemas/account.ts';
import type { ClaimResponse } from '../schemas/anonymous.ts';
import type {
  ChannelHistoryResponse,
  ChannelListResponse,
  PromoteResponse,
  PutVariableBody,
  VariableListResponse,
  VariableResponse,
  Version,
  VersionDiffResponse,
  VersionFile,
  VersionListResponse,
  VersionResponse,
} from '../schemas/publishing.ts';
import type {
  OperationListResponse,
  SpaceCreateResponse,
  SpaceListResponse,
  SpaceOperationResponse,
  SpaceResponse,
} from '../schemas/spaces.ts';
import type {
  CreateInvitationBody,
  CreateTeamBody,
  InvitationResponse,
  MemberListResponse,
  TeamCreateResponse,
  TeamDetailResponse,
  TeamListResponse,
} from '../schemas/teams.ts';
import { completionScript } from './completion.ts';
import type { Context } from './context.ts';
import { deviceLogin, revokeToken } from './device.ts';
import { safeRelative } from './files.ts';
import { ApiProblem, UsageError } from './http.ts';
import { type Action, definitions } from './program.ts';
import { type PublishOptions, publish } from './publish.ts';

type VersionT = Static<typeof Version>;
const enc = encodeURIComponent;

function table(rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

function versionLine(v: VersionT): string[] {
  return [
    `v${v.number}`,
    v.id,
    v.status,
    v.target,
    v.channels.join(',') || '-',
    String(v.fileCount),
    v.createdAt,
    v.message ?? '',
  ];
}

async function readStdin(ctx: Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.io.stdin) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function space(ctx: Context, ref?: string) {
  const r = await ctx.spaceClient.request<Static<typeof SpaceResponse>>(
    'GET',
    `/v1/spaces/${enc(ctx.spaceRef(ref))}`,
  );
  return r.data.space;
}

function openBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const args = process.platform === 'win32' ? ['/c', 'start', '', url] : [url];
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no browser: the URL was printed
  }
}

async function confirm(ctx: Context, question: string): Promise<void> {
  if (ctx.opts.yes) return;
  if (!ctx.io.stdin.isTTY || ctx.json) {
    throw new UsageError(`${question} Pass --yes to confirm when not at a terminal.`);
  }
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr });
  const answer = await rl.question(`${question} [y/N] `);
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('Cancelled.');
}

/** `rollback` without a version: the version the channel pointed at before its current one. */
async function previousVersion(ctx: Context, spaceId: string, channel: string): Promise<string> {
  const current = (
    await ctx.spaceClient.request<Static<typeof ChannelListResponse>>(
      'GET',
      `/v1/spaces/${enc(spaceId)}/channels`,
    )
  ).data.find((c) => c.name === channel);
  if (!current) throw new UsageError(`Channel "${channel}" points at nothing yet.`);
  for await (const move of ctx.spaceClient.paginate<Static<typeof ChannelHistoryResponse>['data'][number]>(
    `/v1/spaces/${enc(spaceId)}/channels/${enc(channel)}/history`,
  )) {
    if (
      move.versionId === current.versionId &&
      move.previousVersionId &&
      move.previousVersionId !== current.versionId
    ) {
      return move.previousVersionId;
    }
  }
  throw new UsageError(
    `Channel "${channel}" has no earlier version to roll back to; name one: spaces rollback VERSION.`,
  );
}

export const actions: Record<string, Action> = {
  async login(ctx, _args, o) {
    let token = ctx.opts.token;
    let tokenKind: 'api_key' | 'oauth' = 'api_key';
    let refreshToken: string | undefined;
    if (!token) {
      const t = await deviceLogin(ctx, { browser: o.browser !== false, open: openBrowser });
      token = t.accessToken;
      refreshToken = t.refreshToken;
      tokenKind = 'oauth';
    }
    const me = (await ctx.clientWith(token).request<Static<typeof AccountResponse>>('GET', '/v1/account'))
      .data;
    const name = ctx.profileName;
    ctx.configStore.update((c) => {
      const prev = c.profiles[name];
      c.profiles[name] = {
        apiUrl: ctx.apiUrl,
        token,
        tokenKind,
        ...(refreshToken ? { refreshToken } : {}),
        team: prev?.apiUrl === ctx.apiUrl ? (prev.team ?? me.teams[0]?.slug) : me.teams[0]?.slug,
        user: me.user?.email ?? me.credential.id,
      };
      c.currentProfile ??= name;
    });
    ctx.result(
      { profile: name, apiUrl: ctx.apiUrl, user: me.user, teams: me.teams, credential: me.credential },
      () =>
        `Logged in to ${ctx.apiUrl} as ${me.user?.email ?? me.credential.id} (profile "${name}"). Stored in ${ctx.configStore.file}.`,
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
    if (p.tokenKind === 'oauth') revoked = await revokeToken(ctx.clientWith(undefined), p.apiUrl, p.token);
    ctx.configStore.update((c) => {
      const cur = c.profiles[name];
      if (cur) {
        delete cur.token;
        delete cur.refreshToken;
        delete cur.tokenKind;
        delete cur.user;
      }
    });
    ctx.result(
      { profile: name, loggedOut: true, revoked },
      () => `Logged out of ${p.apiUrl} (profile "${name}")${revoked ? '; the token is revoked' : ''}.`,
    );
  },

  async whoami(ctx) {
    ctx.requireToken();
    const me = (await ctx.client.request<Static<typeof AccountResponse>>('GET', '/v1/account')).data;
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
        account = (await ctx.client.request<Static<typeof AccountResponse>>('GET', '/v1/account')).data;
      } catch (err) {
        if (!(err instanceof ApiProblem)) throw err;
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
          ? [`Claim:    ${linked.claimUrl ?? ''}${linked.expiresAt ? ` (expires ${linked.expiresAt})` : ''}`]
          : []),
      ].join('\n'),
    );
  },

  async switch(ctx, [team]) {
    ctx.requireToken();
    const t = (await ctx.client.request<Static<typeof TeamDetailResponse>>('GET', `/v1/teams/${enc(team!)}`))
      .data;
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
        : table(list.map((p) => [p.current ? '*' : ' ', p.name, p.apiUrl, p.user ?? '-', p.team ?? '-'])),
    );
  },

  async publish(ctx, [input], o) {
    await publish(ctx, input, o as PublishOptions);
  },

  async init(ctx, _args, o) {
    const file = path.join(ctx.io.cwd, 'spaces.jsonc');
    if (fs.existsSync(file) && !o.force)
      throw new UsageError('spaces.jsonc exists already; --force overwrites it.');
    const text = `{
  // Settings of this site, checked by the server when you publish. Every key: ${ctx.apiUrl}/schemas/SpaceConfig.json
  "$schema": "${ctx.apiUrl}/schemas/SpaceConfig.json"
  // "cleanUrls": true,
  // "fallback": "/index.html"
}
`;
    fs.writeFileSync(file, text);
    ctx.result({ path: file, schema: `${ctx.apiUrl}/schemas/SpaceConfig.json` }, () => `Wrote ${file}.`);
  },

  async link(ctx, [ref]) {
    const s = await space(ctx, ref);
    const prev = ctx.state.read();
    ctx.state.write({
      apiUrl: ctx.apiUrl,
      spaceId: s.id,
      slug: s.slug,
      liveUrl: s.liveUrl,
      teamId: s.teamId,
      ...(prev?.spaceId === s.id && prev.spaceKey
        ? { spaceKey: prev.spaceKey, claimUrl: prev.claimUrl, expiresAt: prev.expiresAt }
        : {}),
    });
    ctx.result(
      { spaceId: s.id, slug: s.slug, liveUrl: s.liveUrl, state: ctx.state.file },
      () => `Linked ${ctx.io.cwd} to ${s.slug} (${s.liveUrl}).`,
    );
  },

  async unlink(ctx) {
    ctx.state.clear();
    ctx.result({ unlinked: true }, () => 'Unlinked.');
  },

  async inspect(ctx, [ref]) {
    const s = await space(ctx, ref);
    ctx.result(s, () =>
      [
        `${s.title} (${s.slug}, ${s.id})`,
        `  Live:      ${s.liveUrl}`,
        `  Team:      ${s.teamSlug ?? (s.anonymous ? 'anonymous' : '-')}`,
        `  Status:    ${s.status}${s.disabled ? ` (disabled: ${s.disabled.reasonCode})` : ''}`,
        ...Object.entries(s.channels).map(([n, c]) => `  Channel:   ${n} → ${c.versionId} (${c.updatedAt})`),
        ...(s.claimState?.expiresAt ? [`  Expires:   ${s.claimState.expiresAt} unless claimed`] : []),
        `  Settings:  ${s.config ? JSON.stringify(s.config) : 'defaults'}`,
      ].join('\n'),
    );
  },

  async open(ctx, [ref]) {
    const linked = ctx.linked;
    const url =
      !ref && !ctx.opts.space && !ctx.io.env.SPACES_SPACE && linked
        ? linked.liveUrl
        : (await space(ctx, ref)).liveUrl;
    ctx.result({ url }, () => url);
    if (!ctx.json && ctx.io.stdout.isTTY) openBrowser(url);
  },

  async 'versions.ls'(ctx, _a, o) {
    const ref = enc(ctx.spaceRef());
    const r = await ctx.spaceClient.request<Static<typeof VersionListResponse>>(
      'GET',
      `/v1/spaces/${ref}/versions`,
      { query: { limit: Number(o.limit) } },
    );
    ctx.result(r.data, () => (r.data.length ? table(r.data.map(versionLine)) : 'No versions yet.'));
  },

  async 'versions.get'(ctx, [v]) {
    const r = await ctx.spaceClient.request<Static<typeof VersionResponse>>(
      'GET',
      `/v1/spaces/${enc(ctx.spaceRef())}/versions/${enc(v!)}`,
    );
    const x = r.data;
    ctx.result(x, () =>
      [
        `v${x.number} ${x.id} — ${x.status} (${x.target})`,
        `  Files:     ${x.fileCount} (${x.totalBytes} bytes)`,
        `  Channels:  ${x.channels.join(', ') || '-'}`,
        `  URL:       ${x.immutableUrl}`,
        `  Created:   ${x.createdAt}${x.message ? `  “${x.message}”` : ''}`,
        ...x.diagnostics.map((d) => `  ${d.severity}: ${d.code} ${d.path ?? ''} ${d.message}`),
      ].join('\n'),
    );
  },

  async 'versions.rm'(ctx, [v]) {
    const ref = enc(ctx.spaceRef());
    await confirm(ctx, `Delete version ${v}?`);
    const r = await ctx.spaceClient.request<Static<typeof VersionResponse>>(
      'DELETE',
      `/v1/spaces/${ref}/versions/${enc(v!)}`,
    );
    ctx.result(r.data, () => `Deleted v${r.data.number} (${r.data.id}).`);
  },

  async 'versions.files'(ctx, [v]) {
    const ref = enc(ctx.spaceRef());
    const files: Array<Static<typeof VersionFile>> = [];
    for await (const f of ctx.spaceClient.paginate<Static<typeof VersionFile>>(
      `/v1/spaces/${ref}/versions/${enc(v ?? 'latest')}/files`,
    ))
      files.push(f);
    ctx.result(files, () => table(files.map((f) => [String(f.size), f.sha256.slice(0, 12), f.path])));
  },

  async promote(ctx, [v], o) {
    const ref = enc(ctx.spaceRef());
    const r = await ctx.spaceClient.request<Static<typeof PromoteResponse>>(
      'POST',
      `/v1/spaces/${ref}/versions/${enc(v!)}/promote`,
      {
        body: { channel: o.channel as string },
      },
    );
    ctx.result(
      r.data,
      () =>
        `${r.data.channel} → v${r.data.version.number} (${r.data.versionId}); was ${r.data.previousVersionId ?? 'nothing'}.`,
    );
  },

  async rollback(ctx, [v], o) {
    const s = await space(ctx);
    const channel = o.channel as string;
    const target = v ?? (await previousVersion(ctx, s.id, channel));
    const current = s.channels[channel]?.versionId ?? null;
    const r = await ctx.spaceClient.request<Static<typeof PromoteResponse>>(
      'POST',
      `/v1/spaces/${enc(s.id)}/versions/${enc(target)}/promote`,
      {
        body: { channel, expectedVersionId: current },
      },
    );
    ctx.result(
      { ...r.data, liveUrl: s.liveUrl },
      () =>
        `Rolled ${channel} back to v${r.data.version.number} (${r.data.versionId}); was ${r.data.previousVersionId ?? 'nothing'}.\n  Live: ${s.liveUrl}`,
    );
  },

  async 'channels.ls'(ctx) {
    const r = await ctx.spaceClient.request<Static<typeof ChannelListResponse>>(
      'GET',
      `/v1/spaces/${enc(ctx.spaceRef())}/channels`,
    );
    ctx.result(r.data, () =>
      r.data.length ? table(r.data.map((c) => [c.name, c.versionId, c.updatedAt])) : 'No channels yet.',
    );
  },

  async 'channels.history'(ctx, [name], o) {
    const r = await ctx.spaceClient.request<Static<typeof ChannelHistoryResponse>>(
      'GET',
      `/v1/spaces/${enc(ctx.spaceRef())}/channels/${enc(name ?? 'live')}/history`,
      { query: { limit: Number(o.limit) } },
    );
    ctx.result(r.data, () =>
      table(
        r.data.map((m) => [
          m.createdAt,
          m.reason,
          `${m.previousVersionId ?? '-'} → ${m.versionId}`,
          m.actor ?? '',
        ]),
      ),
    );
  },

  async diff(ctx, [from, to]) {
    const r = await ctx.spaceClient.request<Static<typeof VersionDiffResponse>>(
      'GET',
      `/v1/spaces/${enc(ctx.spaceRef())}/versions/${enc(to!)}/diff`,
      {
        query: { against: from },
      },
    );
    const d = r.data;
    ctx.result(d, () =>
      [
        `${d.againstVersionId} → ${d.versionId}: ${d.added.length} added, ${d.changed.length} changed, ${d.removed.length} removed`,
        ...d.added.map((p) => `+ ${p}`),
        ...d.changed.map((p) => `~ ${p}`),
        ...d.removed.map((p) => `- ${p}`),
      ].join('\n'),
    );
  },

  async download(ctx, _a, o) {
    const ref = enc(ctx.spaceRef());
    const out = path.resolve(ctx.io.cwd, o.output as string);
    const res = (await ctx.spaceClient.request(
      'GET',
      `/v1/spaces/${ref}/versions/${enc(o.version as string)}/archive`,
      {
        stream: true,
      },
    )) as Response;
    await fsp.mkdir(out, { recursive: true });
    const written: string[] = [];
    let bytes = 0;
    const { default: tar } = await import('tar-stream');
    const extract = tar.extract();
    const done = new Promise<void>((resolve, reject) => {
      extract.on('entry', (h, stream, next) => {
        const rel = h.type === 'file' ? safeRelative(h.name) : null;
        if (!rel) {
          stream.resume();
          stream.on('end', next);
          return;
        }
        const dest = path.join(out, rel);
        if (!dest.startsWith(out + path.sep)) return reject(new Error(`unsafe path in archive: ${h.name}`));
        fs.mkdirSync(path.dirname(dest), { recursive: true });
        const w = fs.createWriteStream(dest);
        stream.pipe(w);
        w.on('finish', () => {
          written.push(rel);
          bytes += h.size ?? 0;
          next();
        });
        w.on('error', reject);
      });
      extract.on('finish', resolve);
      extract.on('error', reject);
    });
    Readable.fromWeb(res.body as never)
      .pipe(zlib.createGunzip())
      .on('error', (e) => extract.destroy(e))
      .pipe(extract);
    await done;
    ctx.result(
      { output: out, files: written.length, bytes },
      () => `Wrote ${written.length} files (${bytes} bytes) to ${out}.`,
    );
  },

  async 'spaces.ls'(ctx, _a, o) {
    ctx.requireToken();
    const r = await ctx.client.request<Static<typeof SpaceListResponse>>('GET', '/v1/spaces', {
      query: { limit: Number(o.limit), team: ctx.opts.team ?? ctx.io.env.SPACES_TEAM },
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
          )
        : 'No spaces.',
    );
  },

  async 'spaces.create'(ctx, _a, o) {
    ctx.requireToken();
    const r = await ctx.client.request<Static<typeof SpaceCreateResponse>>('POST', '/v1/spaces', {
      body: { teamId: ctx.team, slug: o.slug as string | undefined, title: o.name as string | undefined },
    });
    const s = r.data.space;
    if (o.link)
      ctx.state.write({
        apiUrl: ctx.apiUrl,
        spaceId: s.id,
        slug: s.slug,
        liveUrl: s.liveUrl,
        teamId: s.teamId,
      });
    ctx.result(r.data, () => `Created ${s.slug} (${s.id}): ${s.liveUrl}${o.link ? ' — linked here' : ''}`);
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

  async 'teams.ls'(ctx) {
    ctx.requireToken();
    const r = await ctx.client.request<Static<typeof TeamListResponse>>('GET', '/v1/teams', {
      query: { limit: 100 },
    });
    const cur = ctx.team;
    ctx.result(r.data, () =>
      table(r.data.map((t) => [t.slug === cur || t.id === cur ? '*' : ' ', t.slug, t.id, t.role, t.name])),
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

  async 'api-keys.create'(ctx, [name], o) {
    ctx.requireToken();
    const body = {
      name: name!,
      ...(ctx.team ? { team: ctx.team } : {}),
      ...(o.preset ? { preset: o.preset } : {}),
      ...(o.expiresAt ? { expiresAt: o.expiresAt } : {}),
    } as Static<typeof CreateApiKeyBody>;
    const r = await ctx.client.request<Static<typeof ApiKeyCreatedResponse>>('POST', '/v1/account/api-keys', {
      body,
    });
    ctx.result(
      r.data,
      () =>
        `${r.data.token}\n\nCreated key ${r.data.id} (${r.data.preset}). This is the only time it is shown.`,
    );
  },

  async 'api-keys.ls'(ctx) {
    ctx.requireToken();
    const r = await ctx.client.request<Static<typeof ApiKeyListResponse>>('GET', '/v1/account/api-keys', {
      query: { limit: 100 },
    });
    ctx.result(r.data, () =>
      table(
        r.data.map((k) => [
          k.id,
          k.name,
          k.preset,
          `…${k.hint}`,
          k.revokedAt ? 'revoked' : (k.expiresAt ?? 'no expiry'),
        ]),
      ),
    );
  },

  async 'api-keys.revoke'(ctx, [id]) {
    ctx.requireToken();
    await ctx.client.request('DELETE', `/v1/account/api-keys/${enc(id!)}`);
    ctx.result({ id, revoked: true }, () => `Revoked ${id}.`);
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

  async operations(ctx, _a, o) {
    const r = await ctx.spaceClient.request<Static<typeof OperationListResponse>>(
      'GET',
      `/v1/spaces/${enc(ctx.spaceRef())}/operations`,
      {
        query: { limit: Number(o.limit) },
      },
    );
    ctx.result(r.data, () => table(r.data.map((x) => [x.createdAt, x.id, x.kind, x.status])));
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

  async docs(ctx, [words]) {
    const q = ((words as unknown as string[] | undefined) ?? []).join(' ');
    const r = await ctx.client.request<{ data: Array<Record<string, unknown>> }>('GET', '/v1/docs', {
      query: q ? { q } : {},
    });
    ctx.result(
      r.data,
      () =>
        r.data
          .map(
            (d) => `${d.title ?? d.slug}${d.url ? `  ${d.url}` : ''}${d.summary ? `\n  ${d.summary}` : ''}`,
          )
          .join('\n') || 'No matches.',
    );
  },

  async completion(ctx, [shell]) {
    ctx.io.stdout.write(completionScript(definitions(), shell!));
  },
};
