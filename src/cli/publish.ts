import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Static } from '@sinclair/typebox';
import { parse as parseJsonc } from 'jsonc-parser';
import type { CreateVersionBody, PublishReceipt } from '../schemas/publishing.ts';
import type { AccessLevel, SpaceResponse } from '../schemas/spaces.ts';
import {
  RETRIES_HEADER,
  type RequestBody,
  rawBody,
  type SpacesClient,
  SpacesProblem,
  sendRaw,
  unwrap,
} from '../sdk/index.ts';
import { confirm } from './commands/shared.ts';
import type { Context } from './context.ts';
import { UsageError } from './errors.ts';
import { bodyOf, collect, type HashedFile, hashAll, mapLimit } from './files.ts';
import { HashCache } from './hash-cache.ts';
import { dryRun, human, report } from './publish-report.ts';
import { configDir } from './store.ts';
import { tarOf } from './tar.ts';

const gzip = promisify(zlib.gzip);
/** A Buffer as a fetch body (a view, not a copy). */
const bodyBytes = (b: Buffer) => new Uint8Array(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength);

export type Receipt = Static<typeof PublishReceipt>['data'];
/** What an anonymous publish answers once: the space key, its claim link and the publisher's door. */
export type AnonymousClaim = NonNullable<Receipt['claim']>;
export type Access = Static<typeof AccessLevel>;

export interface PublishOptions {
  target?: 'production' | 'preview';
  message?: string;
  slug?: string;
  name?: string;
  spa?: 'auto' | 'true' | 'false';
  dryRun?: boolean;
  idempotencyKey?: string;
  access?: Access;
}

/** The `--json` result of `spaces publish`. */
export interface PublishResult {
  space: Receipt['space'];
  version: Receipt['version'] | null;
  /** The channel this publish moved: `live`, or `preview` for `--target preview`. */
  channel: 'live' | 'preview';
  /** Where the published files are served: the live URL, or the preview channel's URL. */
  siteUrl: string;
  immutableUrl: string | null;
  /** Who may see the site: `public`, `team` or `private` (an unclaimed space: only its publisher). */
  access: Access | null;
  noop: boolean;
  created: boolean;
  files: { total: number; bytes: number };
  uploaded: { files: number; bytes: number };
  /** An anonymous space: the publisher's door, the claim link and the deadline. */
  claim?: { openUrl: string | null; claimUrl: string | null; expiresAt: string | null };
}

/** Files at or under this size go into tar batches when there are many of them. */
const SMALL_FILE = 512 * 1024;
const BATCH_MIN_FILES = 16;
const BATCH_MAX_FILES = 5000;
const BATCH_MAX_BYTES = 32 * 1024 * 1024;
const PUT_CONCURRENCY = 8;
const BATCH_CONCURRENCY = 2;

export async function publish(ctx: Context, input: string | undefined, o: PublishOptions): Promise<void> {
  const progress = ctx.progress();
  const src = await collect(path.resolve(ctx.io.cwd, input ?? '.'));
  if (src.files.length === 0)
    throw new UsageError(`${input ?? '.'}: nothing to publish (every file is ignored).`);
  const totalBytes = src.files.reduce((s, f) => s + f.size, 0);
  const total = src.files.length;
  progress.event('collected', { files: total, bytes: totalBytes, kind: src.kind }, `Found ${total} files`);
  // A directory's unchanged files are not hashed again (see hash-cache.ts).
  const cache = src.kind === 'directory' ? new HashCache(configDir(ctx.io.env), src.root) : undefined;
  const files = await hashAll(
    src.files,
    (done, bytes) =>
      progress.event('hashing', { done, total, bytes }, `Hashing ${done}/${total} files (${human(bytes)})`),
    16,
    cache,
  );
  progress.event('hashed', { files: total, bytes: totalBytes, fromCache: cache?.hits ?? 0 });
  // The hash cache is written while the server checks the manifest (the versions flow waits for that
  // anyway), or before any other way out.
  let cacheSaved = false;
  const saveCache = () => {
    if (cacheSaved) return;
    cacheSaved = true;
    cache?.save();
  };
  // The link belongs to what is published: a directory's own `.spaces/state.json` (an archive's or a
  // file's: the one beside it), never the working directory's — publishing another directory from a
  // linked one must not replace that space's files.
  const project = ctx.inProject(src.root);
  try {
    await publishHashed(project, o, files, progress, saveCache, src.kind === 'directory' ? src.root : null);
  } finally {
    saveCache();
  }
}

