import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { AccessLogRecorder, type AccessRecord } from '../../src/domain/analytics/recorder.ts';
import { AnalyticsService } from '../../src/domain/analytics/service.ts';
import { newId } from '../../src/ids.ts';
import type { AccessLogLine } from '../../src/store/repos/analytics/access-log.ts';
import type { HourlyDelta } from '../../src/store/repos/analytics/access-rollups.ts';
import type { Store } from '../../src/store/repos/index.ts';
import type { VersionRow } from '../../src/store/repos/publishing/versions.ts';
import { describeEachDb } from '../helpers/server.ts';
import { createSpace, openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the analytics group's repositories — the raw access log (bulk insert, filtered
 * keyset pages, follow reads, retention), the rollups (summing upserts, windows, top lists) and the
 * usage counts — and of what the recorder's flush writes into them (no raw address anywhere; the
 * visitor hash changes with the day's salt) and the analytics service reads back over windows. The
 * same on SQLite and PostgreSQL.
 */

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const NOW = Date.parse('2026-03-31T12:30:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function line(spaceId: string, at: number, extra: Partial<AccessLogLine> = {}): AccessLogLine {
  return {
    id: newId('acc', at),
    spaceId,
    versionId: null,
    at: iso(at),
    host: 'h.localhost',
    method: 'GET',
    path: '/',
    status: 200,
    bytes: 100,
    durationMs: 1,
    referrer: null,
    userAgent: 'ua',
    country: null,
    requestId: null,
    visitor: 'v'.repeat(22),
    ...extra,
  };
}

function hourly(
  spaceId: string,
  at: number,
  requests: number,
  extra: Partial<HourlyDelta> = {},
): HourlyDelta {
  return {
    spaceId,
    hour: iso(at).slice(0, 13),
    requests,
    bytes: requests * 10,
    s2xx: requests,
    s3xx: 0,
    s4xx: 0,
    s5xx: 0,
    ...extra,
  };
}

function record(spaceId: string, t: number, extra: Partial<AccessRecord> = {}): AccessRecord {
  return {
    t,
    spaceId,
    versionId: null,
    host: 'site.localhost',
    method: 'GET',
    path: '/',
    status: 200,
    bytes: 10,
    durationMs: 0,
    referrer: undefined,
    userAgent: 'ua-1',
    country: undefined,
    requestId: undefined,
    ip: '203.0.113.77',
    ...extra,
  };
}

