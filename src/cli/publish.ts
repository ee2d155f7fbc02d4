import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Static } from '@sinclair/typebox';
import type { RotateResponse } from '../schemas/anonymous.ts';
import type {
  CreateVersionBody,
  PublishReceipt,
  UploadResultResponse,
  VersionFile,
} from '../schemas/publishing.ts';
import type { SpaceCreateResponse, SpaceResponse, UpdateSpaceBody } from '../schemas/spaces.ts';
import type { Context } from './context.ts';
import { bodyOf, collect, type HashedFile, hashAll, mapLimit } from './files.ts';
import { HashCache } from './hash-cache.ts';
import { type ApiClient, ApiProblem, UsageError } from './http.ts';
import { configDir } from './store.ts';
import { tarOf } from './tar.ts';

const gzip = promisify(zlib.gzip);
/** A Buffer as a fetch body (a view, not a copy). */
const bodyBytes = (b: Buffer) => new Uint8Array(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength);

export type Receipt = Static<typeof PublishReceipt>['data'];
/** What an anonymous publish answers once: the space key and its claim link. */
export type AnonymousClaim = Pick<Static<typeof RotateResponse>['data'], 'key' | 'claimUrl'> & {
  expiresAt: string | null;
};

export interface PublishOptions {
  target?: 'production' | 'preview';
  message?: string;
  slug?: string;
  name?: string;
  spa?: 'auto' | 'true' | 'false';
  dryRun?: boolean;
  idempotencyKey?: string;
}

/** The `--json` result of `spaces publish`. */
export interface PublishResult {
  space: Receipt['space'];
  version: Receipt['version'] | null;
  siteUrl: string;
  immutableUrl: string | null;
  noop: boolean;
  created: boolean;
  files: { total: number; bytes: number };
  uploaded: { files: number; bytes: number };
  claim?: { claimUrl: string; expiresAt: string | null };
  dryRun?: { upload: Array<{ path: string; size: number }>; unchanged: number; removed: string[] };
}

/** Files at or under this size go into tar batches when there are many of them. */
const SMALL_FILE = 512 * 1024;
const BATCH_MIN_FILES = 16;
const BATCH_MAX_FILES = 5000;
const BATCH_MAX_BYTES = 32 * 1024 * 1024;
const PUT_CONCURRENCY = 8;
const BATCH_CONCURRENCY = 2;

