import { createHash } from 'node:crypto';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import type SQLite from 'better-sqlite3';
import { type ParseError, parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';
import type { Kysely, Transaction } from 'kysely';
import mime from 'mime-types';
import type { Logger } from 'pino';
import tar from 'tar-stream';
import { BlobMismatchError, type BlobStore, readAtMost } from '../../blobs/port.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { ErrorCode } from '../../errors/catalog.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { compileSite } from '../../site/compile.ts';
import { isCompressible } from '../../site/compress.ts';
import type { CompileDiagnostic, ManifestEntry } from '../../site/types.ts';
import { isUniqueViolation, releaseFreePages } from '../../store/db.ts';
import type { DB } from '../../store/schema.ts';
import {
  insertVersionFiles,
  type LayeredVersion,
  updateVersionFiles,
  type VersionFileRow,
  versionFilesQuery,
} from '../../store/version-files.ts';
import type { Principal } from '../auth/principal.ts';
import type { DomainEvents } from '../events.ts';
import { ownHostMatcher } from '../hosts/names.ts';
import type { SpaceRow, SpaceService } from '../spaces/service.ts';
import { validateSettingsFile } from '../spaces/settings-file.ts';
import { compressPool } from './compress-pool.ts';
import { recordBlobs } from './ingest.ts';
import { canonicalPath, isServable, PathSet } from './paths.ts';
import { MAX_TEMPLATE_BYTES, renderTemplate } from './templates.ts';
import type { UploadTokens } from './tokens.ts';
import type { VariableService } from './variables.ts';

export type VersionRow = DB['versions'];
export type { VersionFileRow };

export interface DeclaredFile {
  path: string;
  sha256: string;
  size: number;
}

export interface UploadTarget {
  path: string;
  sha256: string;
  size: number;
  method: 'PUT';
  url: string;
  expiresAt: string;
}

export type ActivationOutcome = 'activated' | 'pending' | 'not_activated' | 'unchanged';

/** The channel a finalized version of a target moves. */
export function channelOfTarget(target: string): 'live' | 'preview' {
  return target === 'preview' ? 'preview' : 'live';
}

/** What both publish flows answer with (the spec's receipt), before presentation. */
export interface PublishResult {
  space: SpaceRow;
  version: VersionRow;
  noop: boolean;
  targets: UploadTarget[];
  outcome: ActivationOutcome;
}

export interface CreateVersionInput {
  files: Array<{ path: string; sha256: string; size: number }>;
  target?: 'production' | 'preview';
  message?: string | null;
  source?: Record<string, unknown> | null;
}

/** Which codes a manifest breach answers with: the versions flow and one-call publish differ. */
export type ManifestFlavour = 'versions' | 'publish';

const CODES: Record<ManifestFlavour, { invalid: ErrorCode; duplicate: ErrorCode; count: ErrorCode }> = {
  versions: {
    invalid: 'invalid_version_path',
    duplicate: 'manifest_duplicate_path',
    count: 'manifest_too_many_files',
  },
  publish: {
    invalid: 'invalid_publish_path',
    duplicate: 'publish_path_collision',
    count: 'version_file_count_exceeded',
  },
};

/** Unfinalized versions expire after this long. */
export const UPLOAD_WINDOW_MS = 24 * 3600_000;
/** Upload URLs stay valid this long (never past the version's own expiry). */
export const UPLOAD_TOKEN_TTL_MS = 3600_000;
export const MAX_CONFIG_BYTES = 256 * 1024;
/** `_redirects` and `_headers` are read whole; larger ones are refused as a diagnostic. */
const MAX_RULES_FILE_BYTES = 4 * 1024 * 1024;
/** Files larger than this are served uncompressed rather than held in memory to compress. */
const MAX_COMPRESS_BYTES = 32 * 1024 * 1024;
/** Tar entries up to this size are held in memory (verified, written and compressed from there). */
const MAX_BUFFERED_ENTRY_BYTES = 1024 * 1024;
/** A compression group closes at this many files or bytes, whichever comes first. */
const COMPRESS_GROUP_FILES = 256;
const COMPRESS_GROUP_BYTES = 2 * 1024 * 1024;
const CHANNEL_NAME = /^[a-z0-9-]{1,32}$/;
const CHUNK = 300;
/**
 * File rows of flat versions kept in memory for layering: ~500 bytes each, so at most ~50 MB (ten
 * bases of 10,000 files). A base not in memory is read again (one query).
 */
const FLAT_CACHE_ROWS = 100_000;
/** Uploading versions whose upload plan is kept in memory. */
const UPLOAD_PLANS = 8;
/**
 * A stored blob a new version relies on is touched (`blobs.used_at`) when its row is older than this;
 * the sweep's grace period must be at least twice as long (see `knownBlobs`).
 */
export const BLOB_TOUCH_INTERVAL_MS = 10 * 60_000;

/** What a version's tar batches are checked against (see `uploadPlan`). */
interface UploadPlan {
  declared: Map<string, { path: string; source_sha256: string; source_size: number }>;
  compressible: Set<string>;
}

/**
 * Deletes the file rows of a deleted or expired version unless a live layer (any state but deleted
 * or expired) is built on it. Callers hold the transaction in which the version's state changed.
 */
async function dropRowsIfUnused(trx: Transaction<DB>, versionId: string): Promise<void> {
  const v = await trx.selectFrom('versions').select('status').where('id', '=', versionId).executeTakeFirst();
  if (!v || (v.status !== 'deleted' && v.status !== 'expired')) return;
  const layer = await trx
    .selectFrom('versions')
    .select('id')
    .where('base_id', '=', versionId)
    .where('status', 'not in', ['deleted', 'expired'])
    .limit(1)
    .executeTakeFirst();
  if (!layer) await trx.deleteFrom('version_files').where('version_id', '=', versionId).execute();
}

/** A version whose file list is asked for. */
type ListedVersion = LayeredVersion & { status: string };

/**
 * Deleted and expired versions list no files (a deleted base keeps its rows only for the layers
 * built on it).
 */
const gone = (v: ListedVersion) => v.status === 'deleted' || v.status === 'expired';

/** Path order as JavaScript compares strings (UTF-16 code units), the same on every database. */
const byPathOrder = (a: { path: string }, b: { path: string }) =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : 0;

/** Thrown inside create's transaction when the chosen base version is no longer ready. */
class BaseGone extends Error {}

/** A map of row lists bounded by their total length; least recently used lists go first. */
class RowsCache {
  private readonly lists = new Map<string, VersionFileRow[]>();
  private total = 0;
  constructor(private readonly maxRows: number) {}

  get(key: string): VersionFileRow[] | undefined {
    const hit = this.lists.get(key);
    if (hit) {
      this.lists.delete(key);
      this.lists.set(key, hit);
    }
    return hit;
  }

  set(key: string, rows: VersionFileRow[]): void {
    if (rows.length > this.maxRows) return;
    this.delete(key);
    this.lists.set(key, rows);
    this.total += rows.length;
    for (const [k, v] of this.lists) {
      if (this.total <= this.maxRows) break;
      this.lists.delete(k);
      this.total -= v.length;
    }
  }

  delete(key: string): void {
    const hit = this.lists.get(key);
    if (!hit) return;
    this.lists.delete(key);
    this.total -= hit.length;
  }
}

export function chunks<T>(items: T[], n = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}

/** Identical content ⇔ identical digest: paths, digests and sizes, in path order. */
export function manifestDigest(files: DeclaredFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    h.update(`${f.path}\0${f.sha256}\0${f.size}\n`);
  }
  return h.digest('hex');
}