/** Publishes hashed files: a dry run, an anonymous publish, or the versions flow. */
async function publishHashed(
  ctx: Context,
  o: PublishOptions,
  files: HashedFile[],
  progress: ReturnType<Context['progress']>,
  saveCache: () => void,
  siteDir: string | null,
): Promise<void> {
  const total = files.length;

  const linked = ctx.linked;
  // No flag and no link: the site's own settings file may name its space (a build that empties its
  // output directory takes the link with it, but not a `spaces.jsonc` copied from its sources).
  const explicit =
    ctx.opts.space || ctx.io.env.SPACES_SPACE || (!linked && siteDir ? settingsSpaceRef(siteDir) : undefined);
  const hasPerson = Boolean(ctx.token);

  if (o.dryRun) {
    progress.stop();
    return dryRun(ctx, files, explicit ? ctx.spaceRef(explicit) : (linked?.spaceId ?? null));
  }

  // First run without a credential: an anonymous space, created by the one-call endpoint.
  if (!explicit && !linked && !hasPerson) {
    const r = await publishAnonymously(ctx, files, o);
    progress.succeed(`Published ${total} files`);
    return report(ctx, r);
  }

  let created: { space: Receipt['space']; access: Access } | null = null;
  let spaceRef: string;
  if (!explicit && !linked) {
    const body: RequestBody<'/v1/spaces', 'post'> = {
      teamId: ctx.team,
      slug: o.slug,
      title: o.name,
      ...(o.access ? { access: o.access } : {}),
    };
    const res = await unwrap(
      ctx.api.POST('/v1/spaces', {
        body,
        headers: o.idempotencyKey ? { 'idempotency-key': `${o.idempotencyKey}:space` } : {},
      }),
    );
    const s = res.data.space;
    ctx.state.write({
      apiUrl: ctx.apiUrl,
      spaceId: s.id,
      slug: s.slug,
      liveUrl: s.liveUrl,
      teamId: s.teamId,
    });
    progress.event('space_created', { spaceId: s.id, slug: s.slug }, `Created space ${s.slug}`);
    spaceRef = s.id;
    created = { space: { id: s.id, slug: s.slug, liveUrl: s.liveUrl }, access: res.data.access };
  } else spaceRef = ctx.spaceRef(explicit);

  // The space as it is before this publish (its access and live version), read beside the upload.
  const before = created
    ? null
    : unwrap(ctx.spaceApi.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId: spaceRef } } }));
  before?.catch(() => {}); // awaited in the flow; not unhandled meanwhile
  // A space created just now has its access from the create.
  const flow = created ? { ...o, access: undefined } : o;
  const r = await versionsFlow(ctx, ctx.spaceApi, spaceRef, files, flow, progress, saveCache, before);
  progress.succeed(r.noop ? 'Nothing changed' : `Published ${total} files`);
  const linkedAnonymous = ctx.linked?.spaceKey ? ctx.linked : null;
  report(ctx, {
    ...r,
    created: Boolean(created),
    access: created?.access ?? r.access,
    ...(linkedAnonymous
      ? {
          claim: {
            openUrl: linkedAnonymous.openUrl ?? null,
            claimUrl: linkedAnonymous.claimUrl ?? null,
            expiresAt: linkedAnonymous.expiresAt ?? null,
          },
        }
      : {}),
  });
}

/** `space` from the site's `spaces.jsonc` / `spaces.json`, when it names one. */
function settingsSpaceRef(dir: string): string | undefined {
  for (const name of ['spaces.jsonc', 'spaces.json']) {
    let text: string;
    try {
      text = fs.readFileSync(path.join(dir, name), 'utf8');
    } catch {
      continue;
    }
    const value = parseJsonc(text, [], { allowTrailingComma: true }) as { space?: unknown } | undefined;
    return typeof value?.space === 'string' && value.space ? value.space : undefined;
  }
  return undefined;
}

