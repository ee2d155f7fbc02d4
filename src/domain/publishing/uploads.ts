import { PassThrough, type Readable } from 'node:stream';
import type { Logger } from 'pino';
import tar from 'tar-stream';
import { BlobMismatchError } from '../../blobs/port.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors/problem.ts';
import { isCompressible } from '../../site/compress.ts';
import type { ManifestEntry } from '../../site/types.ts';
import type { Store } from '../../store/repos/index.ts';
import type { SpaceRow } from '../spaces/service.ts';
import type { BlobIndex } from './blob-index.ts';
import { compressPool } from './compress-pool.ts';
import {
  COMPRESS_GROUP_BYTES,
  COMPRESS_GROUP_FILES,
  contentTypeOf,
  type DeclaredFile,
  MAX_COMPRESS_BYTES,
  UPLOAD_TOKEN_TTL_MS,
  type UploadTarget,
  type VersionRow,
} from './model.ts';
import { canonicalPath } from './paths.ts';
import type { UploadTokens } from './tokens.ts';
import type { VersionService } from './versions.ts';

/** Tar entries up to this size are held in memory (verified, written and compressed from there). */
const MAX_BUFFERED_ENTRY_BYTES = 1024 * 1024;
/** Uploading versions whose upload plan is kept in memory. */
const UPLOAD_PLANS = 8;

/** What a version's tar batches are checked against (see `plan`). */
interface UploadPlan {
  declared: Map<string, { path: string; source_sha256: string; source_size: number }>;
  compressible: Set<string>;
}

/** A declared digest or size the bytes did not match, as the upload's problem. */
export function mismatchProblem(err: BlobMismatchError, p: string): ApiError {
  return err.kind === 'hash'
    ? new ApiError('upload_hash_mismatch', `The bytes for "${p}" do not hash to the declared sha256.`, {
        details: { path: p, expected: err.expected, actual: err.actual },
      })
    : new ApiError('upload_size_mismatch', `The bytes for "${p}" are not the declared size.`, {
        details: { path: p, expected: err.expected, actual: err.actual },
      });
}

/**
 * Uploads of the versions flow: signed URLs for the bytes the store lacks, one file per signed PUT,
 * or a tar batch per request checked against the manifest. Bytes are recorded in the blob index
 * only once durable.
 */
export class UploadService {
  /** Upload plans of recently uploading versions, oldest first (see `plan`). */
  private readonly plans = new Map<string, Promise<UploadPlan>>();