export function contentTypeOf(p: string): string {
  const t = mime.lookup(p);
  if (!t) return 'application/octet-stream';
  return mime.contentType(t) || t;
}

export interface PublishingDeps {
  db: Kysely<DB>;
  /** SQLite: the connection under `db`, for bulk row writes inside its transactions. */
  sqlite?: SQLite.Database;
  clock: Clock;
  config: Config;
  blobs: BlobStore;
  spaces: SpaceService;
  tokens: UploadTokens;
  variables: VariableService;
  log: Logger;
  /** Told after a channel moved, so the site edge drops what it cached. */
  events?: DomainEvents;
}

/**
 * Versions, uploads, finalize and channels. A version's bytes are content-addressed blobs; a version
 * becomes `ready` (and, for production, `live`) in one transaction, so a publish lands whole or not
 * at all.
 */
export class PublishingService {
  /** Rows of ready flat versions (immutable), most recently used last. */
  private readonly flatCache = new RowsCache(FLAT_CACHE_ROWS);
  /** Upload plans of recently uploading versions, oldest first (see `uploadPlan`). */
  private readonly uploadPlans = new Map<string, Promise<UploadPlan>>();

  constructor(private readonly d: PublishingDeps) {}

  private now(): string {
    return this.d.clock.now().toISOString();
  }

  /** Checks a manifest against path rules and limits; returns canonical entries. Stores nothing. */
  checkManifest(files: CreateVersionInput['files'], flavour: ManifestFlavour): DeclaredFile[] {
    const codes = CODES[flavour];
    const limits = this.d.config.limits;
    if (files.length > limits.maxFilesPerVersion) {
      fail(
        codes.count,
        `A version holds at most ${limits.maxFilesPerVersion} files; this one lists ${files.length}.`,
        {
          pointer: '/files',
          details: { limit: limits.maxFilesPerVersion, count: files.length },
        },
      );
    }
    const seen = new PathSet();
    const out: DeclaredFile[] = [];
    let total = 0;
    files.forEach((f, i) => {
      const c = canonicalPath(f.path);
      if ('problem' in c) {
        fail(c.problem === 'too_long' ? 'path_too_long' : codes.invalid, `File ${i}: ${c.reason}.`, {
          pointer: `/files/${i}/path`,
          details: { path: f.path },
        });
      }
      const clash = seen.add(c.path);
      if (clash) {
        fail(
          clash.kind === 'case' ? 'path_case_collision' : codes.duplicate,
          clash.kind === 'case'
            ? `"${c.path}" differs from "${clash.other}" only in letter case.`
            : `"${c.path}" is listed twice.`,
          { pointer: `/files/${i}/path`, details: { path: c.path, collidesWith: clash.other } },
        );
      }
      if (f.size > limits.maxFileBytes) {
        fail('version_file_too_large', `"${c.path}" is larger than ${limits.maxFileBytes} bytes.`, {
          pointer: `/files/${i}/size`,
          details: { path: c.path, limit: limits.maxFileBytes, size: f.size },
        });
      }
      total += f.size;
      if (total > limits.maxVersionBytes) {
        fail(
          'version_total_bytes_exceeded',
          `The files add up to more than ${limits.maxVersionBytes} bytes.`,
          {
            pointer: `/files/${i}/size`,
            details: { limit: limits.maxVersionBytes },
          },
        );
      }
      out.push({ path: c.path, sha256: f.sha256.toLowerCase(), size: f.size });
    });
    return out;
  }

