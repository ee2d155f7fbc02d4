import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * People of a space and access requests through the API (behaviour §3.4): an invitation makes a
 * person with a person grant and mails a sign-in link for that space only; grants are replaced as a
 * whole; resend retires the old link; removal revokes grants and link; a visitor's request reaches
 * the team only once its address is confirmed, and approval makes a person and mails their link.
 */

const tokenIn = (text: string, prefix: string) =>
  new RegExp(`[?&]token=(${prefix}[A-Za-z0-9_-]+)`).exec(text)?.[1];

describeEachDb('people of a space', (db) => {
  let sink: SmtpSink;
  let t: TestServer;
  let n = 0;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startServer({ db, env: { SPACES_MAIL: sink.url, SPACES_JOB_POLL_MS: '50' } });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  async function newSpace(token = t.ownerKey) {
    const r = await t.api('POST', '/v1/spaces', {
      token,
      body: { slug: `ppl${db[0]}-${Date.now().toString(36)}-${n++}`, access: 'private' },
    });
    expect(r.status).toBe(201);
    return r.body.data.space as { id: string; slug: string };
  }

  it('invites by e-mail: a person, a viewer grant and a link that signs in to that space only', async () => {
    const space = await newSpace();
    const other = await newSpace();
    const email = `guest-${n}@example.test`;
    const r = await t.api('POST', `/v1/spaces/${space.id}/people`, {
      body: {
        email: email.toUpperCase(),
        name: 'Guest',
        paths: ['/docs/**', '!/docs/secret/**'],
        note: 'Have a look',
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ email, name: 'Guest', status: 'invited', spaceId: space.id });
    expect(r.body.data.grants).toEqual([
      {
        id: expect.stringMatching(/^grt_/),
        role: 'viewer',
        paths: ['/docs/**', '!/docs/secret/**'],
        target: 'live',
      },
    ]);

    const mail = await sink.next((m) => m.to.includes(email));
    expect(mail.parsed.text).toContain('Have a look');
    const token = tokenIn(mail.parsed.text ?? '', 'sppl_')!;
    expect(token).toBeTruthy();
    expect(mail.parsed.text).toContain(`/__service/person?token=${token}`);

    const people = t.server.services.people;
    expect(await people.signIn(other.id, token)).toBeNull();
    expect(await people.signIn(space.id, `${token}x`)).toBeNull();
    const signed = await people.signIn(space.id, token);
    expect(signed?.email).toBe(email);
    const list = await t.api('GET', `/v1/spaces/${space.id}/people`);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ status: 'active', acceptedAt: expect.any(String) });

    // The grant is one of the space's grants, for that address, and needs a verified e-mail.
    const grants = await t.server.services.store.repos.grants.activeForSpace(space.id);
    expect(
      grants.map((g) => [g.audience_type, JSON.parse(g.audience).email, JSON.parse(g.constraints)]),
    ).toEqual([['person', email, { verifiedEmail: true }]]);
  });

  it('refuses a second invitation, one to oneself, and bad paths with a pointer', async () => {
    const owner = await createUser(t, 'ppl');
    const space = await newSpace(owner.token);
    const email = `twice-${n}@example.test`;
    expect(
      (await t.api('POST', `/v1/spaces/${space.id}/people`, { token: owner.token, body: { email } })).status,
    ).toBe(201);
    const again = await t.api('POST', `/v1/spaces/${space.id}/people`, {
      token: owner.token,
      body: { email },
    });
    expectProblem(again, 409, 'space_person_invitation_pending');
    const self = await t.api('POST', `/v1/spaces/${space.id}/people`, {
      token: owner.token,
      body: { email: owner.email },
    });
    expectProblem(self, 422, 'space_person_self_invite');
    const bad = await t.api('POST', `/v1/spaces/${space.id}/people`, {
      token: owner.token,
      body: { email: `x-${n}@example.test`, paths: ['/ok/**', 'no-slash'] },
    });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.body.pointer).toBe('/paths/1');
    // Nothing was made or mailed for the refused ones.
    const list = await t.api('GET', `/v1/spaces/${space.id}/people`, { token: owner.token });
    expect(list.body.data.map((p: { email: string }) => p.email)).toEqual([email]);
    // Another team cannot see or change them.
    const stranger = await createUser(t, 'stranger');
    expect((await t.api('GET', `/v1/spaces/${space.id}/people`, { token: stranger.token })).status).toBe(404);
    const pid = list.body.data[0].id;
    expect(
      (await t.api('DELETE', `/v1/spaces/${space.id}/people/${pid}`, { token: stranger.token })).status,
    ).toBe(404);
  });

  it('replaces grants, resends a new link (the old one stops), and removes', async () => {
    const space = await newSpace();
    const email = `cycle-${n}@example.test`;
    const r = await t.api('POST', `/v1/spaces/${space.id}/people`, { body: { email } });
    const pid = r.body.data.id;
    const first = tokenIn((await sink.next((m) => m.to.includes(email))).parsed.text ?? '', 'sppl_')!;

    const put = await t.api('PUT', `/v1/spaces/${space.id}/people/${pid}/grants`, {
      body: {
        grants: [
          { role: 'commenter', paths: ['/a/**'] },
          { role: 'viewer', paths: ['/b/*'], target: 'all-versions' },
        ],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.data.grants.map((g: { role: string }) => g.role)).toEqual(['commenter', 'viewer']);
    const active = await t.server.services.store.repos.grants.activeForSpace(space.id);
    expect(active.map((g) => g.role).sort()).toEqual(['commenter', 'viewer']);

    const resent = await t.api('POST', `/v1/spaces/${space.id}/people/${pid}/resend`);
    expect(resent.status).toBe(200);
    await new Promise<void>((resolve, reject) => {
      const end = Date.now() + 15_000;
      const tick = () => {
        if (sink.received.filter((m) => m.to.includes(email)).length >= 2) resolve();
        else if (Date.now() > end) reject(new Error('no second e-mail'));
        else setTimeout(tick, 50);
      };
      tick();
    });
    const second = tokenIn(sink.received.filter((m) => m.to.includes(email))[1]!.parsed.text ?? '', 'sppl_')!;
    expect(second).not.toBe(first);
    expect(await t.server.services.people.signIn(space.id, first)).toBeNull();
    expect((await t.server.services.people.signIn(space.id, second))?.id).toBe(pid);

    expect((await t.api('DELETE', `/v1/spaces/${space.id}/people/${pid}`)).status).toBe(204);
    expect(await t.server.services.people.signIn(space.id, second)).toBeNull();
    expect(await t.server.services.store.repos.grants.activeForSpace(space.id)).toEqual([]);
    expectProblem(
      await t.api('POST', `/v1/spaces/${space.id}/people/${pid}/resend`),
      404,
      'space_person_not_found',
    );
    // Removed, the address can be invited again.
    expect((await t.api('POST', `/v1/spaces/${space.id}/people`, { body: { email } })).status).toBe(201);
  });

  it('access requests: confirmed by mail, then approved into a person or denied', async () => {
    const space = await newSpace();
    const row = await t.server.services.store.repos.spaces.byId(space.id);
    const people = t.server.services.people;
    const email = `asker-${n}@example.test`;
    await people.request(row!, { email, name: 'Asker', message: 'Please', path: '/docs/' });
    const confirm = await sink.next((m) => m.to.includes(email));
    const token = tokenIn(confirm.parsed.text ?? '', 'sprq_')!;
    expect(confirm.parsed.text).toContain(
      `${t.server.services.config.publicUrl}/v1/access/request/confirm?token=${token}`,
    );
    // Unconfirmed: the team sees nothing.
    expect((await t.api('GET', `/v1/spaces/${space.id}/requests`)).body.data).toEqual([]);
    expect(await people.confirmRequest('spc_other', token)).toBeNull();
    const confirmed = await people.confirmRequest(space.id, token);
    expect(confirmed?.status).toBe('pending');
    expect(await people.confirmRequest(space.id, token)).toBeNull();

    const list = await t.api('GET', `/v1/spaces/${space.id}/requests?status=pending`);
    expect(list.body.data).toEqual([
      expect.objectContaining({ email, name: 'Asker', message: 'Please', path: '/docs/', status: 'pending' }),
    ]);
    const id = list.body.data[0].id;
    const ok = await t.api('POST', `/v1/spaces/${space.id}/requests/${id}/approve`, {
      body: { role: 'commenter', paths: ['/docs/**'] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ status: 'approved', personId: expect.stringMatching(/^per_/) });
    const invite = await sink.next((m) => m.to.includes(email) && (m.parsed.text ?? '').includes('sppl_'));
    expect((await people.signIn(space.id, tokenIn(invite.parsed.text ?? '', 'sppl_')!))?.id).toBe(
      ok.body.data.personId,
    );
    expectProblem(
      await t.api('POST', `/v1/spaces/${space.id}/requests/${id}/deny`),
      409,
      'access_request_not_pending',
    );

    const other = `denied-${n}@example.test`;
    await people.request(row!, { email: other, path: '/' });
    await people.confirmRequest(
      space.id,
      tokenIn((await sink.next((m) => m.to.includes(other))).parsed.text ?? '', 'sprq_')!,
    );
    const pending = await t.api('GET', `/v1/spaces/${space.id}/requests?status=pending`);
    const denied = await t.api('POST', `/v1/spaces/${space.id}/requests/${pending.body.data[0].id}/deny`);
    expect(denied.body.data.status).toBe('denied');
    expect(
      (await t.api('GET', `/v1/spaces/${space.id}/people`)).body.data.map((p: { email: string }) => p.email),
    ).toEqual([email]);

    const activity = await t.api('GET', `/v1/spaces/${space.id}/activity?code=space.access_request_resolved`);
    expect(
      activity.body.data.map((e: { details: { decision: string } }) => e.details.decision).sort(),
    ).toEqual(['approved', 'denied']);
  });
});