async function versionsFlow(
  ctx: Context,
  client: SpacesClient,
  spaceRef: string,
  files: HashedFile[],
  o: PublishOptions,
  progress: ReturnType<Context['progress']>,
  whileCreating: () => void,
  before: Promise<Static<typeof SpaceResponse>> | null,
): Promise<Omit<PublishResult, 'created'>> {
  const total = files.length;
  const totalBytes = files.reduce((s, f) => s + f.size, 0);
  const body: Static<typeof CreateVersionBody> = {
    files: files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
    target: o.target,
    message: o.message ?? null,
    source: { type: 'direct-upload' },
  };
  progress.event('creating_version', { files: total }, 'Creating version');
  const creating = unwrap(
    client.POST('/v1/spaces/{spaceId}/versions', {
      params: { path: { spaceId: spaceRef } },
      body,
      headers: {
        ...(o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : {}),
        [RETRIES_HEADER]: String(o.idempotencyKey ? 4 : 0),
      },
    }),
  );
  creating.catch(() => {}); // awaited below; not unhandled meanwhile
  // fetch has written the request by the next turn of the event loop (measured: a 1 MB manifest is
  // at the server before work started then); blocking work now runs beside the server's.
  await new Promise((r) => setImmediate(r));
  whileCreating();
  const created = await creating;
  let receipt = created.data;
  const current = before ? (await before).data : null;
  const channel = receipt.version.target === 'preview' ? 'preview' : 'live';
  const base = { space: receipt.space, files: { total, bytes: totalBytes }, channel } as const;
  if (receipt.noop) {
    progress.event('noop', { versionId: receipt.version.id });
    return {
      ...base,
      version: receipt.version,
      siteUrl: channelUrl(receipt, channel),
      immutableUrl: receipt.version.immutableUrl,
      access: current?.access ?? null,
      noop: true,
      uploaded: { files: 0, bytes: 0 },
    };
  }
  const versionId = receipt.version.id;
  const spaceId = receipt.space.id;
  const live = current?.space.channels.live?.versionId;
  // Beside the uploads (they are usually what takes time); a refusal stops the publish as it comes.
  const removals =
    channel === 'live' && live
      ? confirmRemovals(ctx, client, spaceId, versionId, live, total, progress)
      : Promise.resolve();
  removals.catch(() => {}); // awaited with the uploads
  const byPath = new Map(files.map((f) => [f.path, f]));
  const targets = receipt.upload.targets;
  const wanted = targets.map((t) => {
    const f = byPath.get(t.path);
    if (!f) throw new Error(`The server asked for "${t.path}", which is not in the manifest.`);
    return { target: t, file: f };
  });
  const upTotal = wanted.length;
  const upBytes = wanted.reduce((s, w) => s + w.file.size, 0);
  let doneFiles = 0;
  let doneBytes = 0;
  const tick = (n: number, b: number) => {
    doneFiles += n;
    doneBytes += b;
    progress.event(
      'uploading',
      { done: doneFiles, total: upTotal, bytes: doneBytes, totalBytes: upBytes },
      `Uploading ${doneFiles}/${upTotal} files (${human(doneBytes)} of ${human(upBytes)})`,
    );
  };
  progress.event('upload_plan', { files: upTotal, bytes: upBytes, skipped: total - upTotal });

  const small = wanted.filter((w) => w.file.size <= SMALL_FILE);
  const batched = small.length >= BATCH_MIN_FILES ? small : [];
  const single = batched.length ? wanted.filter((w) => w.file.size > SMALL_FILE) : wanted;
  const batches = splitBatches(batched);

  const uploads = { path: { spaceId, versionId } };
  // The signed URL is the credential; no bearer token goes with it.
  const signedFetch = ctx.fetchWith(undefined);
  await Promise.all([
    removals,
    mapLimit(batches, BATCH_CONCURRENCY, async (batch) => {
      await unwrap(
        client.PUT('/v1/spaces/{spaceId}/versions/{versionId}/uploads', {
          params: uploads,
          // Built (and its files read) when sent; a retry sends the same bytes again.
          body: bodyBytes(tarOf(batch.map((w) => w.file))) as never,
          bodySerializer: rawBody,
          headers: { 'content-type': 'application/x-tar' },
        }),
      );
      tick(
        batch.length,
        batch.reduce((s, w) => s + w.file.size, 0),
      );
    }),
    mapLimit(single, PUT_CONCURRENCY, async (w) => {
      const blob = await bodyOf(w.file);
      await sendRaw(signedFetch, w.target.url, {
        method: 'PUT',
        body: blob,
        headers: { 'content-type': 'application/octet-stream' },
      });
      tick(1, w.file.size);
    }),
  ]);

  await applySpa(ctx, client, spaceId, files, o.spa ?? 'auto', progress);
  let access = current?.access ?? null;
  if (o.access && o.access !== access) {
    // Before finalize: the new version is seen by whom the person asked for from its first request.
    const body: RequestBody<'/v1/spaces/{spaceId}', 'patch'> = { access: o.access };
    access = (
      await unwrap(client.PATCH('/v1/spaces/{spaceId}', { params: { path: { spaceId: spaceId } }, body }))
    ).data.access;
    progress.event('access', { access });
  }

  progress.event('finalizing', { versionId }, 'Finalizing');
  receipt = (
    await unwrap(
      client.POST('/v1/spaces/{spaceId}/versions/{versionId}/finalize', {
        params: { path: { spaceId: spaceId, versionId: versionId } },
        headers: { [RETRIES_HEADER]: String(2) },
      }),
    )
  ).data;
  progress.event('finalized', { versionId, status: receipt.version.status });
  return {
    ...base,
    space: receipt.space,
    version: receipt.version,
    siteUrl: channelUrl(receipt, channel),
    immutableUrl: receipt.version.immutableUrl,
    access,
    noop: false,
    uploaded: { files: upTotal, bytes: upBytes },
  };
}

