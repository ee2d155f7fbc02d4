import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { TOP_KEEP } from '../../src/domain/analytics/service.ts';
import { newId } from '../../src/ids.ts';
import type { AccessLogLine } from '../../src/store/repos/analytics/access-log.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace } from '../publishing/helpers.ts';

// The `access_log.sweep` maintenance job, run through the job queue on a moved clock: raw lines past
// SPACES_ACCESS_LOG_RETENTION_DAYS go, per-day visitor and top rows go once past the longer of the
// retention and the 30-day window, finished days keep their TOP_KEEP top keys per kind, hourly
// counters stay; everything newer is kept.

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const START = Date.parse('2026-05-20T10:00:00.000Z');

describeEachDb('access log retention sweep', (db) => {
  const clock = new ManualClock(START);
  let t: TestServer;
  let spaceId: string;
  const day = (ago: number) => new Date(START - ago).toISOString().slice(0, 10);
  const line = (ago: number, path: string): AccessLogLine => ({
    id: newId('acc', START - ago),
    spaceId,
    versionId: null,
    at: new Date(START - ago).toISOString(),
    host: 'swept.localhost',
    method: 'GET',
    path,
    status: 200,
    bytes: 1,
    durationMs: 0,
    referrer: null,
    userAgent: null,
    country: null,
    requestId: null,
    visitor: 'v'.repeat(22),
  });

  beforeAll(async () => {
    t = await startServer({ db, clock, env: { SPACES_ACCESS_LOG_RETENTION_DAYS: '7' } });
    spaceId = (await createSpace(t, undefined, { slug: 'swept', access: 'public' })).id;
    await t.server.services.store.transaction(async (repos) => {
      await repos.accessLog.insertMany([
        line(10 * DAY, '/ten-days'),
        line(7 * DAY + HOUR, '/just-past'),
        line(7 * DAY - 30 * 60_000, '/expires-within-the-hour'),
        line(6 * DAY, '/within'),
        line(HOUR, '/recent'),
      ]);
      await repos.accessRollups.addHourly(
        [40 * DAY, 20 * DAY, HOUR].map((ago) => ({
          spaceId,
          hour: new Date(START - ago).toISOString().slice(0, 13),
          requests: 1,
          bytes: 1,
          s2xx: 1,
          s3xx: 0,
          s4xx: 0,
          s5xx: 0,
        })),
      );
      await repos.accessRollups.addVisitors(
        [40 * DAY, 20 * DAY, HOUR].map((ago) => ({ spaceId, day: day(ago), visitor: `v-${ago}` })),
      );
      // Yesterday's long tail of paths: the sweep keeps its TOP_KEEP most requested ones.
      await repos.accessRollups.addTop(
        Array.from({ length: TOP_KEEP + 20 }, (_, i) => ({
          spaceId,
          day: day(DAY),
          kind: 'path' as const,
          key: `/tail-${i}`,
          requests: 1000 - i,
        })),
      );
      await repos.accessRollups.addTop(
        [40 * DAY, 20 * DAY, HOUR].map((ago) => ({
          spaceId,
          day: day(ago),
          kind: 'path' as const,
          key: `/p-${ago / DAY}`,
          requests: 1,
        })),
      );
    });
  });
  afterAll(() => t?.close());

  it('removes what is past retention and keeps the rest', async () => {
    const jobs = t.server.services.jobs;
    const repos = t.server.services.store.repos;
    const paths = async () => (await repos.accessLog.list(spaceId, {}, null, 100)).map((l) => l.path);
    await jobs.ensureSchedules();
    await jobs.drain();
    // Retention is 7 days: the first run removes the lines older than that.
    expect(await paths()).toEqual(['/recent', '/within', '/expires-within-the-hour']);
    // The schedule's next run is an hour later by the clock: move it there and let the queue run it.
    clock.advance(HOUR + 1000);
    expect(await paths()).toHaveLength(3);
    await jobs.drain();
    const runs = await jobs.find('access_log.sweep', { status: 'succeeded' });
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(await paths()).toEqual(['/recent', '/within']);
    // Visitor and top rows: kept for the 30-day window (31 days), older ones removed.
    expect(await repos.accessRollups.visitors(spaceId, '2000-01-01')).toBe(2);
    const kept = (await repos.accessRollups.top(spaceId, 'path', '2000-01-01', 1000)).map((r) => r.key);
    expect(kept.filter((k) => k.startsWith('/p-')).sort()).toEqual([`/p-${HOUR / DAY}`, '/p-20']);
    // Yesterday (a finished day) trimmed to its TOP_KEEP most requested paths.
    const tail = kept.filter((k) => k.startsWith('/tail-'));
    expect(tail).toHaveLength(TOP_KEEP);
    expect(tail).toContain('/tail-0');
    expect(tail).not.toContain(`/tail-${TOP_KEEP}`);
    // Hourly counters are kept (usage and analytics read them).
    expect(await repos.accessRollups.hourly(spaceId, '2000-01-01T00')).toHaveLength(3);

    // Through the API: the log shows only the kept lines, the 30-day analytics still count the rollups.
    const page = await t.api('GET', `/v1/spaces/${spaceId}/logs/access`);
    expect(page.body.data.map((l: { path: string }) => l.path)).toEqual(['/recent', '/within']);
    const a = await t.api('GET', `/v1/spaces/${spaceId}/analytics?window=30d`);
    expect(a.body.data).toMatchObject({ requests: 2, visitors: 2 });
  });
});