describeEachDb('store: analytics group', (kind) => {
  let ts: TestStore;
  let store: Store;
  let tenant: string;

  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
    tenant = newId('tnt');
    await ts.database.db
      .insertInto('tenants')
      .values({ id: tenant, name: tenant, created_at: iso(NOW) })
      .execute();
  });
  afterAll(() => ts.close());

  describe('access log', () => {
    it('lists a space’s lines newest first with every filter and a keyset, never another space’s', async () => {
      const a = newId('spc');
      const b = newId('spc');
      const t0 = NOW - 10 * HOUR;
      const lines = [
        line(a, t0, { path: '/docs/one', status: 200 }),
        line(a, t0 + 1000, { path: '/docs/two', status: 404, requestId: 'req-1' }),
        line(a, t0 + 2000, { path: '/blog/x', status: 301 }),
        line(a, t0 + 3000, { path: '/docs/three', status: 503 }),
        line(b, t0 + 1500, { path: '/docs/other', status: 200 }),
      ];
      // More rows than one INSERT chunk: the bulk path splits them.
      const many = Array.from({ length: 450 }, (_, i) => line(b, t0 - DAY + i, { path: `/bulk/${i}` }));
      await store.transaction((repos) => repos.accessLog.insertMany([...lines, ...many]));
      const ids = (l: AccessLogLine[]) => l.map((x) => x.path);
      const r = store.repos.accessLog;
      expect(ids(await r.list(a, {}, null, 10))).toEqual([
        '/docs/three',
        '/blog/x',
        '/docs/two',
        '/docs/one',
      ]);
      expect((await r.list(b, {}, null, 1000)).length).toBe(451);
      expect(ids(await r.list(a, { status: 404 }, null, 10))).toEqual(['/docs/two']);
      expect(ids(await r.list(a, { statusClass: 5 }, null, 10))).toEqual(['/docs/three']);
      expect(ids(await r.list(a, { statusClass: 3 }, null, 10))).toEqual(['/blog/x']);
      expect(ids(await r.list(a, { pathPrefix: '/docs/' }, null, 10))).toEqual([
        '/docs/three',
        '/docs/two',
        '/docs/one',
      ]);
      // A prefix is a prefix, not a pattern.
      expect(await r.list(a, { pathPrefix: '/docs%' }, null, 10)).toEqual([]);
      expect(ids(await r.list(a, { requestId: 'req-1' }, null, 10))).toEqual(['/docs/two']);
      expect(ids(await r.list(a, { since: iso(t0 + 1000), until: iso(t0 + 3000) }, null, 10))).toEqual([
        '/blog/x',
        '/docs/two',
      ]);
      const first = await r.list(a, {}, null, 2);
      expect(ids(await r.list(a, {}, first[1]!.id, 2))).toEqual(['/docs/two', '/docs/one']);
      // Follow reads: newer than a line, in time order.
      expect(ids(await r.newer(a, lines[1]!.id, 10))).toEqual(['/blog/x', '/docs/three']);
      const got = (await r.list(a, { requestId: 'req-1' }, null, 1))[0]!;
      expect(got).toEqual(lines[1]);
    });

    it('prunes lines older than a time, on every space, and says how many', async () => {
      const s = newId('spc');
      const old = NOW - 40 * DAY;
      await store.transaction((repos) =>
        repos.accessLog.insertMany([line(s, old), line(s, old + 1), line(s, NOW - DAY)]),
      );
      const removed = await store.repos.accessLog.prune(iso(NOW - 30 * DAY));
      expect(removed).toBeGreaterThanOrEqual(2);
      expect((await store.repos.accessLog.list(s, {}, null, 10)).map((l) => l.at)).toEqual([iso(NOW - DAY)]);
    });
  });

  describe('rollups', () => {
    it('sums hourly deltas per space and hour, reads from an hour on, totals over spaces', async () => {
      const a = newId('spc');
      const b = newId('spc');
      const r = store.repos.accessRollups;
      await store.transaction((repos) =>
        repos.accessRollups.addHourly([hourly(a, NOW - 3 * HOUR, 5), hourly(a, NOW, 2), hourly(b, NOW, 7)]),
      );
      // A second instance's flush for the same hour adds up.
      await store.transaction((repos) =>
        repos.accessRollups.addHourly([hourly(a, NOW, 3, { s2xx: 1, s4xx: 1, s5xx: 1 })]),
      );
      const rows = await r.hourly(a, iso(NOW - 3 * HOUR).slice(0, 13));
      expect(rows).toEqual([
        {
          hour: iso(NOW - 3 * HOUR).slice(0, 13),
          requests: 5,
          bytes: 50,
          s2xx: 5,
          s3xx: 0,
          s4xx: 0,
          s5xx: 0,
        },
        { hour: iso(NOW).slice(0, 13), requests: 5, bytes: 50, s2xx: 3, s3xx: 0, s4xx: 1, s5xx: 1 },
      ]);
      expect(await r.hourly(a, iso(NOW - 2 * HOUR).slice(0, 13))).toHaveLength(1);
      expect(await r.totals([a, b], iso(NOW - 3 * HOUR).slice(0, 13))).toEqual({ requests: 17, bytes: 170 });
      expect(await r.totals([b], iso(NOW + HOUR).slice(0, 13))).toEqual({ requests: 0, bytes: 0 });
      expect(await r.totals([], '2000-01-01T00')).toEqual({ requests: 0, bytes: 0 });
      expect(await store.repos.accessLog.anyFor(a)).toBe(true);
      expect(await store.repos.accessLog.anyFor(newId('spc'))).toBe(false);
    });

    it('counts a visitor once a day, and ranks top keys over days by summed requests', async () => {
      const s = newId('spc');
      const d1 = '2026-03-30';
      const d2 = '2026-03-31';
      const r = store.repos.accessRollups;
      await store.transaction(async (repos) => {
        await repos.accessRollups.addVisitors([
          { spaceId: s, day: d1, visitor: 'x' },
          { spaceId: s, day: d1, visitor: 'y' },
          { spaceId: s, day: d2, visitor: 'x' },
        ]);
        await repos.accessRollups.addTop([
          { spaceId: s, day: d1, kind: 'path', key: '/a', requests: 4 },
          { spaceId: s, day: d1, kind: 'path', key: '/b', requests: 5 },
          { spaceId: s, day: d2, kind: 'path', key: '/a', requests: 3 },
          { spaceId: s, day: d2, kind: 'path', key: '/c', requests: 5 },
          { spaceId: s, day: d2, kind: 'referrer', key: 'https://r.example/', requests: 9 },
        ]);
      });
      // The same visitor again that day (another flush): still once.
      await store.transaction((repos) =>
        repos.accessRollups.addVisitors([{ spaceId: s, day: d2, visitor: 'x' }]),
      );
      await store.transaction((repos) =>
        repos.accessRollups.addTop([{ spaceId: s, day: d2, kind: 'path', key: '/c', requests: 2 }]),
      );
      expect(await r.visitors(s, d1)).toBe(3);
      expect(await r.visitors(s, d2)).toBe(1);
      expect(await r.top(s, 'path', d1, 10)).toEqual([
        { key: '/a', requests: 7 },
        { key: '/c', requests: 7 },
        { key: '/b', requests: 5 },
      ]);
      expect(await r.top(s, 'path', d1, 1)).toEqual([{ key: '/a', requests: 7 }]);
      expect(await r.top(s, 'path', d2, 10)).toEqual([
        { key: '/c', requests: 7 },
        { key: '/a', requests: 3 },
      ]);
      expect(await r.top(s, 'referrer', d1, 10)).toEqual([{ key: 'https://r.example/', requests: 9 }]);
      expect(await r.top(s, 'country', d1, 10)).toEqual([]);
      expect(await r.top(newId('spc'), 'path', d1, 10)).toEqual([]);
    });

    it('trims each finished day to its most requested keys per kind, within the days given', async () => {
      const s = newId('spc');
      const other = newId('spc');
      const r = store.repos.accessRollups;
      const rows = (spaceId: string, day: string, kind: 'path' | 'country', n: number) =>
        Array.from({ length: n }, (_, i) => ({ spaceId, day, kind, key: `/k${i}`, requests: n - i }));
      await store.transaction((repos) =>
        repos.accessRollups.addTop([
          ...rows(s, '2026-03-28', 'path', 5),
          ...rows(s, '2026-03-29', 'path', 5),
          ...rows(s, '2026-03-29', 'country', 2),
          ...rows(s, '2026-03-30', 'path', 5),
          ...rows(other, '2026-03-29', 'path', 4),
        ]),
      );
      // Days from 03-29 up to (not including) 03-30, three keys each.
      expect(await r.compactTop('2026-03-29', '2026-03-30', 3)).toBe(2 + 1);
      expect(await r.top(s, 'path', '2026-03-29', 10)).toEqual([
        { key: '/k0', requests: 5 + 5 },
        { key: '/k1', requests: 4 + 4 },
        { key: '/k2', requests: 3 + 3 },
        { key: '/k3', requests: 2 },
        { key: '/k4', requests: 1 },
      ]);
      expect(await r.top(s, 'country', '2026-03-29', 10)).toHaveLength(2);
      expect(await r.top(other, 'path', '2026-03-29', 10)).toHaveLength(3);
      // 03-28 was outside the days given: untouched.
      expect(await r.top(s, 'path', '2026-03-28', 10)).toHaveLength(5);
      expect(await r.compactTop('2026-03-29', '2026-03-30', 3)).toBe(0);
    });

    it('prunes visitor and top rows before a day, keeps the hourly counters', async () => {
      const s = newId('spc');
      const r = store.repos.accessRollups;
      await store.transaction(async (repos) => {
        await repos.accessRollups.addHourly([hourly(s, Date.parse('2026-01-01T05:00:00Z'), 1)]);
        await repos.accessRollups.addVisitors([
          { spaceId: s, day: '2026-01-01', visitor: 'x' },
          { spaceId: s, day: '2026-03-01', visitor: 'x' },
        ]);
        await repos.accessRollups.addTop([
          { spaceId: s, day: '2026-01-01', kind: 'path', key: '/', requests: 1 },
          { spaceId: s, day: '2026-03-01', kind: 'path', key: '/', requests: 1 },
        ]);
      });
      expect(await r.prune('2026-02-01')).toBeGreaterThanOrEqual(2);
      expect(await r.visitors(s, '2000-01-01')).toBe(1);
      expect(await r.top(s, 'path', '2000-01-01', 10)).toEqual([{ key: '/', requests: 1 }]);
      expect(await r.hourly(s, '2000-01-01T00')).toHaveLength(1);
    });
  });

  describe('the recorder’s flush and the analytics windows', () => {
    it('writes lines and rollups with no raw address; the visitor hash is per (day, address, user agent)', async () => {
      const s = newId('spc');
      const rec = new AccessLogRecorder(store, { intervalMs: 60_000 });
      const day1 = NOW - DAY;
      rec.record(record(s, day1, { path: '/a?x=1', referrer: 'https://r.example/', country: 'NL' }));
      rec.record(record(s, day1 + 1000, { path: '/a', status: 404 }));
      rec.record(record(s, day1 + 2000, { userAgent: 'ua-2', status: 500 }));
      rec.record(record(s, NOW, { status: 302 }));
      await rec.close();
      expect(rec.written).toBe(4);
      const lines = await store.repos.accessLog.list(s, {}, null, 10);
      expect(lines.map((l) => l.status)).toEqual([302, 500, 404, 200]);
      const [today, other, sameDay, first] = lines as [
        AccessLogLine,
        AccessLogLine,
        AccessLogLine,
        AccessLogLine,
      ];
      expect(first.visitor).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(sameDay.visitor).toBe(first.visitor);
      expect(other.visitor).not.toBe(first.visitor);
      // The next day's salt: the same address and user agent no longer hash the same.
      expect(today.visitor).not.toBe(first.visitor);
      // Every table the flush wrote, every column: the address is nowhere.
      for (const table of ['access_log', 'access_visitors', 'access_top', 'access_hourly'] as const) {
        const rows = await ts.database.db.selectFrom(table).selectAll().where('space_id', '=', s).execute();
        expect(rows.length, table).toBeGreaterThan(0);
        expect(JSON.stringify(rows), table).not.toContain('203.0.113.77');
      }
      expect(await store.repos.accessRollups.visitors(s, iso(day1).slice(0, 10))).toBe(3);
      expect(await store.repos.accessRollups.top(s, 'path', iso(day1).slice(0, 10), 10)).toEqual([
        { key: '/', requests: 2 },
        { key: '/a', requests: 2 },
      ]);
      expect(await store.repos.accessRollups.top(s, 'country', iso(day1).slice(0, 10), 10)).toEqual([
        { key: 'NL', requests: 1 },
      ]);
    });

    it('answers 48h, 7d and 30d windows from the rollups: totals, status classes, series and top lists', async () => {
      const s = newId('spc');
      const clock = new ManualClock(NOW);
      const service = new AnalyticsService(store, clock);
      const at = (ago: number) => NOW - ago;
      await store.transaction(async (repos) => {
        await repos.accessRollups.addHourly([
          hourly(s, at(0), 1),
          hourly(s, at(47 * HOUR), 2, { s2xx: 0, s4xx: 2 }),
          hourly(s, at(48 * HOUR), 4),
          hourly(s, at(6 * DAY), 8, { s2xx: 0, s3xx: 8 }),
          hourly(s, at(8 * DAY), 16),
          hourly(s, at(29 * DAY), 32, { s2xx: 0, s5xx: 32 }),
          hourly(s, at(31 * DAY), 64),
        ]);
        await repos.accessRollups.addVisitors([
          { spaceId: s, day: iso(at(0)).slice(0, 10), visitor: 'a' },
          { spaceId: s, day: iso(at(0)).slice(0, 10), visitor: 'b' },
          { spaceId: s, day: iso(at(8 * DAY)).slice(0, 10), visitor: 'a' },
          { spaceId: s, day: iso(at(31 * DAY)).slice(0, 10), visitor: 'a' },
        ]);
        await repos.accessRollups.addTop([
          { spaceId: s, day: iso(at(0)).slice(0, 10), kind: 'path', key: '/new', requests: 1 },
          { spaceId: s, day: iso(at(8 * DAY)).slice(0, 10), kind: 'path', key: '/old', requests: 16 },
          { spaceId: s, day: iso(at(31 * DAY)).slice(0, 10), kind: 'path', key: '/gone', requests: 64 },
        ]);
      });
      const h48 = await service.analytics(s, '48h');
      expect(h48).toMatchObject({ window: '48h', requests: 3, bytes: 30, visitors: 2, to: iso(NOW) });
      expect(h48.statusClasses).toEqual({ '2xx': 1, '3xx': 0, '4xx': 2, '5xx': 0 });
      expect(h48.from).toBe('2026-03-29T13:00:00.000Z');
      expect(h48.series).toEqual([
        { at: '2026-03-29T13:00:00.000Z', requests: 2, bytes: 20 },
        { at: '2026-03-31T12:00:00.000Z', requests: 1, bytes: 10 },
      ]);
      expect(h48.topPaths).toEqual([{ key: '/new', requests: 1 }]);
      const d7 = await service.analytics(s, '7d');
      expect(d7.requests).toBe(1 + 2 + 4 + 8);
      expect(d7.statusClasses['3xx']).toBe(8);
      expect(d7.series.every((p) => p.at.endsWith('T00:00:00.000Z'))).toBe(true);
      const d30 = await service.analytics(s, '30d');
      expect(d30.requests).toBe(1 + 2 + 4 + 8 + 16 + 32);
      expect(d30.statusClasses['5xx']).toBe(32);
      expect(d30.visitors).toBe(3);
      expect(d30.topPaths).toEqual([
        { key: '/old', requests: 16 },
        { key: '/new', requests: 1 },
      ]);
      expect(d30.series.reduce((n, p) => n + p.requests, 0)).toBe(d30.requests);
      // Another space's rollups are not counted.
      expect((await service.analytics(newId('spc'), '30d')).requests).toBe(0);
    });
  });

  describe('usage', () => {
    it('counts a team’s live spaces, the distinct bytes their live versions reference, publishes since', async () => {
      const addTeam = async () => {
        const id = newId('team');
        await ts.database.db
          .insertInto('teams')
          .values({
            id,
            tenant_id: tenant,
            name: id,
            slug: id.toLowerCase().replace(/[^a-z0-9]/g, '-'),
            plan: 'free',
            partner_enabled_at: null,
            default_data_location: 'auto',
            default_space_access: 'public',
            logo: null,
            metadata: null,
            billing_customer_id: null,
            system_space_id: null,
            presentation: null,
            created_at: iso(NOW),
            updated_at: iso(NOW),
          })
          .execute();
        return id;
      };
      const team = await addTeam();
      const a = await createSpace(store, tenant, { team_id: team });
      const b = await createSpace(store, tenant, { team_id: team });
      const gone = await createSpace(store, tenant, { team_id: team, deleted_at: iso(NOW) });
      await createSpace(store, tenant, { team_id: await addTeam() });
      const u = store.repos.usage;
      expect((await u.teamSpaceIds(team)).sort()).toEqual([a.id, b.id].sort());
      expect(gone.id).toBeTruthy();

      const sha = (c: string) => c.repeat(64);
      await ts.database.db
        .insertInto('blobs')
        .values(
          [
            ['1', 100],
            ['2', 20],
            ['3', 3],
          ].map(([c, size]) => ({
            sha256: sha(c as string),
            size: size as number,
            variants: null,
            created_at: iso(NOW),
            used_at: iso(NOW),
          })),
        )
        .execute();
      const version = async (spaceId: string, shas: string[], extra: Partial<VersionRow>) =>
        store.transaction(async (repos) => {
          const id = newId('ver');
          await repos.versions.insert({
            id,
            space_id: spaceId,
            number: await repos.versions.nextNumber(spaceId),
            status: 'ready',
            target: 'production',
            message: null,
            source: null,
            file_count: shas.length,
            total_bytes: 0,
            manifest_digest: 'd',
            rules: null,
            diagnostics: null,
            config: null,
            created_by: null,
            created_at: iso(NOW),
            finalized_at: iso(NOW),
            expires_at: null,
            deleted_at: null,
            base_id: null,
            ...extra,
          });
          await repos.versionFiles.insert(
            shas.map((s, i) => ({
              version_id: id,
              path: `f${i}`,
              source_sha256: s,
              source_size: 1,
              sha256: s,
              size: 1,
              content_type: 'text/plain',
              encodings: null,
              removed: 0,
            })),
          );
        });
      await version(a.id, [sha('1'), sha('2')], { created_at: '2026-02-15T00:00:00.000Z' });
      // The same content in another space counts once; a deleted version's blobs do not count.
      await version(b.id, [sha('1')], {});
      await version(b.id, [sha('3')], { deleted_at: iso(NOW) });
      expect(await u.storageBytes([a.id, b.id])).toBe(120);
      expect(await u.storageBytes([b.id])).toBe(100);
      expect(await u.storageBytes([])).toBe(0);
      expect(await u.publishesSince([a.id, b.id], '2026-03-01T00:00:00.000Z')).toBe(2);
      expect(await u.publishesSince([a.id, b.id], '2026-01-01T00:00:00.000Z')).toBe(3);
      expect(await u.publishesSince([], '2026-01-01T00:00:00.000Z')).toBe(0);
    });
  });
});
