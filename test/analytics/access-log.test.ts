import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessLogRecorder } from '../../src/domain/analytics/recorder.ts';
import { createUser, describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

// The edge records every site request (fast lane and full path) into the access log ring; a flush
// writes the lines and the rollups that analytics and usage read.

const HOST = 'logged-site.localhost';
const site = {
  'index.html': '<html><body>home</body></html>',
  'about.html': '<html><body>about</body></html>',
  'big.txt': 'x'.repeat(4096),
};

function siteGet(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, headers: { host: HOST, ...headers }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describeEachDb('access log, analytics and usage', (db) => {
  let t: TestServer;
  let spaceId: string;
  beforeAll(async () => {
    t = await startServer({ db });
    const space = await createSpace(t, undefined, { slug: 'logged-site', access: 'public' });
    spaceId = space.id;
    await publishViaVersions(t, space.id, site);
    for (let i = 0; i < 3; i++)
      expect((await siteGet(t.port, '/big.txt', { 'user-agent': 'ua-a' })).status).toBe(200);
    await siteGet(t.port, '/about.html', { referer: 'https://ref.example/x', 'user-agent': 'ua-b' });
    expect((await siteGet(t.port, '/missing', { 'user-agent': 'ua-b', 'x-request-id': 'r-1' })).status).toBe(
      404,
    );
    await t.server.services.accessLog!.flush();
  });
  afterAll(() => t.close());

  it('lists the lines newest first with filters and a cursor', async () => {
    const all = await t.api('GET', `/v1/spaces/${spaceId}/logs/access`);
    expect(all.status).toBe(200);
    const lines = all.body.data;
    expect(lines.length).toBe(5);
    expect(lines[0].path).toBe('/missing');
    expect(lines[0].status).toBe(404);
    expect(lines.map((l: any) => l.id)).toEqual([...lines.map((l: any) => l.id)].sort().reverse());
    const big = lines.find((l: any) => l.path === '/big.txt');
    expect(big).toMatchObject({ host: HOST, method: 'GET', status: 200, bytes: 4096, userAgent: 'ua-a' });
    expect(big.versionId).toMatch(/^ver_/);
    expect(big.visitor).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // No raw address anywhere in a line.
    expect(JSON.stringify(lines)).not.toContain('127.0.0.1');
    const about = lines.find((l: any) => l.path === '/about.html');
    expect(about.referrer).toBe('https://ref.example/x');

    const notFound = await t.api('GET', `/v1/spaces/${spaceId}/logs/access?status=4xx`);
    expect(notFound.body.data.map((l: any) => l.path)).toEqual(['/missing']);
    const exact = await t.api('GET', `/v1/spaces/${spaceId}/logs/access?status=200&pathPrefix=/big`);
    expect(exact.body.data).toHaveLength(3);
    const future = await t.api('GET', `/v1/spaces/${spaceId}/logs/access?since=2999-01-01T00:00:00Z`);
    expect(future.body.data).toHaveLength(0);

    const p1 = await t.api('GET', `/v1/spaces/${spaceId}/logs/access?limit=2`);
    expect(p1.body.data).toHaveLength(2);
    expect(p1.body.pagination.hasMore).toBe(true);
    const p2 = await t.api(
      'GET',
      `/v1/spaces/${spaceId}/logs/access?limit=2&cursor=${encodeURIComponent(p1.body.pagination.nextCursor)}`,
    );
    expect(p2.body.data.map((l: any) => l.id)).toEqual(lines.slice(2, 4).map((l: any) => l.id));
    const bad = await t.api('GET', `/v1/spaces/${spaceId}/logs/access?limit=101`);
    expect(bad.status).toBe(400);
  });

  it('answers analytics from the rollups', async () => {
    const a = await t.api('GET', `/v1/spaces/${spaceId}/analytics`);
    expect(a.status).toBe(200);
    const d = a.body.data;
    expect(d.window).toBe('7d');
    expect(d.requests).toBe(5);
    // `/about.html` redirects to its pretty URL (3xx).
    expect(d.statusClasses).toEqual({ '2xx': 3, '3xx': 1, '4xx': 1, '5xx': 0 });
    expect(d.bytes).toBeGreaterThanOrEqual(3 * 4096);
    // Two user agents from one address: two visitors today.
    expect(d.visitors).toBe(2);
    expect(d.topPaths[0]).toEqual({ key: '/big.txt', requests: 3 });
    expect(d.topReferrers).toEqual([{ key: 'https://ref.example/x', requests: 1 }]);
    expect(d.series.reduce((s: number, p: any) => s + p.requests, 0)).toBe(5);
    const h = await t.api('GET', `/v1/spaces/${spaceId}/analytics?window=48h`);
    expect(h.body.data.series[0].at).toMatch(/T\d\d:00:00\.000Z$/);
    expect((await t.api('GET', `/v1/spaces/${spaceId}/analytics?window=1y`)).status).toBe(400);
  });

  it('reports space and team usage', async () => {
    const s = await t.api('GET', `/v1/spaces/${spaceId}/usage`);
    expect(s.status).toBe(200);
    expect(s.body.data.usage.requests).toBe(5);
    expect(s.body.data.usage.storageBytes).toBeGreaterThanOrEqual(4096);
    expect(s.body.data.usage.bandwidthBytes).toBe(
      (await t.api('GET', `/v1/spaces/${spaceId}/analytics`)).body.data.bytes,
    );
    const never = await createSpace(t, undefined, { slug: 'never-served', access: 'public' });
    expect((await t.api('GET', `/v1/spaces/${never.id}/usage`)).body.data.usage).toBeNull();
    const me = await t.api('GET', '/v1/account');
    const teamId = me.body.data.teams?.[0]?.id;
    if (teamId) {
      const u = await t.api('GET', `/v1/teams/${teamId}/usage`);
      expect(u.status).toBe(200);
      expect(u.body.data.spaces).toBeGreaterThanOrEqual(2);
      expect(u.body.data.members).toBeGreaterThanOrEqual(1);
      expect(u.body.data.publishesThisMonth).toBeGreaterThanOrEqual(1);
      expect(u.body.data.requests).toBe(5);
    }
  });

  it('hides another team’s logs, analytics and usage (404)', async () => {
    const other = await createUser(t);
    for (const p of ['logs/access', 'analytics', 'usage']) {
      const r = await t.api('GET', `/v1/spaces/${spaceId}/${p}`, { token: other.token });
      expect(r.status, p).toBe(404);
    }
  });

  it('follows new lines as NDJSON', async () => {
    const lines: any[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const req = http.request(
        `${t.url}/v1/spaces/${spaceId}/logs/access?follow=true`,
        { headers: { authorization: `Bearer ${t.ownerKey}` } },
        (res) => {
          expect(res.headers['content-type']).toBe('application/x-ndjson');
          let buf = '';
          res.on('data', (d) => {
            buf += d;
            let i = buf.indexOf('\n');
            while (i !== -1) {
              lines.push(JSON.parse(buf.slice(0, i)));
              buf = buf.slice(i + 1);
              i = buf.indexOf('\n');
            }
            if (lines.length >= 1) {
              req.destroy();
              resolve();
            }
          });
          // The stream is open: make one more request and flush it.
          setTimeout(async () => {
            await siteGet(t.port, '/about.html?followed=1');
            await t.server.services.accessLog!.flush();
          }, 100);
        },
      );
      req.on('error', (e) => (lines.length ? resolve() : reject(e)));
      req.end();
    });
    await done;
    expect(lines[0].path).toBe('/about.html?followed=1');
  }, 15_000);
});

describe('access log ring', () => {
  it('drops the oldest records when full and counts them', async () => {
    const written: number[] = [];
    const fakeStore = {
      transaction: async (fn: (repos: any) => Promise<void>) =>
        fn({
          accessLog: { insertMany: async (l: any[]) => written.push(...l.map((x) => x.status)) },
          accessRollups: { addHourly: async () => {}, addVisitors: async () => {}, addTop: async () => {} },
        }),
    };
    const r = new AccessLogRecorder(fakeStore as never, { capacity: 4, batch: 1000, intervalMs: 60_000 });
    for (let i = 0; i < 6; i++) {
      r.record({
        t: Date.now(),
        spaceId: 'spc_1',
        versionId: null,
        host: 'h',
        method: 'GET',
        path: '/',
        status: 200 + i,
        bytes: 1,
        durationMs: 0,
        referrer: undefined,
        userAgent: undefined,
        country: undefined,
        requestId: undefined,
        ip: '1.2.3.4',
      });
    }
    expect(r.dropped).toBe(2);
    await r.close();
    expect(written).toEqual([202, 203, 204, 205]);
  });
});
