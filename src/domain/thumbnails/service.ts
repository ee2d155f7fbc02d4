import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { BlobStore } from '../../blobs/port.ts';
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors/problem.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import type { SpaceService } from '../spaces/service.ts';
import type { LocalListener } from './chromium.ts';

/** The durable job that takes a space's picture. */
export const THUMBNAIL_JOB = 'thumbnails.render';
const CONTENT_TYPE = 'image/png';

/** What takes the pictures (headless Chromium in production, see chromium.ts). */
export interface ThumbnailRenderer {
  render(siteUrl: string, local: LocalListener, cookie: string | null, signal?: AbortSignal): Promise<Buffer>;
  close(): Promise<void>;
}

export interface ThumbnailDeps {
  store: Store;
  clock: Clock;
  blobs: BlobStore;
  spaces: SpaceService;
  /** Null when thumbnails are off or Chromium is missing; `disabledReason` then says why. */
  renderer: ThumbnailRenderer | null;
  disabledReason: string | null;
  /** Puts a render job on the durable queue (deduplicated per space). */
  enqueue: (spaceId: string) => Promise<void>;
  log: Logger;
}

/**
 * Space thumbnails (issue 23): after a version becomes live a job renders the site's front page at
 * 1280×800 into a PNG blob, recorded in `space_thumbnails`. Scheduling never waits and never throws
 * into publishing; a failure (or Chromium missing) is recorded on the row, and the UI shows a
 * placeholder.
 */
export class ThumbnailService {
  /** This server's HTTP listener, once it listens: the renderer's page is answered from it. */
  local: LocalListener | null = null;
  /**
   * The `Cookie` header that lets the renderer see a team or private site like a member (the edge's
   * access cookie for that host and space); set by the server, which holds the site secret.
   */
  siteCookie: ((hostname: string, spaceId: string) => string) | null = null;

  constructor(private readonly d: ThumbnailDeps) {}

  /** Called when a space's channels moved: queues a picture, fire and forget. */
  schedule(spaceId: string): void {
    this.d.enqueue(spaceId).catch((err) => this.d.log.warn({ err, spaceId }, 'could not queue a thumbnail'));
  }

  /**
   * Takes the picture of the space's live version unless one of it exists (at-least-once delivery:
   * a second run finds the row and stops). Records why when it can't.
   */
  async render(
    spaceId: string,
    signal?: AbortSignal,
  ): Promise<'rendered' | 'current' | 'skipped' | 'failed'> {
    const { repos } = this.d.store;
    const space = await repos.spaces.byId(spaceId);
    if (!space || space.deleted_at || space.disabled_reason) return 'skipped';
    const live = await repos.channels.pointer(spaceId, 'live');
    if (!live) return 'skipped';
    const existing = await repos.spaceThumbnails.get(spaceId);
    if (existing?.version_id === live && (existing.sha256 || existing.last_error === this.d.disabledReason))
      return 'current';
    const row = {
      space_id: spaceId,
      version_id: live,
      // A failed picture keeps showing the last good one.
      sha256: existing?.sha256 ?? null,
      size: existing?.size ?? 0,
      content_type: CONTENT_TYPE,
      last_error: null as string | null,
      rendered_at: this.d.clock.now().toISOString(),
    };
    const local = this.local;
    if (!this.d.renderer || !local) {
      row.last_error = this.d.disabledReason ?? 'the server is not listening yet';
      await repos.spaceThumbnails.put(row);
      return 'skipped';
    }
    // The managed hostname: this server answers it on its plain listener whatever domains are bound.
    const hostname = this.d.spaces.hostnameOf(space.public_name);
    try {
      const cookie = this.siteCookie?.(hostname, space.id) ?? null;
      const png = await this.d.renderer.render(`http://${hostname}/`, local, cookie, signal);
      const sha256 = createHash('sha256').update(png).digest('hex');
      await this.d.blobs.put(sha256, png.length, Readable.from([png]));
      await repos.spaceThumbnails.put({ ...row, sha256, size: png.length });
      return 'rendered';
    } catch (err) {
      this.d.log.info({ err, spaceId }, 'thumbnail failed');
      row.last_error = String((err as Error)?.message ?? err).slice(0, 500);
      await repos.spaceThumbnails.put(row);
      return 'failed';
    }
  }

  /** The picture of a space the principal can reach; 404 `thumbnail_not_found` when there is none. */
  async image(p: Principal, spaceRef: string) {
    const space = await this.d.spaces.resolve(p, spaceRef);
    const row = await this.d.store.repos.spaceThumbnails.get(space.id);
    if (!row?.sha256) {
      fail('thumbnail_not_found', 'The space has no thumbnail yet.', {
        details: { reason: row?.last_error ?? 'no version has been live since thumbnails were on' },
      });
    }
    return {
      etag: `"${row.sha256}"`,
      contentType: row.content_type,
      size: row.size,
      open: () => this.d.blobs.get(row.sha256!),
    };
  }

  close(): Promise<void> {
    return this.d.renderer?.close() ?? Promise.resolve();
  }
}
