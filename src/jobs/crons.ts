import path from 'node:path';
import type { Logger } from 'pino';
import type { BlobStore } from '../blobs/port.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { type CronRunPayload, CronService } from '../domain/crons/service.ts';
import { LocalSpaceDbHost, type SpaceDbHost } from '../domain/database/host.ts';
import { OwnedSpaceDbHost } from '../domain/database/owners.ts';
import { DatabaseService } from '../domain/database/service.ts';
import type { ChannelService } from '../domain/publishing/channels.ts';
import type { SecretBox } from '../domain/publishing/secrets.ts';
import { RuntimeLogService } from '../domain/runtime/logs.ts';
import type { SpaceService } from '../domain/spaces/service.ts';
import { StorageService } from '../domain/storage/service.ts';
import { newId } from '../ids.ts';
import { cronDispatcher } from '../serve/cron-dispatch.ts';
import type { Services } from '../services.ts';
import type { Store } from '../store/repos/index.ts';
import { SpaceDatabases } from '../store/space-db/space-db.ts';
import type { JobQueue } from './queue.ts';
import { loopbackOf } from './thumbnails.ts';

export const CRON_TICK_JOB = 'crons.tick';
export const CRON_RUN_JOB = 'cron.run';

/**
 * Crons through the durable queue: `crons.tick` every minute (one pending job for all instances)
 * queues each due cron as a `cron.run` job in the transaction that moves it to its next due time, so
 * a due time is queued once however many instances tick. A run is tried once: its request may have
 * reached the site, and a failure is recorded, not retried.
 */
export function registerFunctionJobs(
  services: Pick<Services, 'jobs' | 'log' | 'onClose' | 'spaceDbs'>,
  crons: CronService,
): void {
  const { jobs, log } = services;
  // On shutdown the space databases this instance owns are snapshotted and handed over.
  services.onClose.push(() => services.spaceDbs.close());
  jobs.registerHandler(CRON_TICK_JOB, async () => {
    const n = await crons.tick();
    if (n) log.debug({ queued: n }, 'crons queued');
  });
  jobs.registerHandler<CronRunPayload>(
    CRON_RUN_JOB,
    async (job) => {
      await crons.runScheduled(job.payload);
    },
    { concurrency: 4, leaseMs: 2 * 60_000 },
  );
  jobs.schedule(CRON_TICK_JOB, 60_000);
}

/**
 * The services functions use beside the workerd pool: crons (scheduled in the transaction that moves
 * `live`, run through this server's own edge once it listens — `lifecycle.local`, set by `listen()`),
 * runtime logs (kept 7 days) and `env.STORAGE`.
 */
export function createFunctionServices(
  d: {
    store: Store;
    blobs: BlobStore;
    clock: Clock;
    log: Logger;
    jobs: JobQueue;
    spaces: SpaceService;
    publishing: { channels: ChannelService };
    config: Pick<Config, 'publicUrl' | 'dataDir' | 'instanceUrl' | 'spaceDbLeaseMs'>;
    database: { dialect: 'sqlite' | 'postgres' };
    secretBox: SecretBox;
  },
  services: () => Services,
): Pick<Services, 'crons' | 'runtimeLogs' | 'storage' | 'spaceDbs' | 'databases'> {
  const crons = new CronService({
    store: d.store,
    spaces: d.spaces,
    clock: d.clock,
    dispatch: () => {
      const s = services();
      return s.lifecycle.local ? cronDispatcher(s, s.lifecycle.local) : null;
    },
    enqueueRun: async (repos, payload, key) => {
      await d.jobs.enqueue(CRON_RUN_JOB, payload, { trx: repos, key, maxAttempts: 1 });
    },
  });
  d.publishing.channels.onLive.push((repos, spaceId, versionId) => crons.syncLive(repos, spaceId, versionId));
  const files = new SpaceDatabases(path.join(d.config.dataDir, 'space-db'));
  // One instance (SQLite): the files are this server's. PostgreSQL may mean several instances: each
  // space database is owned by one of them at a time (domain/database/owners.ts).
  const spaceDbs: SpaceDbHost =
    d.database.dialect === 'sqlite'
      ? new LocalSpaceDbHost(files, () => d.clock.now())
      : new OwnedSpaceDbHost({
          store: d.store,
          blobs: d.blobs,
          log: d.log.child({ area: 'space-db' }),
          databases: files,
          instanceId: newId('inst'),
          key: d.secretBox.derive('space-db forwarding'),
          leaseMs: d.config.spaceDbLeaseMs,
          address: () => {
            if (d.config.instanceUrl) return d.config.instanceUrl;
            const local = services().lifecycle.local;
            return local ? `http://${loopbackOf(local.host)}:${local.port}` : null;
          },
        });
  // A purged space loses what its functions kept: crons, log lines, stored objects (their bytes go
  // with the blob sweep) and its database — rows here, the file once the purge committed.
  d.spaces.purgeHooks.push(async (repos, spaceId) => {
    const owner = await repos.spaceDbOwners.get(spaceId);
    await repos.spaceCrons.deleteForSpace(spaceId);
    await repos.runtimeLogs.deleteForSpace(spaceId);
    await repos.storageObjects.deleteForSpace(spaceId);
    await repos.spaceDbOwners.deleteForSpace(spaceId);
    repos.events.afterCommit(() => {
      spaceDbs
        .forget(spaceId, owner?.address ?? null)
        .catch((err) => d.log.warn({ err, spaceId }, 'a purged space’s database file was not removed'));
    });
  });
  return {
    spaceDbs,
    databases: new DatabaseService({
      store: d.store,
      spaces: d.spaces,
      clock: d.clock,
      host: spaceDbs,
      publicUrl: () => d.config.publicUrl,
    }),
    crons,
    storage: new StorageService({
      store: d.store,
      blobs: d.blobs,
      clock: d.clock,
      publicUrl: () => d.config.publicUrl,
    }),
    runtimeLogs: new RuntimeLogService({
      store: d.store,
      clock: d.clock,
      retentionDays: 7,
      onError: (err) => d.log.warn({ err }, 'runtime log lines lost'),
    }),
  };
}