function human(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const u = ['KiB', 'MiB', 'GiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${u[i]}`;
}

export async function publish(ctx: Context, input: string | undefined, o: PublishOptions): Promise<void> {
  const progress = ctx.progress();
  const src = await collect(input ?? '.');
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
  try {
    await publishHashed(ctx, o, files, progress, saveCache);
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
): Promise<void> {
  const total = files.length;

  const explicit = ctx.opts.space || ctx.io.env.SPACES_SPACE;
  const linked = ctx.linked;
  const hasPerson = Boolean(ctx.token);

  if (o.dryRun) {
    progress.stop();
    return dryRun(ctx, files, explicit ? ctx.spaceRef() : (linked?.spaceId ?? null));
  }

  // First run without a credential: an anonymous space, created by the one-call endpoint.
  if (!explicit && !linked && !hasPerson) {
    const r = await publishAnonymously(ctx, files, o);
    progress.succeed(`Published ${total} files`);
    return report(ctx, r);
  }

  let created = false;
  let spaceRef: string;
  if (!explicit && !linked) {
    const body = { teamId: ctx.team, slug: o.slug, title: o.name };
    const res = await ctx.client.request<Static<typeof SpaceCreateResponse>>('POST', '/v1/spaces', {
      body,
      idempotencyKey: o.idempotencyKey ? `${o.idempotencyKey}:space` : undefined,
    });
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
    created = true;
  } else spaceRef = ctx.spaceRef();

  const r = await versionsFlow(ctx, ctx.spaceClient, spaceRef, files, o, progress, saveCache);
  progress.succeed(r.noop ? 'Nothing changed' : `Published ${total} files`);
  report(ctx, { ...r, created });
}

async function versionsFlow(
  ctx: Context,
  client: ApiClient,
  spaceRef: string,
  files: HashedFile[],
  o: PublishOptions,
  progress: ReturnType<Context['progress']>,
  whileCreating: () => void = () => {},
): Promise<PublishResult> {
  const total = files.length;
  const totalBytes = files.reduce((s, f) => s + f.size, 0);
  const body: Static<typeof CreateVersionBody> = {
    files: files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
    target: o.target,
    message: o.message ?? null,
    source: { type: 'direct-upload' },
  };
  progress.event('creating_version', { files: total }, 'Creating version');
  const creating = client.request<Static<typeof PublishReceipt>>(
    'POST',
    `/v1/spaces/${encodeURIComponent(spaceRef)}/versions`,
    { body, idempotencyKey: o.idempotencyKey, retries: o.idempotencyKey ? 4 : 0 },
  );
  creating.catch(() => {}); // awaited below; not unhandled meanwhile
  // fetch has written the request by the next turn of the event loop (measured: a 1 MB manifest is
  // at the server before work started then); blocking work now runs beside the server's.
  await new Promise((r) => setImmediate(r));
  whileCreating();
  const created = await creating;
  let receipt = created.data;
  const base = { space: receipt.space, files: { total, bytes: totalBytes }, created: false };
  if (receipt.noop) {
    progress.event('noop', { versionId: receipt.version.id });
    return {
      ...base,
      version: receipt.version,
      siteUrl: receipt.space.liveUrl,
      immutableUrl: receipt.version.immutableUrl,
      noop: true,
      uploaded: { files: 0, bytes: 0 },
    };
  }
  const versionId = receipt.version.id;
  const spaceId = receipt.space.id;
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

  const uploadsUrl = `/v1/spaces/${encodeURIComponent(spaceId)}/versions/${versionId}/uploads`;
  await Promise.all([
    mapLimit(batches, BATCH_CONCURRENCY, async (batch) => {
      await client.request<Static<typeof UploadResultResponse>>('PUT', uploadsUrl, {
        // Built (and its files read) when sent; a retry builds it again.
        raw: () => bodyBytes(tarOf(batch.map((w) => w.file))),
        contentType: 'application/x-tar',
      });
      tick(
        batch.length,
        batch.reduce((s, w) => s + w.file.size, 0),
      );
    }),
    mapLimit(single, PUT_CONCURRENCY, async (w) => {
      const blob = await bodyOf(w.file);
      // The signed URL is the credential; no bearer token goes with it.
      await client.request('PUT', w.target.url, {
        raw: blob,
        contentType: 'application/octet-stream',
        anonymous: true,
      });
      tick(1, w.file.size);
    }),
  ]);

  await applySpa(ctx, client, spaceId, files, o.spa ?? 'auto', progress);

  progress.event('finalizing', { versionId }, 'Finalizing');
  receipt = (
    await client.request<Static<typeof PublishReceipt>>(
      'POST',
      `/v1/spaces/${encodeURIComponent(spaceId)}/versions/${versionId}/finalize`,
      { retries: 2 },
    )
  ).data;
  progress.event('finalized', { versionId, status: receipt.version.status });
  return {
    ...base,
    space: receipt.space,
    version: receipt.version,
    siteUrl: receipt.space.liveUrl,
    immutableUrl: receipt.version.immutableUrl,
    noop: false,
    uploaded: { files: upTotal, bytes: upBytes },
  };
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
  client: ApiClient,
  spaceId: string,
  files: HashedFile[],
  mode: 'auto' | 'true' | 'false',
  progress: ReturnType<Context['progress']>,
): Promise<void> {
  if (mode === 'auto' && (files.some((f) => /^spaces\.jsonc?$/.test(f.path)) || !looksLikeSpa(files))) return;
  const { space } = (await client.request<Static<typeof SpaceResponse>>('GET', `/v1/spaces/${spaceId}`)).data;
  const config = { ...(space.config ?? {}) } as Record<string, unknown>;
  if (mode === 'false') {
    if (!isSpaFallback(config.fallback)) return;
    delete config.fallback;
  } else {
    if (config.fallback !== undefined && (mode === 'auto' || isSpaFallback(config.fallback))) return;
    config.fallback = SPA_FALLBACK;
  }
  const body: Static<typeof UpdateSpaceBody> = {
    config: config as Static<typeof UpdateSpaceBody>['config'],
    baseSettingsDigest: space.settingsDigest,
  };
  try {
    await client.request('PATCH', `/v1/spaces/${spaceId}`, { body });
    progress.event('spa', { fallback: mode === 'false' ? null : SPA_FALLBACK });
  } catch (err) {
    if (mode !== 'auto') throw err;
    if (err instanceof ApiProblem && !ctx.json)
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
  const res = await ctx.client.request<{ data: Receipt & { claim?: AnonymousClaim } }>(
    'POST',
    '/v1/publish',
    {
      raw: form,
      anonymous: true,
      idempotencyKey: o.idempotencyKey ?? randomUUID(),
    },
  );
  const r = res.data;
  progress.event('uploading', { done: total, total, bytes: totalBytes, totalBytes });
  ctx.state.write({
    apiUrl: ctx.apiUrl,
    spaceId: r.space.id,
    slug: r.space.slug,
    liveUrl: r.space.liveUrl,
    teamId: null,
    ...(r.claim ? { spaceKey: r.claim.key, claimUrl: r.claim.claimUrl, expiresAt: r.claim.expiresAt } : {}),
  });
  return {
    space: r.space,
    version: r.version,
    siteUrl: r.space.liveUrl,
    immutableUrl: r.version.immutableUrl,
    noop: r.noop,
    created: true,
    files: { total, bytes: totalBytes },
    uploaded: { files: total, bytes: totalBytes },
    ...(r.claim ? { claim: { claimUrl: r.claim.claimUrl, expiresAt: r.claim.expiresAt } } : {}),
  };
}

async function dryRun(ctx: Context, files: HashedFile[], spaceRef: string | null): Promise<void> {
  const live = new Map<string, string>();
  let space: Receipt['space'] | null = null;
  if (spaceRef) {
    const s = (
      await ctx.spaceClient.request<Static<typeof SpaceResponse>>(
        'GET',
        `/v1/spaces/${encodeURIComponent(spaceRef)}`,
      )
    ).data.space;
    space = { id: s.id, slug: s.slug, liveUrl: s.liveUrl };
    if (s.channels.live) {
      for await (const f of ctx.spaceClient.paginate<Static<typeof VersionFile>>(
        `/v1/spaces/${s.id}/versions/${s.channels.live.versionId}/files`,
      )) {
        live.set(f.path, f.sha256);
      }
    }
  }
  const upload = files
    .filter((f) => live.get(f.path) !== f.sha256)
    .map((f) => ({ path: f.path, size: f.size }));
  const paths = new Set(files.map((f) => f.path));
  const removed = [...live.keys()].filter((p) => !paths.has(p));
  const totalBytes = files.reduce((s, f) => s + f.size, 0);
  const result = {
    space,
    files: { total: files.length, bytes: totalBytes },
    dryRun: { upload, unchanged: files.length - upload.length, removed },
  };
  ctx.result(result, () => {
    const lines = [
      `Dry run: ${files.length} files (${human(totalBytes)})${space ? ` for ${space.slug}` : ' for a new space'}.`,
      `Would upload ${upload.length} new or changed files (${human(upload.reduce((s, f) => s + f.size, 0))}); ${result.dryRun.unchanged} unchanged, ${removed.length} removed.`,
    ];
    for (const f of upload.slice(0, 50)) lines.push(`  + ${f.path} (${human(f.size)})`);
    if (upload.length > 50) lines.push(`  … and ${upload.length - 50} more`);
    for (const p of removed.slice(0, 20)) lines.push(`  - ${p}`);
    lines.push(
      'The server also skips bytes it holds from other versions, so the real upload can be smaller.',
    );
    return lines.join('\n');
  });
}

function report(ctx: Context, r: PublishResult): void {
  ctx.result(r, () => {
    const lines: string[] = [];
    if (r.noop) lines.push(`No changes: the live version already has these ${r.files.total} files.`);
    else {
      lines.push(
        `Published ${r.files.total} files (${human(r.files.bytes)}); uploaded ${r.uploaded.files} (${human(r.uploaded.bytes)}).`,
      );
    }
    lines.push(`  Live:     ${r.siteUrl}`);
    if (r.version) lines.push(`  Version:  v${r.version.number} ${r.version.id} (${r.version.status})`);
    if (r.immutableUrl) lines.push(`  Version URL: ${r.immutableUrl}`);
    if (r.claim) {
      lines.push('');
      lines.push('This space is anonymous. Claim it to keep it:');
      lines.push(`  Claim:    ${r.claim.claimUrl}`);
      if (r.claim.expiresAt) lines.push(`  Expires:  ${r.claim.expiresAt} unless claimed`);
      lines.push('  Or run `spaces login` and then `spaces spaces claim`.');
    }
    return lines.join('\n');
  });
}
