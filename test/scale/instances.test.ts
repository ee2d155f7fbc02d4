import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { PG_URL, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two instances on one PostgreSQL database: a channel moved through A is served by B at once, told
 * by the change feed. B's clock is frozen, so its caches' time-to-live never runs out: only the
 * feed can make B see the change.
 */
describe.skipIf(!PG_URL)('instances on one PostgreSQL database', () => {
  let a: TestServer;
  let b: TestServer;
  let spaceId: string;
  const versions: string[] = [];
  beforeAll(async () => {
    a = await startServer({ db: 'postgres' });
    b = await startServer({ instanceOf: a, clock: new ManualClock() });
    const space = await createSpace(a, undefined, { slug: 'feed-site', access: 'public' });
    spaceId = space.id;
    for (const n of [1, 2]) {
      const { finalized } = await publishViaVersions(a, spaceId, { 'index.html': `<h1>v${n}</h1>` });
      versions.push(finalized.version.id);
    }
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const onB = async () => (await b.api('GET', '/', { token: null, host: 'feed-site.localhost' })).text;

  it('serves a promote made on another instance within a second, 20 times over', async () => {
    expect(await onB()).toContain('<h1>v2</h1>');
    const delays: number[] = [];
    for (let i = 0; i < 20; i++) {
      const target = versions[i % 2]!;
      const want = `<h1>v${(i % 2) + 1}</h1>`;
      // B has the current version cached; A moves the channel.
      await onB();
      const res = await a.api('POST', `/v1/spaces/${spaceId}/versions/${target}/promote`, { body: {} });
      expect(res.status).toBe(200);
      const moved = Date.now();
      while (!(await onB()).includes(want)) {
        if (Date.now() - moved > 1000) throw new Error(`promote ${i} not served by B within 1 s`);
        await sleep(5);
      }
      delays.push(Date.now() - moved);
    }
    delays.sort((x, y) => x - y);
    console.log(`promote on A → served by B: p50 ${delays[10]} ms, max ${delays.at(-1)} ms`);
    const feed = b.server.changeFeed.stats();
    expect(feed.connected).toBe(true);
    expect(feed.delivered).toBeGreaterThanOrEqual(20);
  }, 60_000);

  it('drops a team’s released tags on every instance when one announces a change', async () => {
    const teams = await a.api('GET', '/v1/teams');
    const teamId = teams.body.data[0].id as string;
    // B caches "no release" for the team (its frozen clock never lets that expire by itself).
    expect(await b.server.services.tags.releasedGraph(teamId)).toBeNull();
    const graph = {
      tags: [{ id: 'x', type: 'script', consentCategory: 'necessary', config: { code: 'window.x=1' } }],
    };
    const now = new Date().toISOString();
    const db = a.server.services.database.db;
    await db
      .insertInto('tag_versions')
      .values({
        id: 'tagv_feed',
        team_id: teamId,
        status: 'published',
        base_version_id: null,
        graph: JSON.stringify(graph),
        graph_revision: 1,
        tag_count: 1,
        trigger_count: 0,
        variable_count: 0,
        created_by: null,
        created_at: now,
        updated_at: now,
        submitted_at: null,
        submitted_by: null,
        approved_at: null,
        approved_by: null,
        published_at: now,
        published_by: null,
        abandoned_at: null,
      })
      .execute();
    await a.server.services.store.repos.tagReleases.point(teamId, 'production', 'tagv_feed', now, null);
    expect(await b.server.services.tags.releasedGraph(teamId)).toBeNull();
    a.server.services.events.teamTagsChanged(teamId);
    const moved = Date.now();
    while ((await b.server.services.tags.releasedGraph(teamId)) === null) {
      if (Date.now() - moved > 1000) throw new Error('B still serves the old release after 1 s');
      await sleep(5);
    }
  });

  it('counts rate limits across instances: sign-in attempts on two instances share one limit', async () => {
    // B's clock is frozen; C is a third instance on real time, like A.
    const c = await startServer({ instanceOf: a });
    const attempt = (t: TestServer) =>
      t.api('POST', '/v1/account/sessions', {
        token: null,
        body: { email: 'nobody@example.com', password: 'wrong password' },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await attempt(i % 2 ? c : a)).status);
    expect(statuses.every((s) => s === 401)).toBe(true);
    const refused = await attempt(c);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await attempt(a)).status).toBe(429);
    await c.close();
  });
});