/**
 * A channel's URL: the live URL, or `<channel>--<host>` (the same managed host as the version's own
 * URL, `<versionId>--<host>`; the live URL may be a custom domain).
 */
function channelUrl(receipt: Receipt, channel: 'live' | 'preview'): string {
  if (channel === 'live') return receipt.space.liveUrl;
  const u = new URL(receipt.version.immutableUrl);
  u.hostname = u.hostname.replace(`${receipt.version.id}--`, `${channel}--`);
  return u.toString().replace(/\/$/, '');
}

/**
 * A production publish that would remove more than half of the live version's files is most likely
 * the wrong directory: it goes ahead only once confirmed (a terminal) or with --yes. The count comes
 * from the server's diff of the new (not yet uploaded) version against the live one.
 */
async function confirmRemovals(
  ctx: Context,
  client: SpacesClient,
  spaceId: string,
  versionId: string,
  liveVersionId: string,
  newFiles: number,
  progress: ReturnType<Context['progress']>,
): Promise<void> {
  if (ctx.opts.yes) return;
  const d = (
    await unwrap(
      client.GET('/v1/spaces/{spaceId}/versions/{versionId}/diff', {
        params: { path: { spaceId: spaceId, versionId: versionId }, query: { against: liveVersionId } },
      }),
    )
  ).data;
  // live = removed + unchanged + changed; new = added + unchanged + changed.
  const liveFiles = d.removed.length + newFiles - d.added.length;
  if (d.removed.length * 2 <= liveFiles) return;
  const examples = d.removed.slice(0, 3).join(', ') + (d.removed.length > 3 ? ', …' : '');
  progress.pause(); // the uploads' progress must not draw over the question
  try {
    await confirm(
      ctx,
      `This publish removes ${d.removed.length} of the ${liveFiles} files of the live version (${examples}). Publish anyway?`,
    );
  } catch (err) {
    // The unfinished version would expire in a day; it goes now.
    await unwrap(
      client.DELETE('/v1/spaces/{spaceId}/versions/{versionId}', {
        params: { path: { spaceId: spaceId, versionId: versionId } },
      }),
    ).catch(() => {});
    throw err;
  } finally {
    progress.resume();
  }
}

/**
 * Small files in tar batches of similar size: as few as the caps allow (each batch is a request and
 * a durable commit on the server), in a multiple of the upload concurrency, so the server always has
 * two batches to work on.
 */