  /**
   * The `variants` column of every stored blob among `shas` (absent = not stored), for a version that
   * is about to rely on them. Rows not used for `BLOB_TOUCH_INTERVAL_MS` are touched (`used_at` = now)
   * before they are answered: the sweep deletes a row only while it is older than its cutoff (at least
   * `2 × BLOB_TOUCH_INTERVAL_MS` back), in the same statement, so it can't take a blob this answer
   * says is stored. A stale row the sweep deleted between the read and the touch is answered as
   * absent, and the publisher uploads those bytes again.
   */
  async knownBlobs(shas: string[]): Promise<Map<string, string | null>> {
    const out = new Map<string, string | null>();
    const nowMs = this.d.clock.now().getTime();
    const now = new Date(nowMs).toISOString();
    const stale = new Date(nowMs - BLOB_TOUCH_INTERVAL_MS).toISOString();
    for (const part of chunks([...new Set(shas)], 500)) {
      const rows = await this.d.db
        .selectFrom('blobs')
        .select(['sha256', 'variants', 'used_at'])
        .where('sha256', 'in', part)
        .execute();
      // Only stale rows are written: a first publish (nothing stored) and a re-publish within the
      // interval write nothing.
      const old = rows.filter((r) => r.used_at < stale).map((r) => r.sha256);
      let gone = new Set<string>();
      if (old.length) {
        const r = await this.d.db
          .updateTable('blobs')
          .set({ used_at: now })
          .where('sha256', 'in', old)
          .where('used_at', '<', stale)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) < old.length) {
          // Some were swept meanwhile (or touched by another publisher: those are still there).
          const still = await this.d.db
            .selectFrom('blobs')
            .select('sha256')
            .where('sha256', 'in', old)
            .execute();
          gone = new Set(old);
          for (const x of still) gone.delete(x.sha256);
        }
      }
      for (const r of rows) if (!gone.has(r.sha256)) out.set(r.sha256, r.variants);
    }
    return out;
  }

  async liveVersion(spaceId: string): Promise<VersionRow | null> {
    const ch = await this.d.db
      .selectFrom('channels')
      .select('version_id')
      .where('space_id', '=', spaceId)
      .where('name', '=', 'live')
      .executeTakeFirst();
    if (!ch) return null;
    return (
      (await this.d.db
        .selectFrom('versions')
        .selectAll()
        .where('id', '=', ch.version_id)
        .executeTakeFirst()) ?? null
    );
  }

  /**
   * Step 1 of the versions flow: records the manifest and answers which bytes still need uploading.
   * Identical content to the live version (production target) creates nothing: a no-op receipt.
   */
  async createVersion(
    p: Principal,
    space: SpaceRow,
    input: CreateVersionInput,
    flavour: ManifestFlavour = 'versions',
    checked?: DeclaredFile[],
  ): Promise<PublishResult> {
    const files = checked ?? this.checkManifest(input.files, flavour);
    const target = input.target ?? 'production';
    const digest = manifestDigest(files);
    const live = await this.liveVersion(space.id);
    if (target === 'production') {
      if (live && live.status === 'ready' && live.manifest_digest === digest) {
        return { space, version: live, noop: true, targets: [], outcome: 'unchanged' };
      }
    }
    const nowMs = this.d.clock.now().getTime();
    const now = new Date(nowMs).toISOString();
    const total = files.reduce((s, f) => s + f.size, 0);
    // Incremental publish: a small change to the live site is stored as a layer over a flat base
    // version (live itself, or live's own base): only added and changed files get a row (and a lookup),
    // removed paths a `removed` row. Everything else is inherited, not copied.
    const baseId = live && live.status === 'ready' ? (live.base_id ?? live.id) : null;
    let layer = baseId ? this.layerOver(await this.flatRows(baseId), files) : null;
    // Content types follow from paths, variants from content already stored: an unchanged file's row
    // is final from the start, so finalize only touches what is new.
    let known = await this.knownBlobs((layer ? layer.fresh : files).map((f) => f.sha256));
    const rowOf = (versionId: string, f: DeclaredFile): VersionFileRow => {
      const contentType = contentTypeOf(f.path);
      const variants = known.get(f.sha256);
      const encodings =
        variants && variants !== '{}' && isCompressible(contentType, f.size) ? variants : null;
      return {
        version_id: versionId,
        path: f.path,
        source_sha256: f.sha256,
        source_size: f.size,
        sha256: f.sha256,
        size: f.size,
        content_type: contentType,
        encodings,
        removed: 0,
      };
    };
    const tombstone = (versionId: string, pth: string): VersionFileRow => ({
      version_id: versionId,
      path: pth,
      source_sha256: '',
      source_size: 0,
      sha256: '',
      size: 0,
      content_type: null,
      encodings: null,
      removed: 1,
    });
    let version: VersionRow | null = null;
    for (let attempt = 0; !version; attempt++) {
      const row: VersionRow = {
        id: newId('ver', nowMs),
        space_id: space.id,
        number: 0,
        status: 'uploading',
        target,
        message: input.message ?? null,
        source: input.source ? JSON.stringify(input.source) : null,
        file_count: files.length,
        total_bytes: total,
        manifest_digest: digest,
        rules: null,
        diagnostics: null,
        config: null,
        created_by: p.userId ?? p.credentialId,
        created_at: now,
        finalized_at: null,
        expires_at: new Date(nowMs + UPLOAD_WINDOW_MS).toISOString(),
        deleted_at: null,
        base_id: null,
      };
      try {
        await this.d.db.transaction().execute(async (trx) => {
          // The base must still be ready, and stays so until this commits: the update locks its row
          // against a concurrent delete (which keeps a base's rows while a layer depends on them).
          if (layer && baseId) {
            const r = await trx
              .updateTable('versions')
              .set({ status: 'ready' })
              .where('id', '=', baseId)
              .where('status', '=', 'ready')
              .executeTakeFirst();
            if (Number(r.numUpdatedRows) !== 1) throw new BaseGone();
          }
          const max = await trx
            .selectFrom('versions')
            .select((eb) => eb.fn.max('number').as('n'))
            .where('space_id', '=', space.id)
            .executeTakeFirst();
          row.number = Number(max?.n ?? 0) + 1;
          row.base_id = layer ? baseId : null;
          await trx.insertInto('versions').values(row).execute();
          const rows = layer
            ? [
                ...layer.fresh.map((f) => rowOf(row.id, f)),
                ...layer.removed.map((pth) => tombstone(row.id, pth)),
              ]
            : files.map((f) => rowOf(row.id, f));
          await insertVersionFiles(trx, rows, this.d.sqlite);
        });
        version = row;
      } catch (err) {
        if (err instanceof BaseGone) {
          // The base was deleted meanwhile: store the version flat; every file needs its lookup.
          layer = null;
          known = await this.knownBlobs(files.map((f) => f.sha256));
          continue;
        }
        // Two versions created at once in one space race for the next number: take the next one.
        if (!isUniqueViolation(err) || attempt > 8) throw err;
      }
    }
    const targets = await this.uploadTargets(version, layer ? layer.fresh : files, known);
    return { space, version, noop: false, targets, outcome: 'pending' };
  }

  /**
   * The manifest against a flat base's rows: `fresh` = entries that are new or differ (path, digest
   * or size), `removed` = base paths the manifest no longer lists. Null when too much changed for a
   * layer to pay off (then the version is stored flat, and becomes the next base).
   */
  private layerOver(
    base: VersionFileRow[],
    files: DeclaredFile[],
  ): { fresh: DeclaredFile[]; removed: string[] } | null {
    if (!base.length) return null;
    const byPath = new Map<string, VersionFileRow>();
    for (const r of base) byPath.set(r.path, r);
    const fresh: DeclaredFile[] = [];
    for (const f of files) {
      const b = byPath.get(f.path);
      if (b) byPath.delete(f.path);
      if (b && b.source_sha256 === f.sha256 && Number(b.source_size) === f.size) continue;
      fresh.push(f);
    }
    const removed = [...byPath.keys()];
    if (fresh.length + removed.length > Math.max(16, files.length / 4)) return null;
    return { fresh, removed };
  }

  /**
   * Every row of a ready flat version. Such rows never change, so they are kept in memory (bounded
   * by row count): a re-publish diffs against its base, and finalize composes its files, without
   * reading the base again. Callers must not mutate the rows.
   */
  private async flatRows(versionId: string): Promise<VersionFileRow[]> {
    const hit = this.flatCache.get(versionId);
    if (hit) return hit;
    const rows = await this.d.db
      .selectFrom('version_files')
      .selectAll()
      .where('version_id', '=', versionId)
      .execute();
    rows.sort(byPathOrder);
    this.flatCache.set(versionId, rows);
    return rows;
  }

  /** Signed upload URLs for the declared bytes the store lacks (one per distinct blob). */
  async uploadTargets(
    version: VersionRow,
    files: DeclaredFile[],
    known?: Map<string, string | null>,
  ): Promise<UploadTarget[]> {
    const k = known ?? (await this.knownBlobs(files.map((f) => f.sha256)));
    const missing = new Set(files.map((f) => f.sha256).filter((d) => !k.has(d)));
    const nowMs = this.d.clock.now().getTime();
    const expMs = Math.min(nowMs + UPLOAD_TOKEN_TTL_MS, Date.parse(version.expires_at ?? '') || Infinity);
    const exp = Math.floor(expMs / 1000);
    const expiresAt = new Date(exp * 1000).toISOString();
    const base = `${this.d.config.publicUrl}/v1/uploads/`;
    const targets: UploadTarget[] = [];
    for (const f of files) {
      if (!missing.delete(f.sha256)) continue;
      const token = this.d.tokens.sign({
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
  private uploadPlan(versionId: string): Promise<UploadPlan> {
    const hit = this.uploadPlans.get(versionId);
    if (hit) return hit;
    const plan = (async (): Promise<UploadPlan> => {
      const rows = await this.d.db
        .selectFrom('version_files as vf')
        .leftJoin('blobs as b', 'b.sha256', 'vf.source_sha256')
        .select(['vf.path', 'vf.source_sha256', 'vf.source_size'])
        .where('vf.version_id', '=', versionId)
        .where('vf.removed', '=', 0)
        .where('b.sha256', 'is', null)
        .execute();
      const compressible = new Set<string>();
      for (const r of rows) {
        if (r.source_size <= MAX_COMPRESS_BYTES && isCompressible(contentTypeOf(r.path), r.source_size))
          compressible.add(r.source_sha256);
      }
      return { declared: new Map(rows.map((r) => [r.path, r])), compressible };
    })();
    this.uploadPlans.set(versionId, plan);
    // A failed query is not kept; a few recent versions are.
    plan.catch(() => this.uploadPlans.delete(versionId));
    while (this.uploadPlans.size > UPLOAD_PLANS)
      this.uploadPlans.delete(this.uploadPlans.keys().next().value!);
    return plan;
  }

  /** The declared manifest of a version still taking uploads; refuses closed versions. */
  private async openVersion(versionId: string): Promise<VersionRow> {
    const v = await this.d.db
      .selectFrom('versions')
      .selectAll()
      .where('id', '=', versionId)
      .executeTakeFirst();
    if (!v) throw new ApiError('version_not_found', 'The version no longer exists.');
    if (v.status === 'expired')
      throw new ApiError('version_expired', 'The version expired before it was finalized.');
    if (v.status !== 'uploading') {
      throw new ApiError('version_not_finalizable', `The version is ${v.status}; it takes no more files.`);
    }
    return v;
  }

  private mismatch(err: BlobMismatchError, p: string): ApiError {
    return err.kind === 'hash'
      ? new ApiError('upload_hash_mismatch', `The bytes for "${p}" do not hash to the declared sha256.`, {
          details: { path: p, expected: err.expected, actual: err.actual },
        })
      : new ApiError('upload_size_mismatch', `The bytes for "${p}" are not the declared size.`, {
          details: { path: p, expected: err.expected, actual: err.actual },
        });
  }

  /** `PUT /v1/uploads/<token>`: the bytes named by a signed token. */
  async acceptTokenUpload(
    token: string,
    body: Readable,
    contentLength: number | null,
  ): Promise<{ created: boolean; grant: { versionId: string; path: string; sha256: string; size: number } }> {
    const grant = this.d.tokens.verify(token, this.d.clock.now().getTime());
    await this.openVersion(grant.versionId);
    const declared = await this.d.db
      .selectFrom('version_files')
      .select(['source_sha256', 'source_size'])
      .where('version_id', '=', grant.versionId)
      .where('path', '=', grant.path)
      .where('removed', '=', 0)
      .executeTakeFirst();
    if (!declared || declared.source_sha256 !== grant.sha256 || declared.source_size !== grant.size) {
      throw new ApiError('upload_path_not_declared', `"${grant.path}" is not declared with these bytes.`, {
        details: { path: grant.path },
      });
    }
    if (contentLength !== null && contentLength !== grant.size) {
      body.resume();
      throw this.mismatch(new BlobMismatchError('size', grant.size, contentLength), grant.path);
    }
    let created: boolean;
    try {
      ({ created } = await this.d.blobs.put(grant.sha256, grant.size, body));
    } catch (err) {
      if (err instanceof BlobMismatchError) throw this.mismatch(err, grant.path);
      throw err;
    }
    await recordBlobs(this.d.db, [{ sha256: grant.sha256, size: grant.size }], this.now());
    return { created, grant };
  }

  /**
   * Batch upload: a tar stream whose entries are named by path. Every entry is checked against the
   * manifest. Small entries are held in memory, verified, written in the background and — when a
   * declared path makes them compressible — compressed to br/gzip variants on the worker pool while
   * the stream is still arriving, so finalize has nothing left to compress. The blobs (variants
   * included) are made durable together, then recorded in one transaction. A failure stores nothing
   * of it.
   */
  async acceptTarUpload(
    space: SpaceRow,
    ref: string,
    body: Readable,
  ): Promise<{ version: VersionRow; received: number; stored: number; bytes: number }> {
    const v = await this.resolveVersion(space, ref);
    await this.openVersion(v.id);
    const { declared, compressible } = await this.uploadPlan(v.id);
    const known = new Set<string>();
    const lookup = async (pth: string) => {
      const hit = declared.get(pth);
      if (hit) return hit;
      const r = await this.d.db
        .selectFrom(versionFilesQuery(this.d.db, v).as('f'))
        .select(['path', 'source_sha256', 'source_size'])
        .where('path', '=', pth)
        .executeTakeFirst();
      // Declared with bytes the store already holds: accepted and skipped.
      if (r) known.add(r.source_sha256);
      return r ?? null;
    };
    const batch = this.d.blobs.beginBatch?.() ?? null;
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
            this.d.log.warn({ err }, 'compression pool failed; variants left to finalize');
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
            else await this.d.blobs.put(decl.source_sha256, decl.source_size, stream as unknown as Readable);
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
      await this.d.db.transaction().execute(async (trx) => {
        await recordBlobs(trx, variantBlobs, now);
        await recordBlobs(trx, written, now);
      });
    }
    return { version: v, received, stored: written.length, bytes };
  }

  /** `ver_…`, `v12` / `12` (the space's twelfth version) or `latest`. */
  async resolveVersion(
    space: SpaceRow,
    ref: string,
    db: Kysely<DB> | Transaction<DB> = this.d.db,
  ): Promise<VersionRow> {
    let q = db.selectFrom('versions').selectAll().where('space_id', '=', space.id);
    const num = /^v?(\d{1,9})$/.exec(ref);
    if (ref === 'latest') q = q.where('status', '!=', 'deleted').orderBy('number', 'desc').limit(1);
    else if (num) q = q.where('number', '=', Number(num[1]));
    else q = q.where('id', '=', ref);
    const v = await q.executeTakeFirst();
    if (!v) throw new ApiError('version_not_found', `Version ${ref} was not found in this space.`);
    return v;
  }

  /** Every file of a version, by path (a layered version's inherited rows included). */
  async files(version: ListedVersion): Promise<VersionFileRow[]> {
    if (gone(version)) return [];
    const rows = await versionFilesQuery(this.d.db, version).execute();
    return rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  private async readBlob(sha256: string, max: number): Promise<Buffer> {
    return readAtMost(await this.d.blobs.get(sha256), max, () => new Error('blob larger than expected'));
  }

  private async putBuffer(buf: Buffer): Promise<{ sha256: string; size: number }> {
    const sha256 = createHash('sha256').update(buf).digest('hex');
    const s = new PassThrough();
    s.end(buf);
    await this.d.blobs.put(sha256, buf.length, s);
    return { sha256, size: buf.length };
  }

  /**
   * br/gzip variants for blobs that never had them computed (uploaded one by one, or rendered from a
   * template): compressed once per content on the worker pool, stored as one durable batch, recorded
   * on the source blob's row (later versions reuse them for free).
   */
  private async computeVariants(
    todo: Array<{ sha256: string; size: number }>,
  ): Promise<Map<string, NonNullable<ManifestEntry['encodings']>>> {
    const out = new Map<string, NonNullable<ManifestEntry['encodings']>>();
    if (!todo.length) return out;
    const batch = this.d.blobs.beginBatch?.() ?? null;
    const stored: Array<{ sha256: string; size: number }> = [];
    const put = async (sha256: string, buf: Buffer) => {
      if (batch) await batch.putBuffer(sha256, buf);
      else {
        const s = new PassThrough();
        s.end(buf);
        await this.d.blobs.put(sha256, buf.length, s);
      }
      stored.push({ sha256, size: buf.length });
      return { sha256, size: buf.length };
    };
    const pool = compressPool();
    const small = todo.filter((b) => b.size <= MAX_COMPRESS_BYTES);
    for (const b of todo) if (b.size > MAX_COMPRESS_BYTES) out.set(b.sha256, {});
    let next = 0;
    const work = async () => {
      while (next < small.length) {
        // Read a group, compress it in one worker message, store what was kept.
        const g: Array<{ sha256: string; size: number; bytes: Buffer }> = [];
        let n = 0;
        while (next < small.length && g.length < COMPRESS_GROUP_FILES && n < COMPRESS_GROUP_BYTES) {
          const b = small[next++]!;
          g.push({ ...b, bytes: Buffer.alloc(0) });
          n += b.size;
        }
        await Promise.all(
          g.map(async (x) => {
            x.bytes = await this.readBlob(x.sha256, x.size);
          }),
        );
        const results = await pool.compress(g.map((x) => x.bytes));
        for (let i = 0; i < g.length; i++) {
          const enc: NonNullable<ManifestEntry['encodings']> = {};
          for (const k of ['br', 'gzip'] as const) {
            const r = results[i]![k];
            if (r) enc[k] = await put(r.sha256, r.bytes);
          }
          out.set(g[i]!.sha256, enc);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: pool.size + 1 }, work));
      await batch?.commit();
    } catch (err) {
      await batch?.abort();
      throw err;
    }
    const now = this.now();
    await this.d.db.transaction().execute(async (trx) => {
      await recordBlobs(trx, stored, now);
      await recordBlobs(
        trx,
        todo.map((b) => ({
          sha256: b.sha256,
          size: b.size,
          variants: JSON.stringify(out.get(b.sha256) ?? {}),
        })),
        now,
      );
    });
    return out;
  }

  /**
   * Validates the whole snapshot, compiles its serving inputs, renders templates, precomputes
   * compressed variants, then in ONE transaction marks it `ready` and (production) moves `live`.
   * Blocking diagnostics mark it `failed` and leave `live` alone.
   */
  async finalize(p: Principal, space: SpaceRow, ref: string): Promise<PublishResult> {
    const v = await this.resolveVersion(space, ref);
    this.uploadPlans.delete(v.id);
    if (v.status === 'expired')
      throw new ApiError('version_expired', 'The version expired before it was finalized.');
    if (v.status !== 'uploading') {
      throw new ApiError(
        'version_not_finalizable',
        `The version is ${v.status}; only an uploading version finalizes.`,
        {
          details: { status: v.status },
        },
      );
    }
    // The version's own rows and what the store holds of them, in one query; a layered version's
    // inherited rows come from its base (ready, so its blobs are stored and its rows final).
    const joined = await this.d.db
      .selectFrom('version_files as vf')
      .leftJoin('blobs as b', 'b.sha256', 'vf.source_sha256')
      .selectAll('vf')
      .select(['b.sha256 as stored_sha256', 'b.variants as stored_variants'])
      .where('vf.version_id', '=', v.id)
      .execute();
    const stored = new Map<string, string | null>();
    const ownRows: VersionFileRow[] = [];
    const removed = new Set<string>();
    /** Own rows' state at create: finalize writes only rows whose state it changes. */
    const before = new Map<VersionFileRow, string>();
    for (const { stored_sha256, stored_variants, ...r } of joined) {
      if (r.removed) {
        removed.add(r.path);
        continue;
      }
      if (stored_sha256 !== null) stored.set(stored_sha256, stored_variants);
      before.set(r, `${r.sha256}|${r.content_type}|${r.encodings}`);
      ownRows.push(r);
    }
    const missing = new Set(ownRows.map((r) => r.source_sha256).filter((d) => !stored.has(d)));
    ownRows.sort(byPathOrder);
    // Every file in path order; `baseOf[i]` is the base row `rows[i]` was copied from (inherited),
    // null for the version's own rows. Copies carry the source bytes (a template's rendering is redone
    // below); an inherited row's variants are final (its base was finalized).
    let rows: VersionFileRow[] = ownRows;
    const baseOf: Array<VersionFileRow | null> = [];
    if (v.base_id) {
      rows = [];
      const base = await this.flatRows(v.base_id);
      let i = 0;
      const take = () => {
        rows.push(ownRows[i++]!);
        baseOf.push(null);
      };
      for (const b of base) {
        while (i < ownRows.length && ownRows[i]!.path < b.path) take();
        if (i < ownRows.length && ownRows[i]!.path === b.path) take();
        else if (!removed.has(b.path)) {
          rows.push({
            ...b,
            version_id: v.id,
            sha256: b.source_sha256,
            size: b.source_size,
            encodings: b.sha256 === b.source_sha256 ? b.encodings : null,
          });
          baseOf.push(b);
        }
      }
      while (i < ownRows.length) take();
    } else for (let i = 0; i < rows.length; i++) baseOf.push(null);
    /** A row by path (binary search over the sorted rows). */
    const rowAt = (pth: string): VersionFileRow | undefined => {
      let lo = 0;
      let hi = rows.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const p = rows[mid]!.path;
        if (p === pth) return rows[mid];
        if (p < pth) lo = mid + 1;
        else hi = mid - 1;
      }
      return undefined;
    };
    if (missing.size) {
      const paths = rows.filter((r) => missing.has(r.source_sha256)).map((r) => r.path);
      fail('version_files_missing', `${paths.length} declared file(s) were not uploaded.`, {
        details: { paths: paths.slice(0, 1000), count: paths.length },
      });
    }
    if (!rows.some((r) => isServable(r.path))) {
      fail('version_no_publishable_files', 'The version has no file a visitor could be served.', {
        details: { paths: rows.slice(0, 20).map((r) => r.path) },
      });
    }
    const diagnostics: CompileDiagnostic[] = [];

    // The version's own settings file (spaces.jsonc wins over spaces.json).
    let config: Record<string, unknown> | null = null;
    const cfgRow = rowAt('spaces.jsonc') ?? rowAt('spaces.json');
    if (cfgRow) {
      if (cfgRow.size > MAX_CONFIG_BYTES) {
        diagnostics.push({
          code: 'config_file_too_large',
          severity: 'error',
          message: `${cfgRow.path} is larger than ${MAX_CONFIG_BYTES} bytes.`,
          path: cfgRow.path,
        });
      } else {
        const text = (await this.readBlob(cfgRow.sha256, cfgRow.size)).toString('utf8');
        const errors: ParseError[] = [];
        const value = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
        if (errors.length) {
          const e = errors[0]!;
          const line = text.slice(0, e.offset).split('\n').length;
          diagnostics.push({
            code: 'config_invalid',
            severity: 'error',
            message: `${cfgRow.path} is not valid JSON: ${printParseErrorCode(e.error)}.`,
            path: `${cfgRow.path}:${line}`,
          });
        } else {
          const file = validateSettingsFile(value, '/spaces.json');
          config = file.config;
          for (const d of file.diagnostics) diagnostics.push({ ...d, path: cfgRow.path });
        }
      }
    }

    // Templates: from the version's config and the space's overlay.
    const overlay = space.config ? (JSON.parse(space.config) as Record<string, unknown>) : null;
    const templateList = new Set<string>();
    for (const src of [config?.templates, overlay?.templates]) {
      if (Array.isArray(src))
        for (const t of src) if (typeof t === 'string') templateList.add(t.replace(/^\/+/, ''));
    }
    const vars = templateList.size ? await this.d.variables.forTemplates(space.id) : new Map();
    const rendered: Array<{ path: string; sha256: string; size: number }> = [];
    for (const t of templateList) {
      const row = rowAt(t);
      if (!row) {
        diagnostics.push({
          code: 'template_not_in_version',
          severity: 'error',
          message: `The template "${t}" is not a file of this version.`,
          path: t,
        });
        continue;
      }
      if (row.size > MAX_TEMPLATE_BYTES) {
        diagnostics.push({
          code: 'template_file_too_large',
          severity: 'error',
          message: `The template "${t}" is larger than ${MAX_TEMPLATE_BYTES} bytes.`,
          path: t,
        });
        continue;
      }
      const text = (await this.readBlob(row.sha256, row.size)).toString('utf8');
      const r = renderTemplate(t, text, vars);
      diagnostics.push(...r.diagnostics);
      if (r.diagnostics.length === 0) {
        const blob = await this.putBuffer(Buffer.from(r.text, 'utf8'));
        rendered.push({ path: t, ...blob });
      }
    }
    await recordBlobs(this.d.db, rendered, this.now());
    for (const r of rendered) {
      const row = rowAt(r.path)!;
      row.sha256 = r.sha256;
      row.size = r.size;
    }

    const readText = async (name: string) => {
      const row = rowAt(name);
      if (!row) return null;
      if (row.size > MAX_RULES_FILE_BYTES) {
        diagnostics.push({
          code: 'config_file_too_large',
          severity: 'error',
          message: `${name} is larger than ${MAX_RULES_FILE_BYTES} bytes.`,
          path: name,
        });
        return null;
      }
      return (await this.readBlob(row.sha256, row.size)).toString('utf8');
    };
    const redirectsText = await readText('_redirects');
    const headersText = await readText('_headers');

    // Content types and precomputed compressed variants (once per blob, reused by later versions).
    const variantRows = stored;
    for (const [sha256, v] of await this.knownBlobs(rendered.map((r) => r.sha256)))
      variantRows.set(sha256, v);
    /** An inherited row finalize left as it was: its content type and encodings are final. */
    const untouched = (i: number) => baseOf[i] !== null && rows[i]!.sha256 === baseOf[i]!.sha256;
    const todo = new Map<string, { sha256: string; size: number }>();
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (untouched(i)) continue;
      // Content types were set from the path at create.
      r.content_type ??= contentTypeOf(r.path);
      if (variantRows.get(r.sha256) == null && isCompressible(r.content_type, r.size)) {
        todo.set(r.sha256, { sha256: r.sha256, size: r.size });
      }
    }
    for (const [sha256, enc] of await this.computeVariants([...todo.values()])) {
      variantRows.set(sha256, JSON.stringify(enc));
    }
    // Compiling looks at paths only; a row's encodings are the stored variants JSON as is ('{}' =
    // computed, none worth keeping). Rows are in path order already.
    const entries: ManifestEntry[] = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      const contentType = r.content_type!;
      if (!untouched(i)) {
        const cached = isCompressible(contentType, r.size) ? variantRows.get(r.sha256) : null;
        r.encodings = cached && cached !== '{}' ? cached : null;
      }
      entries.push({ path: r.path, sha256: r.sha256, size: r.size, contentType });
    }

    const plainVars: Record<string, string> = {};
    for (const [k, val] of vars.size ? vars : await this.d.variables.forTemplates(space.id)) {
      if (!val.secret && val.value !== null) plainVars[k] = val.value;
    }
    const compiled = compileSite({
      files: entries,
      redirectsText,
      headersText,
      config,
      vars: plainVars,
      isOwnHost: ownHostMatcher(this.d.config.baseDomain, space.public_name),
    });
    diagnostics.push(...compiled.diagnostics);
    const failed = !compiled.ok || diagnostics.some((x) => x.severity === 'error');
    const now = this.now();

    if (failed) {
      const r = await this.d.db
        .updateTable('versions')
        .set({
          status: 'failed',
          diagnostics: JSON.stringify(diagnostics),
          finalized_at: now,
          expires_at: null,
        })
        .where('id', '=', v.id)
        .where('status', '=', 'uploading')
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) {
        throw new ApiError('version_not_finalizable', 'The version was finalized by another request.');
      }
      throw new ApiError(
        'version_failed',
        'The version failed to finalize; `details.diagnostics` says why.',
        {
          details: { versionId: v.id, diagnostics },
        },
      );
    }

    let outcome: ActivationOutcome = 'not_activated';
    let flattened = false;
    await this.d.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('versions')
        .set({
          status: 'ready',
          rules: JSON.stringify(compiled.rules ?? null),
          diagnostics: JSON.stringify(diagnostics),
          config: config ? JSON.stringify(config) : null,
          finalized_at: now,
          expires_at: null,
        })
        .where('id', '=', v.id)
        .where('status', '=', 'uploading')
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) {
        throw new ApiError('version_not_finalizable', 'The version was finalized by another request.');
      }
      // Only rows that changed since create are written: few on an incremental publish, all in bulk
      // (delete + batched insert, far cheaper than one UPDATE each) on a first one. A changed inherited
      // row becomes one of the layer's own; a layer with many changes is stored flat instead.
      const changed: VersionFileRow[] = [];
      const overrides: VersionFileRow[] = [];
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        const b = baseOf[i];
        const state = `${r.sha256}|${r.content_type}|${r.encodings}`;
        if (b === null) {
          if (before.get(r) !== state) changed.push(r);
        } else if (!untouched(i) && state !== `${b.sha256}|${b.content_type}|${b.encodings}`) {
          overrides.push(r);
        }
      }
      if (v.base_id && changed.length + overrides.length > 200) {
        // Too much of the layer changed: store it flat.
        await trx.deleteFrom('version_files').where('version_id', '=', v.id).execute();
        await insertVersionFiles(trx, rows, this.d.sqlite);
        await trx.updateTable('versions').set({ base_id: null }).where('id', '=', v.id).execute();
        flattened = true;
      } else if (!this.d.sqlite && changed.length > 200) {
        // Many rows through a network round trip each: rewrite them in bulk (delete + batched insert).
        await trx.deleteFrom('version_files').where('version_id', '=', v.id).execute();
        await insertVersionFiles(trx, rows, this.d.sqlite);
      } else {
        await insertVersionFiles(trx, overrides, this.d.sqlite);
        await updateVersionFiles(trx, changed, this.d.sqlite);
      }
      // A production version goes live; a preview one moves `preview` (served at `preview--<host>`).
      await this.moveChannel(trx, space.id, channelOfTarget(v.target), v.id, p, 'publish');
      outcome = 'activated';
    });
    this.d.events?.spaceChanged(space.id);
    // A flat version is the base of the next re-publish: keep its rows at hand.
    if (!v.base_id || flattened) this.flatCache.set(v.id, rows);
    const version = await this.resolveVersion(space, v.id);
    return { space, version, noop: false, targets: [], outcome };
  }

  /** One pointer update and one history row; the caller owns the transaction. */
  private async moveChannel(
    trx: Transaction<DB>,
    spaceId: string,
    channel: string,
    versionId: string,
    p: Principal,
    reason: string,
  ): Promise<string | null> {
    const current = await trx
      .selectFrom('channels')
      .select('version_id')
      .where('space_id', '=', spaceId)
      .where('name', '=', channel)
      .executeTakeFirst();
    const now = this.now();
    await trx
      .insertInto('channels')
      .values({ space_id: spaceId, name: channel, version_id: versionId, updated_at: now })
      .onConflict((oc) =>
        oc.columns(['space_id', 'name']).doUpdateSet({ version_id: versionId, updated_at: now }),
      )
      .execute();
    await trx
      .insertInto('channel_history')
      .values({
        id: newId('chh', this.d.clock.now().getTime()),
        space_id: spaceId,
        channel,
        version_id: versionId,
        previous_version_id: current?.version_id ?? null,
        actor: p.userId ?? p.credentialId,
        reason,
        created_at: now,
      })
      .execute();
    return current?.version_id ?? null;
  }

  static checkChannelName(name: string): void {
    if (/^v\d+$/.test(name) || name.startsWith('ver-') || name.startsWith('ver_')) {
      fail('channel_name_reserved', `"${name}" is reserved for version addresses.`, { pointer: '/channel' });
    }
    if (!CHANNEL_NAME.test(name)) {
      fail('channel_unsupported', 'Channel names are 1..32 lowercase letters, digits and dashes.', {
        pointer: '/channel',
      });
    }
  }

  /** Moves a channel to a ready version: publish-to-preview, promote and rollback alike. */
  async promote(
    p: Principal,
    space: SpaceRow,
    ref: string,
    channel: string,
    expectedVersionId: string | null | undefined,
  ): Promise<{ version: VersionRow; channel: string; previousVersionId: string | null; updatedAt: string }> {
    PublishingService.checkChannelName(channel);
    const v = await this.resolveVersion(space, ref);
    if (v.status !== 'ready') {
      throw new ApiError(
        'version_not_ready',
        `The version is ${v.status}; only a ready version can be promoted.`,
        {
          details: { status: v.status },
        },
      );
    }
    let previous: string | null = null;
    await this.d.db.transaction().execute(async (trx) => {
      const cur = await trx
        .selectFrom('channels')
        .select('version_id')
        .where('space_id', '=', space.id)
        .where('name', '=', channel)
        .executeTakeFirst();
      const current = cur?.version_id ?? null;
      if (expectedVersionId !== undefined && expectedVersionId !== current) {
        throw new ApiError(
          'channel_pointer_moved',
          `The channel ${channel} points at ${current ?? 'nothing'} now.`,
          {
            details: { channel, currentVersionId: current, expectedVersionId },
          },
        );
      }
      if (current === v.id) {
        throw new ApiError('version_already_live', `The channel ${channel} already points at ${v.id}.`, {
          details: { channel, versionId: v.id },
        });
      }
      previous = await this.moveChannel(trx, space.id, channel, v.id, p, 'promote');
    });
    this.d.events?.spaceChanged(space.id);
    return { version: v, channel, previousVersionId: previous, updatedAt: this.now() };
  }

  async channels(spaceId: string) {
    return this.d.db
      .selectFrom('channels')
      .selectAll()
      .where('space_id', '=', spaceId)
      .orderBy('name')
      .execute();
  }

  async channelHistory(spaceId: string, channel: string, after: string | null, n: number) {
    let q = this.d.db
      .selectFrom('channel_history')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('channel', '=', channel);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  async listVersions(spaceId: string, after: string | null, n: number): Promise<VersionRow[]> {
    let q = this.d.db.selectFrom('versions').selectAll().where('space_id', '=', spaceId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /** Channel names pointing at each of these versions. */
  async channelsOf(versionIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (!versionIds.length) return out;
    const rows = await this.d.db
      .selectFrom('channels')
      .select(['name', 'version_id'])
      .where('version_id', 'in', versionIds)
      .orderBy('name')
      .execute();
    for (const r of rows) out.set(r.version_id, [...(out.get(r.version_id) ?? []), r.name]);
    return out;
  }

  async filesPage(version: ListedVersion, after: string | null, n: number): Promise<VersionFileRow[]> {
    if (gone(version)) return [];
    let q = this.d.db.selectFrom(versionFilesQuery(this.d.db, version).as('f')).selectAll();
    if (after !== null) q = q.where('path', '>', after);
    return q.orderBy('path').limit(n).execute();
  }

  /** A tar.gz of a ready version's files, streamed blob by blob. */
  archive(version: VersionRow): Readable {
    if (version.status !== 'ready') {
      throw new ApiError(
        'version_not_ready',
        `The version is ${version.status}; only ready versions download.`,
      );
    }
    const pack = tar.pack();
    const gz = zlib.createGzip();
    const mtime = new Date(version.finalized_at ?? version.created_at);
    // A failure ends the download with an error (the client sees a cut-off body), never the process:
    // the tar stream's error goes to the gzip stream the response reads.
    pack.on('error', (err) => gz.destroy(err));
    (async () => {
      for (const f of await this.files(version)) {
        await new Promise<void>((resolve, reject) => {
          const entry = pack.entry({ name: f.path, size: f.size, mode: 0o644, mtime }, (err) =>
            err ? reject(err) : resolve(),
          );
          entry.on('error', reject);
          this.d.blobs.get(f.sha256).then((src) => {
            src.on('error', reject);
            src.pipe(entry);
          }, reject);
        });
      }
      pack.finalize();
    })().catch((err) => {
      this.d.log.error({ err, versionId: version.id }, 'archive stream failed');
      pack.destroy(err);
    });
    return pack.pipe(gz);
  }

  async diff(space: SpaceRow, ref: string, against: string) {
    const [a, b] = [await this.resolveVersion(space, ref), await this.resolveVersion(space, against)];
    const [fa, fb] = [await this.files(a), await this.files(b)];
    const base = new Map(fb.map((f) => [f.path, f.sha256]));
    const added: string[] = [];
    const changed: string[] = [];
    for (const f of fa) {
      const old = base.get(f.path);
      if (old === undefined) added.push(f.path);
      else if (old !== f.sha256) changed.push(f.path);
      base.delete(f.path);
    }
    return { version: a, against: b, added, changed, removed: [...base.keys()].sort() };
  }

  async deleteVersion(space: SpaceRow, ref: string): Promise<VersionRow> {
    return this.d.db.transaction().execute(async (trx) => {
      const v = await this.resolveVersion(space, ref, trx);
      if (v.status === 'deleted') return v;
      const ch = await trx
        .selectFrom('channels')
        .select('name')
        .where('version_id', '=', v.id)
        .orderBy('name')
        .execute();
      if (ch.length) {
        throw new ApiError(
          'version_in_use',
          `Channels point at this version: ${ch.map((c) => c.name).join(', ')}.`,
          {
            details: { channels: ch.map((c) => c.name) },
            suggestions: ['Promote another version to those channels first.'],
          },
        );
      }
      const now = this.now();
      await trx
        .updateTable('versions')
        .set({ status: 'deleted', deleted_at: now, expires_at: null })
        .where('id', '=', v.id)
        .execute();
      await dropRowsIfUnused(trx, v.id);
      if (v.base_id) await dropRowsIfUnused(trx, v.base_id);
      return { ...v, status: 'deleted', deleted_at: now, expires_at: null };
    });
  }

  /** Unfinalized versions past their 24 h window become `expired`; their manifests are dropped. */
  async expireStale(now: Date): Promise<number> {
    const stale = await this.d.db
      .selectFrom('versions')
      .select(['id', 'base_id'])
      .where('status', '=', 'uploading')
      .where('expires_at', '<=', now.toISOString())
      .execute();
    for (const { id, base_id } of stale) {
      await this.d.db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('versions')
          .set({ status: 'expired' })
          .where('id', '=', id)
          .where('status', '=', 'uploading')
          .executeTakeFirst();
        if (!Number(r.numUpdatedRows)) return;
        await dropRowsIfUnused(trx, id);
        if (base_id) await dropRowsIfUnused(trx, base_id);
      });
    }
    return stale.length;
  }

  /**
   * Deletes blobs that no ready or still-uploading version references, that no remaining blob lists
   * as one of its compressed variants, and that nothing has stored or relied on for `graceMs`
   * (`blobs.used_at`). Races with publishers are settled per blob, never by the scan alone:
   * - the row is deleted only while it is still older than the cutoff, in that one statement — a
   *   version created since the scan touched the rows it relies on (`knownBlobs`), and an upload
   *   refreshes the row it records;
   * - then the bytes, only if the store has not stored or freshened them since the cutoff (a
   *   publisher that found the row gone uploads them again; `BlobStore.delete`'s `unusedSince`);
   * - a variant goes only after the blob listing it went, in this run or an earlier one.
   * `hooks.afterScan` runs between the scan and the deletions (tests use it to interleave a publish).
   */
  async sweepBlobs(
    now: Date,
    graceMs: number,
    hooks?: { afterScan?: () => Promise<void> },
  ): Promise<{ deleted: number; bytes: number }> {
    if (graceMs < 2 * BLOB_TOUCH_INTERVAL_MS) {
      throw new Error(`the blob grace period must be at least ${2 * BLOB_TOUCH_INTERVAL_MS} ms`);
    }
    const cutoffDate = new Date(now.getTime() - graceMs);
    // Temp files a crash left between write and rename. A day old at least: an upload batch keeps
    // its temp files until it commits, and unfinalized uploads expire after 24 hours anyway.
    await this.d.blobs.removeStaleTemp?.(new Date(now.getTime() - Math.max(graceMs, 24 * 3600_000)));
    const rows = await this.sweepRecordedBlobs(cutoffDate, hooks);
    const unrecorded = await this.sweepUnrecordedBytes(cutoffDate);
    const deleted = rows.deleted + unrecorded.deleted;
    // Small blobs were rows: give their pages back to the file system (SQLite; new databases).
    if (deleted && this.d.sqlite) {
      await releaseFreePages(this.d.sqlite, (step) => this.d.db.connection().execute(async () => step()));
    }
    return { deleted, bytes: rows.bytes + unrecorded.bytes };
  }

  /** The sweep's blobs with a row (see `sweepBlobs`): rows first, then their bytes. */
  private async sweepRecordedBlobs(
    cutoffDate: Date,
    hooks?: { afterScan?: () => Promise<void> },
  ): Promise<{ deleted: number; bytes: number }> {
    const cutoff = cutoffDate.toISOString();
    const candidates = await this.d.db
      .selectFrom('blobs')
      .select(['sha256', 'size', 'variants'])
      .where('used_at', '<', cutoff)
      .execute();
    // Nothing old enough: no need to read what every version references.
    if (!candidates.length) {
      await hooks?.afterScan?.();
      return { deleted: 0, bytes: 0 };
    }
    const bySha = new Map(candidates.map((c) => [c.sha256, c]));
    const variantsOf = (enc: string | null): string[] =>
      enc ? Object.values(JSON.parse(enc) as Record<string, { sha256: string }>).map((e) => e.sha256) : [];
    const referenced = new Set<string>();
    const live = await this.d.db
      .selectFrom('version_files')
      .innerJoin('versions', 'versions.id', 'version_files.version_id')
      .select(['version_files.sha256', 'version_files.source_sha256', 'version_files.encodings'])
      .where('versions.status', 'in', ['ready', 'uploading'])
      .where('version_files.removed', '=', 0)
      .execute();
    // A deleted base's rows that a live layer inherits (neither overrides nor removes) are still
    // that layer's files.
    const inherited = await this.d.db
      .selectFrom('version_files as b')
      .innerJoin('versions as layer', 'layer.base_id', 'b.version_id')
      .innerJoin('versions as base', 'base.id', 'b.version_id')
      .select(['b.sha256', 'b.source_sha256', 'b.encodings'])
      .where('layer.status', 'in', ['ready', 'uploading'])
      .where('base.status', 'not in', ['ready', 'uploading'])
      .where('b.removed', '=', 0)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('version_files as o')
              .select('o.path')
              .whereRef('o.version_id', '=', 'layer.id')
              .whereRef('o.path', '=', 'b.path'),
          ),
        ),
      )
      .execute();
    for (const r of [...live, ...inherited]) {
      referenced.add(r.sha256);
      referenced.add(r.source_sha256);
      for (const v of variantsOf(r.encodings)) referenced.add(v);
    }
    // Which rows list each candidate as a variant: a later version reuses variants from the row of
    // their source, so they stay as long as that row does.
    const listers = new Map<string, Set<string>>();
    const withVariants = await this.d.db
      .selectFrom('blobs')
      .select(['sha256', 'variants'])
      .where('variants', 'is not', null)
      .where('variants', '!=', '{}')
      .execute();
    for (const r of withVariants) {
      for (const v of variantsOf(r.variants)) {
        if (!bySha.has(v)) continue;
        const l = listers.get(v) ?? new Set<string>();
        l.add(r.sha256);
        listers.set(v, l);
      }
    }
    await hooks?.afterScan?.();
    let deleted = 0;
    let bytes = 0;
    const sweep = async (c: (typeof candidates)[number]): Promise<void> => {
      if (referenced.has(c.sha256) || listers.get(c.sha256)?.size) return;
      bySha.delete(c.sha256);
      const r = await this.d.db
        .deleteFrom('blobs')
        .where('sha256', '=', c.sha256)
        .where('used_at', '<', cutoff)
        .executeTakeFirst();
      // Stored again or relied on since the scan: it stays (and so do its variants).
      if (!Number(r.numDeletedRows)) return;
      if (await this.d.blobs.delete(c.sha256, { unusedSince: cutoffDate })) {
        deleted++;
        bytes += c.size;
      }
      for (const v of variantsOf(c.variants)) {
        const l = listers.get(v);
        l?.delete(c.sha256);
        const vc = bySha.get(v);
        if (vc && !l?.size) await sweep(vc);
      }
    };
    for (const c of candidates) if (bySha.has(c.sha256)) await sweep(c);
    return { deleted, bytes };
  }

  /**
   * Bytes no row records: stored by an upload that never recorded them (a crash or a failed batch in
   * between), or stored again by a publisher while the sweep deleted their row and then not recorded.
   * Taken once nothing has stored them since `cutoffDate`, like the rest.
   */
  private async sweepUnrecordedBytes(cutoffDate: Date): Promise<{ deleted: number; bytes: number }> {
    let deleted = 0;
    let bytes = 0;
    let page: string[] = [];
    const orphans = async () => {
      const recorded = new Set(
        (await this.d.db.selectFrom('blobs').select('sha256').where('sha256', 'in', page).execute()).map(
          (r) => r.sha256,
        ),
      );
      for (const d of page) {
        if (recorded.has(d)) continue;
        const size = (await this.d.blobs.stat(d))?.size ?? 0;
        if (await this.d.blobs.delete(d, { unusedSince: cutoffDate })) {
          deleted++;
          bytes += size;
        }
      }
      page = [];
    };
    for await (const d of this.d.blobs.list()) {
      page.push(d);
      if (page.length >= 500) await orphans();
    }
    if (page.length) await orphans();
    return { deleted, bytes };
  }

  immutableUrlOf(space: SpaceRow, versionId: string): string {
    const c = this.d.config;
    return `${c.siteScheme}://${versionId}--${space.public_name}.${c.baseDomain}${c.sitePortSuffix}`;
  }

  tmpDir(): string {
    return path.join(this.d.config.dataDir, 'tmp');
  }
}

/** Background job: expire versions left unfinalized for 24 h. */
export function expireStaleVersions(services: { publishing: PublishingService }, now: Date): Promise<number> {
  return services.publishing.expireStale(now);
}

/** Background job: delete blobs nothing references any more, after a grace period. */
export function sweepUnreferencedBlobs(
  services: { publishing: PublishingService },
  now: Date,
  graceMs: number,
): Promise<{ deleted: number; bytes: number }> {
  return services.publishing.sweepBlobs(now, graceMs);
}
