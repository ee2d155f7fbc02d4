import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { registerMaintenanceJobs } from '../../src/jobs/maintenance.ts';
import { JobQueue } from '../../src/jobs/queue.ts';
import type { Services } from '../../src/services.ts';
import { type Database, openDatabase } from '../../src/store/db.ts';
import { PG_URL } from '../helpers/server.ts';
import { openTestStore, type TestStore } from '../helpers/store.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => quiet,
} as unknown as Services['log'];

/**
 * A maintenance job that runs longer than its lease keeps it (renewed while it runs): a second
 * instance's worker never takes it over and runs the same sweep alongside.
 */
describe.skipIf(!PG_URL)('maintenance jobs on two instances', () => {
  let t: TestStore;
  let second: Database;
  const queues: JobQueue[] = [];
  beforeAll(async () => {
    t = await openTestStore('postgres');
    second = await openDatabase(PG_URL, { schema: t.database.schema, poolSize: 2 });
  });
  afterAll(async () => {
    for (const q of queues) await q.stop(1000);
    await second.close();
    await t.close();
  });

  it('renews the lease of a sweep that outlasts it: it runs once, never twice at a time', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    const idle = async () => 0;
    const services = (database: Database) => {
      const jobs = new JobQueue({ database, clock: systemClock, pollIntervalMs: 50 });
      queues.push(jobs);
      const s = {
        jobs,
        clock: systemClock,
        log: quiet,
        anonymous: { expireDue: idle, purgeDue: idle },
        spaces: { purgeDeleted: idle },
        publishing: {
          versions: { expireStale: idle },
          blobSweep: {
            run: async () => {
              running++;
              runs++;
              most = Math.max(most, running);
              await sleep(1500);
              running--;
              return 0;
            },
          },
        },
        spool: { sweep: idle },
        domains: { checkDue: idle },
        certificates: { issueDue: idle },
        shared: { changes: { prune: idle }, rateWindows: null },
      } as unknown as Services;
      registerMaintenanceJobs(s, { leaseMs: 300 });
      return jobs;
    };
    const a = services(t.database);
    const b = services(second);
    await a.start();
    await sleep(200);
    await b.start();
    const end = Date.now() + 4000;
    while (Date.now() < end && !(runs >= 1 && running === 0)) await sleep(50);
    await sleep(600);
    expect(runs).toBe(1);
    expect(most).toBe(1);
  });
});