  constructor(
    private readonly store: Store,
    private readonly index: BlobIndex,
    private readonly versions: VersionService,
    private readonly tokens: UploadTokens,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly log: Logger,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  private mismatch(err: BlobMismatchError, p: string): ApiError {
    return mismatchProblem(err, p);
  }

  /** Signed upload URLs for the declared bytes the store lacks (one per distinct blob). */
  async targets(
    version: VersionRow,
    files: DeclaredFile[],
    known?: Map<string, string | null>,
  ): Promise<UploadTarget[]> {
    const k = known ?? (await this.index.known(files.map((f) => f.sha256)));
    const missing = new Set(files.map((f) => f.sha256).filter((d) => !k.has(d)));
    const nowMs = this.clock.now().getTime();
    const expMs = Math.min(nowMs + UPLOAD_TOKEN_TTL_MS, Date.parse(version.expires_at ?? '') || Infinity);
    const exp = Math.floor(expMs / 1000);
    const expiresAt = new Date(exp * 1000).toISOString();
    const base = `${this.config.publicUrl}/v1/uploads/`;
    const targets: UploadTarget[] = [];
    for (const f of files) {
      if (!missing.delete(f.sha256)) continue;
      const token = this.tokens.sign({
        versionId: version.id,
        path: f.path,
        sha256: f.sha256,
        size: f.size,
        exp,
      });
      targets.push({
        path: f.path,
        sha256: f.sha256,
        size: f.size,
        method: 'PUT',
        url: base + token,
        expiresAt,
      });
    }
    return targets;
  }

  /**
   * The declared files of an uploading version whose bytes the store lacked when first asked (one
   * query; few on an incremental publish), and which of their digests are compressible. Kept for the
   * version's next batches (a CLI sends several): a version's rows don't change while it uploads, and
   * a path whose bytes a batch has stored since is just stored again (same digest, same bytes) if it
   * is sent again. An entry outside the plan is looked up on its own: declared, or refused.
   */
  private plan(versionId: string): Promise<UploadPlan> {
    const hit = this.plans.get(versionId);
    if (hit) return hit;
    const plan = (async (): Promise<UploadPlan> => {
      const rows = await this.store.repos.versionFiles.withoutBlobs(versionId);
      const compressible = new Set<string>();
      for (const r of rows) {
        if (r.source_size <= MAX_COMPRESS_BYTES && isCompressible(contentTypeOf(r.path), r.source_size))
          compressible.add(r.source_sha256);
      }
      return { declared: new Map(rows.map((r) => [r.path, r])), compressible };
    })();
    this.plans.set(versionId, plan);
    // A failed query is not kept; a few recent versions are.
    plan.catch(() => this.plans.delete(versionId));
    while (this.plans.size > UPLOAD_PLANS) this.plans.delete(this.plans.keys().next().value!);
    return plan;
  }

  /** Drops a version's plan (it finalizes: no more batches). */
  forget(versionId: string): void {
    this.plans.delete(versionId);
  }

  /** The declared manifest of a version still taking uploads; refuses closed versions. */
  private async open(versionId: string): Promise<VersionRow> {
    const v = await this.store.repos.versions.byId(versionId);
    if (!v) throw new ApiError('version_not_found', 'The version no longer exists.');
    if (v.status === 'expired')
      throw new ApiError('version_expired', 'The version expired before it was finalized.');
    if (v.status !== 'uploading') {
      throw new ApiError('version_not_finalizable', `The version is ${v.status}; it takes no more files.`);
    }
    return v;
  }

  /** `PUT /v1/uploads/<token>`: the bytes named by a signed token. */
  async acceptToken(
    token: string,
    body: Readable,
    contentLength: number | null,
  ): Promise<{
    created: boolean;
    spaceId: string;
    grant: { versionId: string; path: string; sha256: string; size: number };
  }> {
    const grant = this.tokens.verify(token, this.clock.now().getTime());
    const v = await this.open(grant.versionId);
    const declared = await this.store.repos.versionFiles.declared(grant.versionId, grant.path);
    if (!declared || declared.source_sha256 !== grant.sha256 || declared.source_size !== grant.size) {
      throw new ApiError('upload_path_not_declared', `"${grant.path}" is not declared with these bytes.`, {
        details: { path: grant.path },
      });
    }
    if (contentLength !== null && contentLength !== grant.size) {
      body.resume();
      throw this.mismatch(new BlobMismatchError('size', grant.size, contentLength), grant.path);
    }
    // The store gets its own stream over the client's bytes: a store that fails destroys what it was
    // given, and the caller still needs the request to answer with a problem.
    const bytes = new PassThrough();
    body.on('error', (err) => bytes.destroy(err));
    body.pipe(bytes);
    let created: boolean;
    try {
      ({ created } = await this.index.blobs.put(grant.sha256, grant.size, bytes));
    } catch (err) {
      body.unpipe(bytes);
      body.resume();
      if (err instanceof BlobMismatchError) throw this.mismatch(err, grant.path);
      throw err;
    }
    await this.store.repos.blobRecords.record([{ sha256: grant.sha256, size: grant.size }], this.now());
    return { created, spaceId: v.space_id, grant };
  }

  /**
   * Batch upload: a tar stream whose entries are named by path. Every entry is checked against the
   * manifest. Small entries are held in memory, verified, written in the background and — when a
   * declared path makes them compressible — compressed to br/gzip variants on the worker pool while
   * the stream is still arriving, so finalize has nothing left to compress. The blobs (variants
   * included) are made durable together, then recorded in one transaction. A failure stores nothing
   * of it.
   */
  async acceptTar(
    space: SpaceRow,
    ref: string,
    body: Readable,
  ): Promise<{ version: VersionRow; received: number; stored: number; bytes: number }> {
    const v = await this.versions.resolve(space, ref);
    await this.open(v.id);
    const { declared, compressible } = await this.plan(v.id);
    const known = new Set<string>();
    const lookup = async (pth: string) => {
      const hit = declared.get(pth);
      if (hit) return hit;
      const r = await this.store.repos.versionFiles.at(v, pth);
      // Declared with bytes the store already holds: accepted and skipped.
      if (r) known.add(r.source_sha256);
      return r ?? null;
    };
    const batch = this.index.blobs.beginBatch?.() ?? null;
    /** Blobs stored (`recorded`: already handed to the batch's `record`). */
    const written: Array<{ sha256: string; size: number; variants?: string | null; recorded?: boolean }> = [];
    const variantBlobs: Array<{ sha256: string; size: number }> = [];
    let received = 0;
    let bytes = 0;

    // Compression groups: many small files per worker message, a few groups in flight. The worker
    // also hashes each file (and its variants), so compressible entries are verified there and
    // stored without a second hash on this thread.
    const pool = compressPool();
    type Grouped = { row: (typeof written)[number]; bytes: Buffer; path: string };
    let group: Grouped[] = [];
    let groupBytes = 0;
    const inflight = new Set<Promise<void>>();
    /** The first failure of a group's storing (a digest mismatch, a failed write). */
    let groupFailure: unknown = null;
    const storeIdentity = async (x: Grouped, verified: boolean) => {
      try {
        await batch!.putBuffer(x.row.sha256, x.bytes, { verified });
      } catch (err) {
        throw err instanceof BlobMismatchError ? this.mismatch(err, x.path) : err;
      }
      bytes += x.row.size;
      written.push(x.row);
    };
    const flush = () => {
      if (!group.length || !batch) return;
      const g = group;
      group = [];
      groupBytes = 0;
      const job: Promise<void> = pool
        .compress(g.map((x) => x.bytes))
        .then(
          async (results) => {
            for (let i = 0; i < g.length; i++) {
              const x = g[i]!;
              const res = results[i]!;
              if (res.sha256 !== x.row.sha256) {
                throw this.mismatch(new BlobMismatchError('hash', x.row.sha256, res.sha256), x.path);
              }
              await storeIdentity(x, true);
              const enc: NonNullable<ManifestEntry['encodings']> = {};
              for (const k of ['br', 'gzip'] as const) {
                const r = res[k];
                if (!r) continue;
                await batch.putBuffer(r.sha256, r.bytes, { verified: true });
                enc[k] = { sha256: r.sha256, size: r.bytes.length };
              }
              x.row.variants = JSON.stringify(enc);
              const variants = Object.values(enc);
              if (batch.record) {
                // Recorded with the transaction that holds (or follows) their bytes.
                batch.record([...variants, x.row], this.now());
                x.row.recorded = true;
              } else variantBlobs.push(...variants);
            }
          },
          async (err) => {
            // Not fatal: the files are hashed and stored here; finalize computes the variants.
            this.log.warn({ err }, 'compression pool failed; variants left to finalize');
            for (const x of g) await storeIdentity(x, false);
          },
        )
        .catch((err) => {
          groupFailure ??= err;
          extract.destroy(err as Error);
        })
        .finally(() => inflight.delete(job));
      inflight.add(job);
    };

    const extract = tar.extract();
    const done = new Promise<void>((resolve, reject) => {
      extract.on('entry', (header, stream, next) => {
        // A cut-off tar fails the entry stream too, maybe before anything reads it or after a
        // failure stopped reading it: the extractor's own `error` reports it (tar-stream's iterator
        // does the same).
        stream.on('error', () => {});
        const check = async (): Promise<{
          decl: { source_sha256: string; source_size: number };
          pth: string;
        } | null> => {
          if (header.type === 'directory') return null;
          if (header.type !== 'file' && header.type !== 'contiguous-file') {
            throw new ApiError('upload_path_not_declared', `"${header.name}" is not a plain file.`, {
              details: { path: header.name, type: header.type },
            });
          }
          const c = canonicalPath(header.name);
          const pth = 'path' in c ? c.path : header.name;
          entryPath = pth;
          const decl = await lookup(pth);
          if (!decl) {
            throw new ApiError('upload_path_not_declared', `"${pth}" is not in the version’s manifest.`, {
              details: { path: pth },
            });
          }
          received++;
          if ((header.size ?? 0) !== decl.source_size) {
            throw this.mismatch(new BlobMismatchError('size', decl.source_size, header.size ?? 0), pth);
          }
          if (known.has(decl.source_sha256)) return null;
          known.add(decl.source_sha256);
          return { decl, pth };
        };
        const failEntry = (err: unknown) => {
          stream.resume();
          extract.destroy(err instanceof BlobMismatchError ? this.mismatch(err, entryPath) : (err as Error));
        };
        let entryPath = header.name;
        check().then((todo) => {
          if (!todo) {
            stream.on('end', () => next());
            stream.resume();
            return;
          }
          store(todo.decl, todo.pth);
        }, failEntry);
        const store = (decl: { source_sha256: string; source_size: number }, pth: string) => {
          entryPath = pth;
          const row = { sha256: decl.source_sha256, size: decl.source_size } as (typeof written)[number];
          if (batch && decl.source_size <= MAX_BUFFERED_ENTRY_BYTES) {
            const parts: Buffer[] = [];
            stream.on('data', (c) => parts.push(c as Buffer));
            stream.on('end', () => {
              const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
              (async () => {
                if (buf.length !== decl.source_size) {
                  throw new BlobMismatchError('size', decl.source_size, buf.length);
                }
                if (compressible.has(decl.source_sha256)) {
                  // Verified, stored and compressed together once its group comes back.
                  group.push({ row, bytes: buf, path: pth });
                  groupBytes += buf.length;
                  if (group.length >= COMPRESS_GROUP_FILES || groupBytes >= COMPRESS_GROUP_BYTES) flush();
                  while (inflight.size >= pool.size * 2) await Promise.race(inflight);
                  return;
                }
                await batch.putBuffer(decl.source_sha256, buf);
                bytes += decl.source_size;
                written.push(row);
                if (batch.record) {
                  batch.record([row], this.now());
                  row.recorded = true;
                }
              })().then(() => next(), failEntry);
            });
            return;
          }
          (async () => {
            if (batch) await batch.put(decl.source_sha256, decl.source_size, stream as unknown as Readable);
            else
              await this.index.blobs.put(decl.source_sha256, decl.source_size, stream as unknown as Readable);
            bytes += decl.source_size;
            written.push(row);
          })().then(() => next(), failEntry);
        };
      });
      extract.on('finish', resolve);
      extract.on('close', () => resolve());
      extract.on('error', (err) => reject(err));
    });
    body.on('error', (err) => extract.destroy(err));
    body.pipe(extract);
    try {
      await done;
      flush();
      await Promise.all([...inflight]);
      if (groupFailure) throw groupFailure;
      if (!batch?.commitAndRecord) await batch?.commit();
    } catch (err) {
      await Promise.allSettled([...inflight]);
      await batch?.abort();
      body.resume();
      if (err instanceof ApiError) throw err;
      // A failing disk is a server error, not a malformed body.
      if ((err as NodeJS.ErrnoException).syscall) throw err;
      throw new ApiError('invalid_request', 'The upload body is not a readable tar stream.');
    }
    const now = this.now();
    if (batch?.commitAndRecord) {
      // The store's last transaction writes the records too (one durable commit, off this thread).
      try {
        await batch.commitAndRecord([...variantBlobs, ...written.filter((r) => !r.recorded)], now);
      } catch (err) {
        await batch.abort();
        throw err;
      }
    } else {
      await this.store.transaction(async (repos) => {
        await repos.blobRecords.record(variantBlobs, now);
        await repos.blobRecords.record(written, now);
      });
    }
    return { version: v, received, stored: written.length, bytes };
  }
}
