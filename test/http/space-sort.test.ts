/**
 * `GET /v1/spaces?sort=`: by name, by `updatedAt` (which a publish moves) or by creation, each way;
 * cursors resume in their order and belong to it; a bad value is a 400 pointing at `/sort`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { publishViaVersions } from '../publishing/helpers.ts';

describeEachDb('space list order', (db) => {
  let t: TestServer;
  let user: Awaited<ReturnType<typeof createUser>>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startServer({ db });
    user = await createUser(t, 'sorter');
    for (const title of ['charlie', 'Alpha', 'bravo', 'delta', 'Echo']) {
      const res = await t.api('POST', '/v1/spaces', {
        token: user.token,
        // Explicit slugs: a generated name could contain the search term below.
        body: {
          teamId: user.teamId,
          title,
          slug: `sort-${title.toLowerCase()}`,
        },
      });
      if (res.status !== 201) throw new Error(res.text);
      ids[title.toLowerCase()] = res.body.data.space.id;
    }
  });
  afterAll(() => t?.close());

  const titles = async (query: string) => {
    const res = await t.api('GET', `/v1/spaces?team=${user.teamId}&${query}`, { token: user.token });
    expect(res.status, res.text).toBe(200);
    return res.body.data.map((s: any) => s.title.toLowerCase());
  };
  /** Every page of a listing, `limit` at a time, following the cursors. */
  const pages = async (query: string, limit: number) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await t.api(
        'GET',
        `/v1/spaces?team=${user.teamId}&${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token: user.token },
      );
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.data.map((s: any) => s.title.toLowerCase()));
      cursor = res.body.pagination.nextCursor;
      expect(res.body.pagination.hasMore).toBe(cursor !== null);
    } while (cursor);
    return seen;
  };

  it('sorts by name either way, ignoring case, and pages in that order', async () => {
    const az = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
    expect(await titles('sort=name')).toEqual(az);
    expect(await titles('sort=-name')).toEqual([...az].reverse());
    expect(await pages('sort=name', 2)).toEqual(az);
    expect(await pages('sort=-name', 1)).toEqual([...az].reverse());
    // Without a team too (the person's own teams), and with a search.
    const mine = await t.api('GET', '/v1/spaces?sort=name', { token: user.token });
    expect(mine.body.data.map((s: any) => s.title.toLowerCase())).toEqual(az);
    expect(await titles('sort=-name&q=ha')).toEqual(['charlie', 'alpha']);
  });

  it('sorts by creation: -created is the default, created the oldest first', async () => {
    const newest = ['echo', 'delta', 'bravo', 'alpha', 'charlie'];
    expect(await titles('')).toEqual(newest);
    expect(await titles('sort=-created')).toEqual(newest);
    expect(await titles('sort=created')).toEqual([...newest].reverse());
    expect(await pages('sort=created', 2)).toEqual([...newest].reverse());
  });

  it('sorts by updatedAt: a publish or a rename moves a space to the top of -updated', async () => {
    await publishViaVersions(t, ids.bravo!, { 'index.html': '<h1>b</h1>' }, { token: user.token });
    const renamed = await t.api('PATCH', `/v1/spaces/${ids.alpha}`, {
      token: user.token,
      body: { title: 'Alpha' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const recent = await titles('sort=-updated');
    expect(recent.slice(0, 2)).toEqual(['alpha', 'bravo']);
    expect(await pages('sort=-updated', 2)).toEqual(recent);
    expect(await pages('sort=updated', 3)).toEqual([...recent].reverse());
    // The published one's updatedAt is its live channel's move.
    const bravo = await t.api('GET', `/v1/spaces/${ids.bravo}`, { token: user.token });
    expect(bravo.body.data.space.updatedAt).toBe(bravo.body.data.space.channels.live.updatedAt);
  });

  it('refuses an unknown order, and a cursor of another order', async () => {
    const bad = await t.api('GET', '/v1/spaces?sort=size', { token: user.token });
    expectProblem(bad, 400, 'validation_error');
    expect(JSON.stringify(bad.body)).toContain('/sort');
    const first = await t.api('GET', `/v1/spaces?team=${user.teamId}&sort=name&limit=1`, {
      token: user.token,
    });
    const cursor = encodeURIComponent(first.body.pagination.nextCursor);
    const other = await t.api(
      'GET',
      `/v1/spaces?team=${user.teamId}&sort=-updated&limit=1&cursor=${cursor}`,
      {
        token: user.token,
      },
    );
    expectProblem(other, 400, 'invalid_cursor');
  });
});
