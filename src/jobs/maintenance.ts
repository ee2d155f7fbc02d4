import { UPLOAD_WINDOW_MS } from '../domain/publishing/service.ts';
import type { Services } from '../services.ts';

const MINUTE = 60_000;
/** Blobs unreferenced for less than this are kept (an upload may be about to declare them). */
export const BLOB_GRACE_MS = 60 * MINUTE;
/** The lease of a maintenance job; renewed every third of it while the job runs. */
export const MAINTENANCE_LEASE_MS = 2 * MINUTE;

/**
 * The recurring maintenance every server runs through the durable job queue: anonymous expiry and
 * purge, purge of deleted spaces, expiry of unfinalized uploads, blob garbage collection, and the
 * sweep of spool files a crash left in `<dataDir>/tmp` (also run at start, see `sweepSpool`), and
 * the pruning of what instances share (changes older than an hour, rate windows past). Each
 * handler is idempotent (it re-reads state and acts only on what is still due), so at-least-once
 * delivery is safe.
 */
export function registerMaintenanceJobs(
  services: Pick<
    Services,
    | 'jobs'
    | 'clock'
    | 'log'
    | 'anonymous'
    | 'spaces'
    | 'publishing'
    | 'spool'
    | 'shared'
    | 'domains'
    | 'certificates'
    | 'analytics'
    | 'config'
    | 'runtimeLogs'
  >,
  options: { leaseMs?: number } = {},
): void {
  const { jobs, clock } = services;
  const leaseMs = options.leaseMs ?? MAINTENANCE_LEASE_MS;
  const every = (kind: string, ms: number, run: () => Promise<unknown>) => {
    jobs.registerHandler(
      kind,
      async (_job, ctx) => {
        // A sweep over a large store can outlast one lease: renew it while the work runs, so no
        // other worker takes the job over and runs it a second time alongside.
        const renew = setInterval(() => {
          ctx.heartbeat().catch((err) => services.log.warn({ err, kind }, 'maintenance job lost its lease'));
        }, leaseMs / 3);
        try {
          const result = await run();
          services.log.debug({ kind, result }, 'maintenance job done');
        } finally {
          clearInterval(renew);
        }
      },
      { leaseMs },
    );
    jobs.schedule(kind, ms);
  };
  every('anonymous.expire', MINUTE, () => services.anonymous.expireDue(clock.now()));
  every('anonymous.purge', 15 * MINUTE, () => services.anonymous.purgeDue(clock.now()));
  every('spaces.purge', 15 * MINUTE, () => services.spaces.purgeDeleted(clock.now()));
  every('versions.expire', 10 * MINUTE, () => services.publishing.versions.expireStale(clock.now()));
  every('blobs.sweep', 60 * MINUTE, () => services.publishing.blobSweep.run(clock.now(), BLOB_GRACE_MS));
  every('spool.sweep', 60 * MINUTE, () => sweepSpool(services));
  // Custom domains whose DNS check is due (pending ones back off; verified ones are re-checked).
  every('domains.check', MINUTE, () => services.domains.checkDue(clock.now()));
  // Certificates missing or two thirds through their life, for verified domains; refreshes SNI.
  every('certificates.issue', MINUTE, () => services.certificates.issueDue());
  // Access log lines past the retention setting (and per-day rollups analytics no longer reads).
  every('access_log.sweep', 60 * MINUTE, () =>
    services.analytics.sweep(services.config.accessLog.retentionDays),
  );
  // Functions' log lines past their 7 days.
  every('runtime_logs.sweep', 60 * MINUTE, () => services.runtimeLogs.sweep());
  every('shared.prune', 15 * MINUTE, async () => ({
    changes: await services.shared.changes.prune(new Date(clock.now().getTime() - 60 * MINUTE)),
    rateWindows: (await services.shared.rateWindows?.prune(clock.now().getTime())) ?? 0,
  }));
}

/**
 * Removes spool files older than any upload can live (a request's spool is removed by the request;
 * only a crash leaves one). Run at start by every process, worker or not — its data directory may be
 * its own — and hourly by the job worker.
 */
export function sweepSpool(services: Pick<Services, 'spool' | 'clock'>): Promise<number> {
  return services.spool.sweep(services.clock.now(), UPLOAD_WINDOW_MS);
}
