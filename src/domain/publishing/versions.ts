import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Logger } from 'pino';
import tar from 'tar-stream';
import type { BlobStore } from '../../blobs/port.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { isCompressible } from '../../site/compress.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import type { VersionRef } from '../../store/repos/publishing/versions.ts';
import type { Principal } from '../auth/principal.ts';
import { actorFromPrincipal, type EventLog, SYSTEM_ACTOR, tenantOfSpace } from '../events/log.ts';
import type { SpaceRow } from '../spaces/service.ts';
import type { BlobIndex } from './blob-index.ts';
import { manifestDigest } from './manifest.ts';
import {
  actorOf,
  byPathOrder,
  type CreateVersionInput,
  contentTypeOf,
  type DeclaredFile,
  gone,
  type ListedVersion,
  UPLOAD_WINDOW_MS,
  type VersionFileRow,
  type VersionRow,
} from './model.ts';

/**
 * File rows of flat versions kept in memory for layering: ~500 bytes each, so at most ~50 MB (ten
 * bases of 10,000 files). A base not in memory is read again (one query).
 */
const FLAT_CACHE_ROWS = 100_000;

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

/**
 * Deletes the file rows of a deleted or expired version unless a live layer (any state but deleted
 * or expired) is built on it. Callers hold the transaction in which the version's state changed.
 */
async function dropRowsIfUnused(repos: Repositories, versionId: string): Promise<void> {
  const status = await repos.versions.status(versionId);
  if (status !== 'deleted' && status !== 'expired') return;
  if (!(await repos.versions.hasLiveLayer(versionId))) await repos.versionFiles.deleteForVersion(versionId);
}

/** A version just created: what its publisher still has to upload, and what the index knew. */
export interface CreatedVersion {
  version: VersionRow;
  /** The declared files whose rows the version holds itself (a layer: only new and changed ones). */
  own: DeclaredFile[];
  /** The blob index's answer for those files' digests (see `BlobIndex.known`). */
  known: Map<string, string | null>;
}

/**
 * Versions: creating one from a checked manifest (flat, or layered over live's flat base when little
 * changed), addressing, listing, diffing, downloading, deleting and expiring them.
 */
export class VersionService {
  /** Rows of ready flat versions (immutable), most recently used last. */
  private readonly flatCache = new RowsCache(FLAT_CACHE_ROWS);

  constructor(
    private readonly store: Store,
    private readonly index: BlobIndex,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly log: Logger,
    /** The event log (version created/deleted/expired here; ready/failed in finalize). */
    readonly eventLog?: EventLog,
  ) {}

  private get blobs(): BlobStore {
    return this.index.blobs;
  }

  /** The version a space's `live` channel points at. */
  live(spaceId: string): Promise<VersionRow | null> {
    return this.store.repos.versions.onChannel(spaceId, 'live');
  }

