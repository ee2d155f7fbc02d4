import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { openSse } from './sse-client.ts';

describeEachDb('activity feeds, audit log and event streams', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  const newSpace = async (token: string, teamId: string) => {
    const res = await t.api('POST', '/v1/spaces', { token, body: { teamId } });
    expect(res.status).toBe(201);
    return res.body.data.space as { id: string; slug: string };
  };
  const setVar = async (token: string, spaceId: string, name: string) => {
    const res = await t.api('PUT', `/v1/spaces/${spaceId}/variables/${name}`, {
      token,
      body: { value: 'v' },
    });
    expect([200, 201]).toContain(res.status);
  };

  it('lists a space’s, a team’s and the account’s events, newest first, with filters and a keyset cursor', async () => {
    const u = await createUser(t);
    const s = await newSpace(u.token, u.teamId);
    for (const n of ['A', 'B', 'C']) await setVar(u.token, s.id, n);
    await t.api('DELETE', `/v1/spaces/${s.id}/variables/B`, { token: u.token });

    const space = await t.api('GET', `/v1/spaces/${s.id}/activity`, { token: u.token });
    expect(space.status).toBe(200);
    expect(space.body.data.map((e: any) => e.code)).toEqual([
      'variable.deleted',
      'variable.updated',
      'variable.updated',
      'variable.updated',
      'space.created',
    ]);
    const newest = space.body.data[0];
    expect(newest).toMatchObject({
      tenantId: u.teamId,
      spaceId: s.id,
      actor: { type: 'user', id: u.userId },
      details: { name: 'B' },
    });
    expect(newest.id).toMatch(/^evt_/);
    // Sequences are the team's, increasing in commit order.
    const seqs = space.body.data.map((e: any) => e.sequence);
    expect([...seqs].sort((a, b) => b - a)).toEqual(seqs);

    const exact = await t.api('GET', `/v1/spaces/${s.id}/activity?code=space.created`, { token: u.token });
    expect(exact.body.data.map((e: any) => e.code)).toEqual(['space.created']);
    const wildcard = await t.api('GET', `/v1/spaces/${s.id}/activity?code=variable.*`, { token: u.token });
    expect(wildcard.body.data).toHaveLength(4);
    const list = await t.api('GET', `/v1/spaces/${s.id}/activity?code=space.created,variable.deleted`, {
      token: u.token,
    });
    expect(list.body.data.map((e: any) => e.code)).toEqual(['variable.deleted', 'space.created']);
    const repeated = await t.api(
      'GET',
      `/v1/spaces/${s.id}/activity?code=space.created&code=variable.deleted`,
      { token: u.token },
    );
    expect(repeated.body.data).toHaveLength(2);
    expectProblem(
      await t.api('GET', `/v1/spaces/${s.id}/activity?code=nope.nothing`, { token: u.token }),
      400,
      'invalid_event_code',
    );

    // Keyset pages: 2 + 2 + 1, nothing twice, nothing lost.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const qs: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await t.api('GET', `/v1/spaces/${s.id}/activity?limit=2${qs}`, { token: u.token });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((e: any) => e.id));
      cursor = page.body.pagination.nextCursor;
    } while (cursor);
    expect(seen).toEqual(space.body.data.map((e: any) => e.id));
    expectProblem(
      await t.api('GET', `/v1/spaces/${s.id}/activity?limit=101`, { token: u.token }),
      400,
      'validation_error',
    );

    // since/until bound createdAt.
    const created = space.body.data[4].createdAt;
    const future = new Date(Date.now() + 3600_000).toISOString();
    const none = await t.api('GET', `/v1/spaces/${s.id}/activity?since=${future}`, { token: u.token });
    expect(none.body.data).toEqual([]);
    const upTo = await t.api(
      'GET',
      `/v1/spaces/${s.id}/activity?until=${encodeURIComponent(new Date(Date.parse(created) + 1).toISOString())}`,
      { token: u.token },
    );
    expect(upTo.body.data.map((e: any) => e.code)).toContain('space.created');

    const team = await t.api('GET', `/v1/teams/${u.teamId}/activity`, { token: u.token });
    expect(team.body.data.map((e: any) => e.code)).toEqual(
      expect.arrayContaining(['space.created', 'variable.deleted', 'user.created', 'user.signed_in']),
    );
    const account = await t.api('GET', '/v1/activity?code=space.*', { token: u.token });
    expect(account.body.data.map((e: any) => e.spaceId)).toEqual([s.id]);
  });

  it('keeps tenants apart: another person gets 404 on the feeds and nothing of them account-wide', async () => {
    const a = await createUser(t);
    const b = await createUser(t);
    const s = await newSpace(a.token, a.teamId);
    expect((await t.api('GET', `/v1/spaces/${s.id}/activity`, { token: b.token })).status).toBe(404);
    expect((await t.api('GET', `/v1/teams/${a.teamId}/activity`, { token: b.token })).status).toBe(404);
    expect((await t.api('GET', `/v1/teams/${a.teamId}/audit-log`, { token: b.token })).status).toBe(404);
    expect((await t.api('GET', `/v1/teams/${a.teamId}/events/stream`, { token: b.token })).status).toBe(404);
    const mine = await t.api('GET', '/v1/activity?limit=100', { token: b.token });
    expect(mine.body.data.every((e: any) => e.tenantId === b.teamId)).toBe(true);
    expect(mine.body.data.some((e: any) => e.spaceId === s.id)).toBe(false);
  });

  it('the audit log holds security events only, for owners and admins', async () => {
    const owner = await createUser(t);
    const s = await newSpace(owner.token, owner.teamId);
    await setVar(owner.token, s.id, 'X');
    const key = await t.api('POST', '/v1/account/api-keys', {
      token: owner.token,
      body: { name: 'ci', team: owner.teamId, preset: 'ci_deploy' },
    });
    expect(key.status).toBe(201);
    await t.api('DELETE', `/v1/account/api-keys/${key.body.data.id}`, { token: owner.token });
    const audit = await t.api('GET', `/v1/teams/${owner.teamId}/audit-log`, { token: owner.token });
    expect(audit.status).toBe(200);
    const codes = audit.body.data.map((e: any) => e.code);
    expect(codes).toEqual(expect.arrayContaining(['api_key.revoked', 'api_key.created', 'user.signed_in']));
    expect(codes).not.toContain('variable.updated');
    expect(codes).not.toContain('space.created');
    const onlyKeys = await t.api('GET', `/v1/teams/${owner.teamId}/audit-log?code=api_key.*`, {
      token: owner.token,
    });
    expect(onlyKeys.body.data.map((e: any) => e.code)).toEqual(['api_key.revoked', 'api_key.created']);
    // A plain member may read the team's activity but not its audit log.
    const team = await t.api('POST', '/v1/teams', { token: owner.token, body: { name: 'Audit Co' } });
    const member = await createUser(t);
    const inv = await t.api('POST', `/v1/teams/${team.body.data.id}/invitations`, {
      token: owner.token,
      body: { email: member.email, role: 'member' },
    });
    expect(inv.status).toBe(201);
    const accepted = await t.api('POST', `/v1/account/invitations/${inv.body.data.id}/accept`, {
      token: member.token,
    });
    expect(accepted.status).toBe(200);
    expectProblem(
      await t.api('GET', `/v1/teams/${team.body.data.id}/audit-log`, { token: member.token }),
      403,
      'forbidden',
    );
    const joined = await t.api('GET', `/v1/teams/${team.body.data.id}/audit-log`, { token: owner.token });
    expect(joined.body.data[0]).toMatchObject({
      code: 'team.member_added',
      actor: { type: 'user', id: member.userId },
      details: { userId: member.userId, role: 'member' },
    });
  });

  it('streams events over SSE; a reconnect with Last-Event-ID loses nothing and repeats nothing', async () => {
    const u = await createUser(t);
    const s = await newSpace(u.token, u.teamId);
    const events = t.server.services.events;
    const before = events.eventListenerCount();
    const url = `${t.url}/v1/teams/${u.teamId}/events/stream?heartbeatSeconds=1`;
    const auth = { authorization: `Bearer ${u.token}` };
    const first = await openSse(url, auth);
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/event-stream/);
    await first.waitForComment(/heartbeat/);
    for (const n of ['A1', 'A2', 'A3']) await setVar(u.token, s.id, n);
    await first.waitForEvents(3);
    expect(first.events.map((e) => e.data.details.name)).toEqual(['A1', 'A2', 'A3']);
    expect(first.events.map((e) => e.event)).toEqual([
      'variable.updated',
      'variable.updated',
      'variable.updated',
    ]);
    expect(first.events.every((e) => e.id === String(e.data.sequence))).toBe(true);
    // The client drops the connection; the server lets go of its listener.
    first.destroy();
    await first.closed;
    for (let i = 0; i < 100 && events.eventListenerCount() > before; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(events.eventListenerCount()).toBe(before);
    // Events made while nobody listens come on the reconnect, after the last id seen.
    for (const n of ['B1', 'B2']) await setVar(u.token, s.id, n);
    const lastId = first.events[first.events.length - 1]!.id!;
    const second = await openSse(url, { ...auth, 'last-event-id': lastId });
    await setVar(u.token, s.id, 'C1');
    await second.waitForEvents(3);
    const all = [...first.events, ...second.events];
    expect(all.map((e) => e.data.details.name)).toEqual(['A1', 'A2', 'A3', 'B1', 'B2', 'C1']);
    const seqs = all.map((e) => Number(e.id));
    expect(new Set(seqs).size).toBe(seqs.length);
    // The log holds exactly these events after the stream began: none lost.
    const logged = await t.api('GET', `/v1/spaces/${s.id}/activity?code=variable.updated`, {
      token: u.token,
    });
    expect(logged.body.data.map((e: any) => e.sequence).reverse()).toEqual(seqs);
    // ?since= replays the same way; the space's stream carries the space's events only.
    const replay = await openSse(
      `${t.url}/v1/spaces/${s.id}/events/stream?since=${first.events[0]!.id}`,
      auth,
    );
    await replay.waitForEvents(5);
    expect(replay.events.map((e) => e.data.details.name)).toEqual(['A2', 'A3', 'B1', 'B2', 'C1']);
    expectProblem(
      await t.api('GET', `/v1/teams/${u.teamId}/events/stream`, {
        token: u.token,
        headers: { 'last-event-id': 'abc' },
      }),
      400,
      'invalid_last_event_id',
    );
    second.destroy();
    replay.destroy();
    await Promise.all([second.closed, replay.closed]);
  });

  it('a stream on one instance carries events made on another (PostgreSQL), and closing the server ends it', async () => {
    if (db !== 'postgres') return;
    const other = await startServer({ db, instanceOf: t });
    let closed = false;
    try {
      const u = await createUser(t);
      const s = await newSpace(u.token, u.teamId);
      const stream = await openSse(`${other.url}/v1/spaces/${s.id}/events/stream?since=0`, {
        authorization: `Bearer ${u.token}`,
      });
      await stream.waitForEvents(1);
      expect(stream.events[0]!.data.code).toBe('space.created');
      // Written through the first instance, read on the second.
      await setVar(u.token, s.id, 'ELSEWHERE');
      await stream.waitForEvents(2);
      expect(stream.events[1]!.data).toMatchObject({
        code: 'variable.updated',
        details: { name: 'ELSEWHERE' },
      });
      // The server's close ends open streams instead of waiting for them.
      await other.close();
      closed = true;
      await stream.closed;
    } finally {
      if (!closed) await other.close();
    }
  });
});
