import type { Services } from '../services.ts';

const MINUTE = 60_000;
/** Blobs unreferenced for less than this are kept (an upload may be about to declare them). */
export const BLOB_GRACE_MS = 60 * MINUTE;

/**
 * The recurring maintenance every server runs through the durable job queue: anonymous expiry and
 * purge, purge of deleted spaces, expiry of unfinalized uploads, and blob garbage collection. Each
 * handler is idempotent (it re-reads state and acts only on what is still due), so at-least-once
 * delivery is safe.
 */
export function registerMaintenanceJobs(services: Services): void {
  const { jobs, clock } = services;
  const every = (kind: string, ms: number, run: () => Promise<unknown>) => {
    jobs.registerHandler(kind, async () => {
      const result = await run();
      services.log.debug({ kind, result }, 'maintenance job done');
    });
    jobs.schedule(kind, ms);
  };
  every('anonymous.expire', MINUTE, () => services.anonymous.expireDue(clock.now()));
  every('anonymous.purge', 15 * MINUTE, () => services.anonymous.purgeDue(clock.now()));
  every('spaces.purge', 15 * MINUTE, () => services.spaces.purgeDeleted(clock.now()));
  every('versions.expire', 10 * MINUTE, () => services.publishing.expireStale(clock.now()));
  every('blobs.sweep', 60 * MINUTE, () => services.publishing.sweepBlobs(clock.now(), BLOB_GRACE_MS));
}