  /**
   * Step 1 of the versions flow: records a checked manifest. Identical content to the live version
   * (production target) creates nothing: the live version is answered instead.
   */
  async create(
    p: Principal,
    space: SpaceRow,
    input: CreateVersionInput,
    files: DeclaredFile[],
  ): Promise<CreatedVersion | VersionRow> {
    const target = input.target ?? 'production';
    const digest = manifestDigest(files);
    const live = await this.live(space.id);
    if (target === 'production' && live && live.status === 'ready' && live.manifest_digest === digest)
      return live;
    const nowMs = this.clock.now().getTime();
    const now = new Date(nowMs).toISOString();
    const total = files.reduce((s, f) => s + f.size, 0);
    // Incremental publish: a small change to the live site is stored as a layer over a flat base
    // version (live itself, or live's own base): only added and changed files get a row (and a lookup),
    // removed paths a `removed` row. Everything else is inherited, not copied.
    const baseId = live && live.status === 'ready' ? (live.base_id ?? live.id) : null;
    let layer = baseId ? layerOver(await this.flatRows(baseId), files) : null;
    // Content types follow from paths, variants from content already stored: an unchanged file's row
    // is final from the start, so finalize only touches what is new.
    let known = await this.index.known((layer ? layer.fresh : files).map((f) => f.sha256));
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
    for (let attempt = 0; ; attempt++) {
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
        created_by: actorOf(p),
        created_at: now,
        finalized_at: null,
        expires_at: new Date(nowMs + UPLOAD_WINDOW_MS).toISOString(),
        deleted_at: null,
        base_id: null,
      };
      try {
        await this.store.transaction(async (repos) => {
          // The base must still be ready, and stays so until this commits (its row is held against a
          // concurrent delete, which keeps a base's rows while a layer depends on them).
          if (layer && baseId && !(await repos.versions.holdReady(baseId))) throw new BaseGone();
          row.number = await repos.versions.nextNumber(space.id);
          row.base_id = layer ? baseId : null;
          await repos.versions.insert(row);
          await repos.versionFiles.insert(
            layer
              ? [
                  ...layer.fresh.map((f) => rowOf(row.id, f)),
                  ...layer.removed.map((pth) => tombstone(row.id, pth)),
                ]
              : files.map((f) => rowOf(row.id, f)),
          );
          await this.eventLog?.record(repos, {
            tenantId: tenantOfSpace(space),
            spaceId: space.id,
            actor: actorFromPrincipal(p),
            code: 'version.created',
            message: `Version ${row.number} of ${space.slug} was created (${files.length} files).`,
            details: {
              versionId: row.id,
              number: row.number,
              target: row.target,
              fileCount: files.length,
              totalBytes: total,
            },
          });
        });
        return { version: row, own: layer ? layer.fresh : files, known };
      } catch (err) {
        if (err instanceof BaseGone) {
          // The base was deleted meanwhile: store the version flat; every file needs its lookup.
          layer = null;
          known = await this.index.known(files.map((f) => f.sha256));
          continue;
        }
        // Two versions created at once in one space race for the next number: take the next one.
        if (!isUniqueViolation(err) || attempt > 8) throw err;
      }
    }
  }

  /**
   * Every row of a ready flat version. Such rows never change, so they are kept in memory (bounded
   * by row count): a re-publish diffs against its base, and finalize composes its files, without
   * reading the base again. Callers must not mutate the rows.
   */
  async flatRows(versionId: string): Promise<VersionFileRow[]> {
    const hit = this.flatCache.get(versionId);
    if (hit) return hit;
    const rows = await this.store.repos.versionFiles.own(versionId);
    rows.sort(byPathOrder);
    this.flatCache.set(versionId, rows);
    return rows;
  }

  /** Keeps a just-finalized flat version's rows at hand: it is the base of the next re-publish. */
  rememberFlat(versionId: string, rows: VersionFileRow[]): void {
    this.flatCache.set(versionId, rows);
  }

  /** `ver_…`, `v12` / `12` (the space's twelfth version) or `latest`. */
  async resolve(space: SpaceRow, ref: string, repos: Repositories = this.store.repos): Promise<VersionRow> {
    const num = /^v?(\d{1,9})$/.exec(ref);
    const r: VersionRef = ref === 'latest' ? 'latest' : num ? { number: Number(num[1]) } : { id: ref };
    const v = await repos.versions.inSpace(space.id, r);
    if (!v) throw new ApiError('version_not_found', `Version ${ref} was not found in this space.`);
    return v;
  }

  list(spaceId: string, after: string | null, n: number): Promise<VersionRow[]> {
    return this.store.repos.versions.list(spaceId, after, n);
  }

  /** Every file of a version, by path (a layered version's inherited rows included). */
  async files(version: ListedVersion): Promise<VersionFileRow[]> {
    if (gone(version)) return [];
    return (await this.store.repos.versionFiles.all(version)).sort(byPathOrder);
  }

  async filesPage(version: ListedVersion, after: string | null, n: number): Promise<VersionFileRow[]> {
    if (gone(version)) return [];
    return this.store.repos.versionFiles.page(version, after, n);
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
          this.blobs.get(f.sha256).then((src) => {
            src.on('error', reject);
            src.pipe(entry);
          }, reject);
        });
      }
      pack.finalize();
    })().catch((err) => {
      this.log.error({ err, versionId: version.id }, 'archive stream failed');
      pack.destroy(err);
    });
    return pack.pipe(gz);
  }

  async diff(space: SpaceRow, ref: string, against: string) {
    const [a, b] = [await this.resolve(space, ref), await this.resolve(space, against)];
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

  async delete(space: SpaceRow, ref: string, p?: Principal): Promise<VersionRow> {
    return this.store.transaction(async (repos) => {
      const v = await this.resolve(space, ref, repos);
      if (v.status === 'deleted') return v;
      const ch = (await repos.channels.pointingAt([v.id])).map((c) => c.name);
      if (ch.length) {
        throw new ApiError('version_in_use', `Channels point at this version: ${ch.join(', ')}.`, {
          details: { channels: ch },
          suggestions: ['Promote another version to those channels first.'],
        });
      }
      const now = this.clock.now().toISOString();
      await repos.versions.markDeleted(v.id, now);
      await dropRowsIfUnused(repos, v.id);
      if (v.base_id) await dropRowsIfUnused(repos, v.base_id);
      // Last: the tenant's event counter is the last lock a writer takes (see finalize).
      await this.eventLog?.record(repos, {
        tenantId: tenantOfSpace(space),
        spaceId: space.id,
        actor: actorFromPrincipal(p),
        code: 'version.deleted',
        message: `Version ${v.number} of ${space.slug} was deleted.`,
        details: { versionId: v.id, number: v.number },
      });
      return { ...v, status: 'deleted', deleted_at: now, expires_at: null };
    });
  }

  /** Unfinalized versions past their 24 h window become `expired`; their manifests are dropped. */
  async expireStale(now: Date): Promise<number> {
    const stale = await this.store.repos.versions.expiredUploads(now.toISOString());
    for (const { id, base_id } of stale) {
      await this.store.transaction(async (repos) => {
        if (!(await repos.versions.expire(id))) return;
        await dropRowsIfUnused(repos, id);
        if (base_id) await dropRowsIfUnused(repos, base_id);
        if (this.eventLog) {
          const v = await repos.versions.byId(id);
          const space = v ? await repos.spaces.byId(v.space_id) : null;
          if (v && space) {
            await this.eventLog.record(repos, {
              tenantId: tenantOfSpace(space),
              spaceId: space.id,
              actor: SYSTEM_ACTOR,
              code: 'version.expired',
              message: `Version ${v.number} of ${space.slug} expired: it was not finalized in time.`,
              details: { versionId: v.id, number: v.number },
            });
          }
        }
      });
    }
    return stale.length;
  }

  /** The address that always serves this version, whatever the channels do. */
  immutableUrlOf(space: SpaceRow, versionId: string): string {
    const c = this.config;
    return `${c.siteScheme}://${versionId}--${space.public_name}.${c.baseDomain}${c.sitePortSuffix}`;
  }
}

/**
 * The manifest against a flat base's rows: `fresh` = entries that are new or differ (path, digest
 * or size), `removed` = base paths the manifest no longer lists. Null when too much changed for a
 * layer to pay off (then the version is stored flat, and becomes the next base).
 */
function layerOver(
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