export function splitBatches<T extends { file: { size: number } }>(items: T[]): T[][] {
  if (!items.length) return [];
  const bytes = items.reduce((s, w) => s + w.file.size, 0);
  let count = Math.max(Math.ceil(items.length / BATCH_MAX_FILES), Math.ceil(bytes / BATCH_MAX_BYTES));
  // A multiple of the concurrency: no batch is left to upload alone at the end.
  if (items.length >= BATCH_CONCURRENCY * BATCH_MIN_FILES)
    count = Math.ceil(count / BATCH_CONCURRENCY) * BATCH_CONCURRENCY;
  const perBatch = Math.ceil(items.length / count);
  const byteCap = Math.max(Math.ceil(bytes / count), SMALL_FILE);
  const out: T[][] = [];
  let cur: T[] = [];
  let curBytes = 0;
  for (const w of items) {
    if (
      cur.length &&
      (cur.length >= perBatch || curBytes + w.file.size > Math.min(byteCap * 1.25, BATCH_MAX_BYTES))
    ) {
      out.push(cur);
      cur = [];
      curBytes = 0;
    }
    cur.push(w);
    curBytes += w.file.size;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** A single-page app: one HTML entry at the root, scripts, and no 404 page of its own. */
export function looksLikeSpa(files: Array<{ path: string }>): boolean {
  const html = files.filter((f) => /\.html?$/i.test(f.path));
  const hasJs = files.some((f) => /\.m?js$/i.test(f.path));
  const has404 = files.some((f) => /(^|\/)404\.html$/i.test(f.path));
  return html.length === 1 && html[0]?.path === 'index.html' && hasJs && !has404;
}

const SPA_FALLBACK = '/index.html';
function isSpaFallback(v: unknown): boolean {
  return (
    v === SPA_FALLBACK ||
    (typeof v === 'object' && v !== null && (v as { path?: unknown }).path === SPA_FALLBACK)
  );
}

/**
 * `--spa`: the space's settings overlay gets (or loses) `fallback: "/index.html"` before the version
 * goes live, with the settings digest as compare-and-swap. `auto` only adds it for a site that looks
 * like a single-page app and whose settings say nothing about `fallback`; a `spaces.json(c)` in the
 * site is left to decide on its own.
 */
async function applySpa(
  ctx: Context,
  client: SpacesClient,
  spaceId: string,
  files: HashedFile[],
  mode: 'auto' | 'true' | 'false',
  progress: ReturnType<Context['progress']>,
): Promise<void> {
  if (mode === 'auto' && (files.some((f) => /^spaces\.jsonc?$/.test(f.path)) || !looksLikeSpa(files))) return;
  const { space } = (
    await unwrap(client.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId: spaceId } } }))
  ).data;
  const config = { ...(space.config ?? {}) } as Record<string, unknown>;
  if (mode === 'false') {
    if (!isSpaFallback(config.fallback)) return;
    delete config.fallback;
  } else {
    if (config.fallback !== undefined && (mode === 'auto' || isSpaFallback(config.fallback))) return;
    config.fallback = SPA_FALLBACK;
  }
  const body: RequestBody<'/v1/spaces/{spaceId}', 'patch'> = {
    config: config as RequestBody<'/v1/spaces/{spaceId}', 'patch'>['config'],
    baseSettingsDigest: space.settingsDigest,
  };
  try {
    await unwrap(client.PATCH('/v1/spaces/{spaceId}', { params: { path: { spaceId: spaceId } }, body }));
    progress.event('spa', { fallback: mode === 'false' ? null : SPA_FALLBACK });
  } catch (err) {
    if (mode !== 'auto') throw err;
    if (err instanceof SpacesProblem && !ctx.json)
      ctx.err(`warning: could not set the SPA fallback: ${err.message}`);
  }
}

async function publishAnonymously(
  ctx: Context,
  files: HashedFile[],
  o: PublishOptions,
): Promise<PublishResult> {
  const progress = ctx.progress();
  const total = files.length;
  const totalBytes = files.reduce((s, f) => s + f.size, 0);
  if (o.slug && !ctx.json) ctx.err('note: --slug needs an account; anonymous spaces get a generated name.');
  if (o.access && !ctx.json)
    ctx.err('note: --access needs an account; until it is claimed only its Open link shows the site.');
  // One .tar.gz part rather than a part per file: multipart filenames can't carry every path byte
  // for byte (`"` and newlines get percent-encoded), and one part is far cheaper for many files.
  const makeForm = async () => {
    const form = new FormData();
    form.append('payload', JSON.stringify({ title: o.name, target: o.target, message: o.message ?? null }));
    const gz = await gzip(tarOf(files));
    form.append('archive', new Blob([bodyBytes(gz)], { type: 'application/gzip' }), 'site.tar.gz');
    return form;
  };
  progress.event(
    'uploading',
    { done: 0, total, bytes: 0, totalBytes },
    `Uploading ${total} files (${human(totalBytes)})`,
  );
  const form = await makeForm();
  const res = await unwrap(
    ctx.apiWith(undefined).POST('/v1/publish', {
      body: form as never,
      headers: { 'idempotency-key': o.idempotencyKey ?? randomUUID() },
    }),
  );
  const r = res.data;
  progress.event('uploading', { done: total, total, bytes: totalBytes, totalBytes });
  ctx.state.write({
    apiUrl: ctx.apiUrl,
    spaceId: r.space.id,
    slug: r.space.slug,
    liveUrl: r.space.liveUrl,
    teamId: null,
    ...(r.claim
      ? {
          spaceKey: r.claim.key,
          claimUrl: r.claim.claimUrl,
          openUrl: r.claim.openUrl,
          expiresAt: r.claim.expiresAt,
        }
      : {}),
  });
  const channel = r.version.target === 'preview' ? 'preview' : 'live';
  return {
    space: r.space,
    version: r.version,
    channel,
    siteUrl: channelUrl(r, channel),
    immutableUrl: r.version.immutableUrl,
    access: 'private',
    noop: r.noop,
    created: true,
    files: { total, bytes: totalBytes },
    uploaded: { files: total, bytes: totalBytes },
    ...(r.claim
      ? { claim: { openUrl: r.claim.openUrl, claimUrl: r.claim.claimUrl, expiresAt: r.claim.expiresAt } }
      : {}),
  };
}
