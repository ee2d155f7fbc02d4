import fs from 'node:fs';
import type { Logger } from 'pino';
import type { BlobStore } from '../blobs/port.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { SpaceService } from '../domain/spaces/service.ts';
import { ChromiumThumbnails } from '../domain/thumbnails/chromium.ts';
import { THUMBNAIL_JOB, ThumbnailService } from '../domain/thumbnails/service.ts';
import type { Services } from '../services.ts';
import type { Store } from '../store/repos/index.ts';
import type { JobQueue } from './queue.ts';

/** A rendering's lease: longer than its timeout, so no second worker takes a picture alongside. */
const leaseFor = (timeoutMs: number) => timeoutMs * 3 + 30_000;

/**
 * The thumbnail service as configured: with Chromium when `SPACES_THUMBNAILS=auto` and the binary
 * exists, else without a renderer and the reason recorded on each space's row.
 */
export function createThumbnails(d: {
  config: Config;
  store: Store;
  clock: Clock;
  blobs: BlobStore;
  spaces: SpaceService;
  jobs: JobQueue;
  log: Logger;
}): ThumbnailService {
  const { config } = d;
  let disabledReason: string | null = null;
  if (config.thumbnails === 'off')
    disabledReason = 'thumbnails are off on this server (SPACES_THUMBNAILS=off)';
  else if (!fs.existsSync(config.chromiumPath))
    disabledReason = `Chromium is not installed at ${config.chromiumPath} (SPACES_CHROMIUM_PATH)`;
  const log = d.log.child({ area: 'thumbnails' });
  if (disabledReason && config.thumbnails !== 'off') log.info(`no thumbnails: ${disabledReason}`);
  return new ThumbnailService({
    store: d.store,
    clock: d.clock,
    blobs: d.blobs,
    spaces: d.spaces,
    renderer: disabledReason
      ? null
      : new ChromiumThumbnails(config.chromiumPath, config.thumbnailTimeoutMs, log),
    disabledReason,
    enqueue: async (spaceId) => {
      // One pending picture per space: a burst of promotions renders once, the last one.
      await d.jobs.enqueue(THUMBNAIL_JOB, { spaceId }, { key: spaceId, replace: true, maxAttempts: 2 });
    },
    log,
  });
}

/** Pictures are taken one at a time per worker (one browser, one page). */
export function registerThumbnailJobs(services: Pick<Services, 'jobs' | 'thumbnails' | 'config'>): void {
  services.jobs.registerHandler<{ spaceId: string }>(
    THUMBNAIL_JOB,
    async (job, ctx) => {
      await services.thumbnails.render(job.payload.spaceId, ctx.signal);
    },
    { concurrency: 1, leaseMs: leaseFor(services.config.thumbnailTimeoutMs) },
  );
}

/** The address this server's own listener answers on, for a bind address (wildcards: loopback). */
export function loopbackOf(bindHost: string): string {
  if (bindHost === '' || bindHost === '0.0.0.0' || bindHost === '::') return '127.0.0.1';
  return bindHost;
}
