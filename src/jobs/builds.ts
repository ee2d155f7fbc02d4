import { BUILD_JOB } from '../domain/builds/service.ts';
import type { Services } from '../services.ts';

/** A build's lease; the runner renews it every half second while the build runs. */
export const BUILD_LEASE_MS = 60_000;

/**
 * Builds run from the durable queue, `SPACES_BUILD_CONCURRENCY` at once per worker. A build's
 * failure is recorded on the build, not thrown, so the job is not retried; a second delivery (the
 * first worker died) finds the build `running` and marks it interrupted.
 */
export function registerBuildJobs(services: Pick<Services, 'jobs' | 'builds' | 'config'>): void {
  services.jobs.registerHandler<{ buildId: string }>(
    BUILD_JOB,
    async (job, ctx) => {
      await services.builds.run(job.payload.buildId, ctx.signal, () => ctx.heartbeat());
    },
    { concurrency: services.config.builds.concurrency, leaseMs: BUILD_LEASE_MS },
  );
}
