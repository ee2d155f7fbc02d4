/**
 * `GET /v1/spaces?q=`: a case-insensitive substring of title or slug, with keyset pages that stay
 * inside the filter, LIKE's own characters taken literally, and other teams' spaces never found;
 * `state=deleted` lists the restorable deleted ones.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

describeEachDb('space search', (db) => {
  let t: TestServer;
  let user: Awaited<ReturnType<typeof createUser>>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startServer({ db });
    user = await createUser(t, 'searcher');
    const other = await createUser(t, 'other-searcher');
    const make = async (token: string, teamId: string, title: string, slug: string) => {
      const res = await t.api('POST', '/v1/spaces', { token, body: { teamId, title, slug } });
      if (res.status !== 201) throw new Error(res.text);
      return res.body.data.space.id as string;
    };
    ids.alpha = await make(user.token, user.teamId, 'Alpha Site', 'first-one');
    ids.alphabet = await make(user.token, user.teamId, 'Docs', 'alphabet-soup');
    ids.beta = await make(user.token, user.teamId, 'Beta', 'beta');
    ids.percent = await make(user.token, user.teamId, '100% real_deal', 'percent');
    ids.gamma = await make(user.token, user.teamId, 'Gamma ALPHA', 'gamma');
    // Matches by name, but in another team: never listed for this user.
    ids.foreign = await make(other.token, other.teamId, 'Alpha of others', 'alpha-others');
  });
  afterAll(() => t?.close());

  const list = async (query: string) => {
    const res = await t.api('GET', `/v1/spaces?${query}`, { token: user.token });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  it('matches title or slug, ignoring case, newest first', async () => {
    const found = (await list('q=aLpHa')).data.map((s: any) => s.id);
    expect(found).toEqual([ids.gamma, ids.alphabet, ids.alpha]);
    expect((await list('q=%20%20beta%20')).data.map((s: any) => s.id)).toEqual([ids.beta]);
    // No q (or a blank one): everything of the user's teams.
    expect((await list('q=%20')).data).toHaveLength(5);
  });

  it('keeps keyset pages inside the filter', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await list(`q=alpha&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...page.data.map((s: any) => s.id));
      cursor = page.pagination.nextCursor;
    } while (cursor);
    expect(seen).toEqual([ids.gamma, ids.alphabet, ids.alpha]);
  });

  it('takes % and _ literally', async () => {
    expect((await list('q=%25')).data.map((s: any) => s.id)).toEqual([ids.percent]);
    expect((await list('q=a_s')).data).toEqual([]);
    expect((await list('q=real_deal')).data.map((s: any) => s.id)).toEqual([ids.percent]);
  });

  it('lists deleted spaces that can be restored with state=deleted, searchable too', async () => {
    const del = await t.api('DELETE', `/v1/spaces/${ids.beta}`, { token: user.token });
    expect(del.status).toBe(202);
    expect((await list('')).data.map((s: any) => s.id)).not.toContain(ids.beta);
    expect((await list('state=deleted')).data.map((s: any) => s.id)).toEqual([ids.beta]);
    expect((await list('state=deleted&q=BET')).data.map((s: any) => s.id)).toEqual([ids.beta]);
    expect((await list('state=deleted&q=alpha')).data).toEqual([]);
    expect((await t.api('POST', `/v1/spaces/${ids.beta}/restore`, { token: user.token })).status).toBe(200);
    expect((await list('state=deleted')).data).toEqual([]);
    expect((await list('q=beta')).data.map((s: any) => s.id)).toEqual([ids.beta]);
  });

  it('refuses a q over 100 characters with a pointer', async () => {
    const res = await t.api('GET', `/v1/spaces?q=${'x'.repeat(101)}`, { token: user.token });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('/q');
  });
});
