import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type { Static } from '@sinclair/typebox';
import type { Version, VersionFile } from '../../schemas/publishing.ts';
import { paginate, streamOf, unwrap } from '../../sdk/index.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { safeRelative } from '../files.ts';
import type { Action } from '../program.ts';
import { ACCESS_LABEL } from '../publish-report.ts';
import { confirm, spaceWithAccess, table } from './shared.ts';

type VersionT = Static<typeof Version>;

const VERSION_HEADER = ['VERSION', 'ID', 'STATUS', 'TARGET', 'CHANNELS', 'FILES', 'CREATED', 'MESSAGE'];

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

/** `rollback` without a version: the version the channel pointed at before its current one. */
async function previousVersion(ctx: Context, spaceId: string, channel: string): Promise<string> {
  const current = (
    await unwrap(ctx.spaceApi.GET('/v1/spaces/{spaceId}/channels', { params: { path: { spaceId } } }))
  ).data.find((c) => c.name === channel);
  if (!current) throw new UsageError(`Channel "${channel}" points at nothing yet.`);
  for await (const move of paginate((cursor) =>
    ctx.spaceApi.GET('/v1/spaces/{spaceId}/channels/{name}/history', {
      params: { path: { spaceId, name: channel }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
    }),
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

/** Versions, channels, promote, rollback, diff and download. */
export const versionActions: Record<string, Action> = {
  async 'versions.ls'(ctx, _a, o) {
    const ref = ctx.spaceRef();
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/versions', {
        params: { path: { spaceId: ref }, query: { limit: Number(o.limit) } },
      }),
    );
    ctx.result(r.data, () =>
      r.data.length ? table(r.data.map(versionLine), VERSION_HEADER) : 'No versions yet.',
    );
  },

  async 'versions.get'(ctx, [v]) {
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/versions/{versionId}', {
        params: { path: { spaceId: ctx.spaceRef(), versionId: v! } },
      }),
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
    const ref = ctx.spaceRef();
    await confirm(ctx, `Delete version ${v}?`);
    const r = await unwrap(
      ctx.spaceApi.DELETE('/v1/spaces/{spaceId}/versions/{versionId}', {
        params: { path: { spaceId: ref, versionId: v! } },
      }),
    );
    ctx.result(r.data, () => `Deleted v${r.data.number} (${r.data.id}).`);
  },

  async 'versions.files'(ctx, [v]) {
    const ref = ctx.spaceRef();
    const files: Array<Static<typeof VersionFile>> = [];
    for await (const f of paginate((cursor) =>
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/versions/{versionId}/files', {
        params: {
          path: { spaceId: ref, versionId: v ?? 'latest' },
          query: { limit: 100, ...(cursor ? { cursor } : {}) },
        },
      }),
    ))
      files.push(f);
    ctx.result(files, () =>
      table(
        files.map((f) => [String(f.size), f.sha256.slice(0, 12), f.path]),
        ['SIZE', 'SHA256', 'PATH'],
      ),
    );
  },

  async promote(ctx, [v], o) {
    const ref = ctx.spaceRef();
    const r = await unwrap(
      ctx.spaceApi.POST('/v1/spaces/{spaceId}/versions/{versionId}/promote', {
        params: { path: { spaceId: ref, versionId: v! } },
        body: { channel: o.channel as string },
      }),
    );
    ctx.result(
      r.data,
      () =>
        `${r.data.channel} → v${r.data.version.number} (${r.data.versionId}); was ${r.data.previousVersionId ?? 'nothing'}.`,
    );
  },

  async rollback(ctx, [v], o) {
    const { space: s, access } = await spaceWithAccess(ctx);
    const channel = o.channel as string;
    const target = v ?? (await previousVersion(ctx, s.id, channel));
    const current = s.channels[channel]?.versionId ?? null;
    const r = await unwrap(
      ctx.spaceApi.POST('/v1/spaces/{spaceId}/versions/{versionId}/promote', {
        params: { path: { spaceId: s.id, versionId: target } },
        body: { channel, expectedVersionId: current },
      }),
    );
    const previous = r.data.previousVersionId
      ? await unwrap(
          ctx.spaceApi.GET('/v1/spaces/{spaceId}/versions/{versionId}', {
            params: { path: { spaceId: s.id, versionId: r.data.previousVersionId } },
          }),
        ).then(
          (p) => `v${p.data.number}`,
          () => r.data.previousVersionId,
        )
      : 'nothing';
    const url = channelSiteUrl(s, channel);
    const label = channel === 'live' ? 'Live' : channel.charAt(0).toUpperCase() + channel.slice(1);
    ctx.result(
      { ...r.data, liveUrl: s.liveUrl, siteUrl: url },
      () =>
        `Rolled ${channel} back to v${r.data.version.number} (${r.data.versionId}); was ${previous}.\n  ${label} (${ACCESS_LABEL[access]}): ${url}`,
    );
  },

  async 'channels.ls'(ctx) {
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/channels', { params: { path: { spaceId: ctx.spaceRef() } } }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((c) => [c.name, c.versionId, c.updatedAt]),
            ['CHANNEL', 'VERSION', 'UPDATED'],
          )
        : 'No channels yet.',
    );
  },

  async 'channels.history'(ctx, [name], o) {
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/channels/{name}/history', {
        params: {
          path: { spaceId: ctx.spaceRef(), name: name ?? 'live' },
          query: { limit: Number(o.limit) },
        },
      }),
    );
    ctx.result(r.data, () =>
      table(
        r.data.map((m) => [
          m.createdAt,
          m.reason,
          `${m.previousVersionId ?? '-'} → ${m.versionId}`,
          m.actor ?? '',
        ]),
        ['WHEN', 'REASON', 'MOVE', 'BY'],
      ),
    );
  },

  async diff(ctx, [from, to]) {
    const r = await unwrap(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/versions/{versionId}/diff', {
        params: { path: { spaceId: ctx.spaceRef(), versionId: to! }, query: { against: from } },
      }),
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
    const dir = o.output as string | undefined;
    const archive = o.archive as string | undefined;
    if (Boolean(dir) === Boolean(archive))
      throw new UsageError(
        'Say where to: -o DIR writes the files into a directory, --archive FILE.tar.gz keeps the archive (- for stdout).',
      );
    if (archive === '-' && ctx.json)
      throw new UsageError('--archive - writes to stdout, where --json goes too.');
    const res = (await streamOf(
      ctx.spaceApi.GET('/v1/spaces/{spaceId}/versions/{versionId}/archive', {
        params: { path: { spaceId: ctx.spaceRef(), versionId: o.version as string } },
        parseAs: 'stream',
      }),
    )) as Response;
    const body = Readable.fromWeb(res.body as never);
    if (archive) return saveArchive(ctx, body, archive);
    const out = path.resolve(ctx.io.cwd, dir!);
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
    body
      .pipe(zlib.createGunzip())
      .on('error', (e) => extract.destroy(e))
      .pipe(extract);
    await done;
    ctx.result(
      { output: out, files: written.length, bytes },
      () => `Wrote ${written.length} files (${bytes} bytes) to ${out}.`,
    );
  },
};

/** The version's .tar.gz as the server sends it: to stdout, or whole into a file (never half of one). */
async function saveArchive(ctx: Context, body: Readable, target: string): Promise<void> {
  if (target === '-') {
    await pipeline(body, ctx.io.stdout);
    return;
  }
  const file = path.resolve(ctx.io.cwd, target);
  const tmp = `${file}.${process.pid}.part`;
  try {
    await pipeline(body, fs.createWriteStream(tmp));
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  const { size } = await fsp.stat(file);
  ctx.result({ archive: file, bytes: size }, () => `Wrote ${file} (${size} bytes).`);
}

/** The URL a channel answers at: `live` at the live URL, any other at `<channel>--<host>`. */
function channelSiteUrl(s: { liveUrl: string; defaultHostname: string }, channel: string): string {
  if (channel === 'live') return s.liveUrl;
  const u = new URL(s.liveUrl);
  u.hostname = `${channel}--${s.defaultHostname.replace(/:\d+$/, '')}`;
  return u.toString().replace(/\/$/, '');
}
