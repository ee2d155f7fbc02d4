import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { ActivityEvent } from '../../src/domain/events/model.ts';
import type { EventInput } from '../../src/domain/webhooks/model.ts';
import { newId } from '../../src/ids.ts';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { answer, type Received, type Receiver, startReceiver } from './receiver.ts';

/**
 * Signed webhooks (#24 part B, behaviour §14) over HTTP against a real local receiver (allowed by
 * SPACES_WEBHOOK_ALLOW), with a fake clock driving the retries. Events are fed to the webhook
 * fanout directly (the event log wires it at merge); signatures are checked here with Node's crypto,
 * not with the service's helper.
 */

/** Verifies `Service-Signature` independently; returns how many `v1` values match `secret`. */
function matchingSignatures(r: Received, secret: string): number {
  const header = String(r.headers['service-signature']);
  const parts = header.split(',').map((p) => p.trim());
  const t = parts.find((p) => p.startsWith('t='))!.slice(2);
  const expected = createHmac('sha256', secret).update(`${t}.${r.body}`).digest();
  return parts
    .filter((p) => p.startsWith('v1='))
    .filter((p) => {
      const got = Buffer.from(p.slice(3), 'hex');
      return got.length === expected.length && timingSafeEqual(got, expected);
    }).length;
}

describeEachDb('webhooks', (db) => {
  let t: TestServer;
  let rx: Receiver;
  let teamId: string;
  const clock = new ManualClock(new Date('2026-11-28T12:00:00.000Z'));
  const recorded: EventInput[] = [];
  let sequence = 0;

  beforeAll(async () => {
    rx = await startReceiver();
    t = await startServer({
      db,
      clock,
      env: { SPACES_WEBHOOK_ALLOW: 'http,127.0.0.1' },
      webhookEvents: async (_tx, input) => {
        recorded.push(input);
      },
    });
    teamId = (await t.api('GET', '/v1/account')).body.data.teams[0].id;
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });
  beforeEach(() => {
    rx.received.length = 0;
  });

  const event = (code: string, tenantId = teamId): ActivityEvent => ({
    id: newId('evt'),
    sequence: ++sequence,
    tenantId,
    spaceId: null,
    actor: { type: 'system', id: null },
    code,
    message: `Something happened: ${code}.`,
    details: { n: sequence },
    createdAt: clock.now().toISOString(),
  });
  const emit = (e: ActivityEvent) =>
    t.server.services.store.transaction((_r, tx) => t.server.services.webhookFanout(tx, e));
  const drain = () => t.server.services.jobs.drain();
  const create = async (path: string, extra: Record<string, unknown> = {}) => {
    const r = await t.api('POST', '/v1/webhooks', { body: { url: `${rx.url}${path}`, ...extra } });
    expect(r.status, r.text).toBe(201);
    return r.body.data as { id: string; secret: string; [k: string]: unknown };
  };
  const deliveries = async (id: string) =>
    (await t.api('GET', `/v1/webhooks/${id}/deliveries`)).body.data as any[];
  const at = (path: string) => rx.received.filter((r) => r.path === path);

  it('creates a webhook whose secret is shown once, lists and reads it, and records webhook.created', async () => {
    const hook = await create('/created', { description: 'ci', events: ['version.*', 'channel.promoted'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(hook).toMatchObject({
      teamId,
      url: `${rx.url}/created`,
      description: 'ci',
      events: ['version.*', 'channel.promoted'],
      status: 'active',
      consecutiveFailures: 0,
      previousSecretExpiresAt: null,
    });
    const got = await t.api('GET', `/v1/webhooks/${hook.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data.secret).toBeUndefined();
    expect(got.text).not.toContain(hook.secret);
    const list = await t.api('GET', '/v1/webhooks');
    expect(list.body.data.map((w: any) => w.id)).toContain(hook.id);
    expect(list.text).not.toContain('whsec_');
    expect(
      recorded.find((e) => e.code === 'webhook.created' && e.details.webhookId === hook.id),
    ).toMatchObject({
      tenantId: teamId,
    });
    const omitted = await create('/all');
    expect(omitted.events).toEqual(['*']);
  });

  it('refuses unknown event filters and non-public or non-https URLs with a pointer', async () => {
    const bad = await t.api('POST', '/v1/webhooks', {
      body: { url: `${rx.url}/x`, events: ['version.ready', 'version.exploded'] },
    });
    expect(expectProblem(bad, 400, 'invalid_webhook_events').pointer).toBe('/events/1');
    const badResource = await t.api('POST', '/v1/webhooks', {
      body: { url: `${rx.url}/x`, events: ['nope.*'] },
    });
    expectProblem(badResource, 400, 'invalid_webhook_events');
    const empty = await t.api('POST', '/v1/webhooks', { body: { url: `${rx.url}/x`, events: [] } });
    expectProblem(empty, 400, 'invalid_webhook_events');
    for (const url of [
      'https://10.0.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/',
      'https://[::ffff:10.0.0.1]/',
      'https://167772161/', // 10.0.0.1 in decimal
      'ftp://example.com/',
    ]) {
      const r = await t.api('POST', '/v1/webhooks', { body: { url } });
      expect(expectProblem(r, 400, 'webhook_url_refused').pointer, url).toBe('/url');
    }
    const hook = await create('/patch-me');
    const p = await t.api('PATCH', `/v1/webhooks/${hook.id}`, { body: { url: 'https://192.168.0.10/' } });
    expect(expectProblem(p, 400, 'webhook_url_refused').pointer).toBe('/url');
    const e = await t.api('PATCH', `/v1/webhooks/${hook.id}`, { body: { events: ['bogus'] } });
    expect(expectProblem(e, 400, 'invalid_webhook_events').pointer).toBe('/events/0');
  });

  it('delivers matching events with the body, headers and a signature Node’s crypto verifies', async () => {
    const hook = await create('/signed', { events: ['version.*'] });
    const ready = event('version.ready');
    await emit(ready);
    await emit(event('channel.promoted')); // not in the filter
    await drain();
    const got = at('/signed');
    expect(got).toHaveLength(1);
    const r = got[0]!;
    expect(r.method).toBe('POST');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['service-event-id']).toBe(ready.id);
    expect(r.headers['service-delivery-id']).toMatch(/^whd_/);
    expect(JSON.parse(r.body)).toEqual({
      version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      event: ready,
    });
    const sig = String(r.headers['service-signature']);
    expect(sig).toMatch(/^t=\d+, v1=[0-9a-f]{64}$/);
    expect(Number(/t=(\d+)/.exec(sig)![1])).toBe(Math.floor(clock.now().getTime() / 1000));
    expect(matchingSignatures(r, hook.secret)).toBe(1);
    expect(matchingSignatures(r, 'whsec_wrong')).toBe(0);

    const [d] = await deliveries(hook.id);
    expect(d).toMatchObject({
      id: r.headers['service-delivery-id'],
      eventId: ready.id,
      eventCode: 'version.ready',
      state: 'succeeded',
      attempts: 1,
      lastStatusCode: 200,
      responseExcerpt: 'ok',
      nextAttemptAt: null,
    });
    const one = await t.api('GET', `/v1/webhook-deliveries/${d.id}`);
    expect(one.body.data.event).toEqual(ready);
  });

  it('signs with both secrets for 24 hours after a rotation, then with the new one only; expireNow drops the old at once', async () => {
    const hook = await create('/rotate', { events: ['build.*'] });
    const rot = await t.api('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { body: {} });
    expect(rot.status, rot.text).toBe(200);
    const secret2 = rot.body.data.secret as string;
    expect(secret2).not.toBe(hook.secret);
    expect(Date.parse(rot.body.data.previousSecretExpiresAt) - clock.now().getTime()).toBe(24 * 3600_000);
    expect(recorded.some((e) => e.code === 'webhook.secret_rotated' && e.details.webhookId === hook.id)).toBe(
      true,
    );

    await emit(event('build.succeeded'));
    await drain();
    const during = at('/rotate')[0]!;
    expect(String(during.headers['service-signature']).match(/v1=/g)).toHaveLength(2);
    expect(matchingSignatures(during, secret2)).toBe(1);
    expect(matchingSignatures(during, hook.secret)).toBe(1);

    clock.advance(24 * 3600_000 + 1000);
    await emit(event('build.failed'));
    await drain();
    const after = at('/rotate')[1]!;
    expect(String(after.headers['service-signature']).match(/v1=/g)).toHaveLength(1);
    expect(matchingSignatures(after, secret2)).toBe(1);
    expect(matchingSignatures(after, hook.secret)).toBe(0);

    const now = await t.api('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { body: { expireNow: true } });
    const secret3 = now.body.data.secret as string;
    expect(now.body.data.previousSecretExpiresAt).toBeNull();
    await emit(event('build.canceled'));
    await drain();
    const last = at('/rotate')[2]!;
    expect(matchingSignatures(last, secret3)).toBe(1);
    expect(matchingSignatures(last, secret2)).toBe(0);
  });

  it('retries with backoff until exhausted, turns failing after 8 and disabled after 32 failures, and PATCH re-enables', async () => {
    rx.on('/down', answer(500, 'down'));
    const hook = await create('/down', { events: ['variable.updated'] });
    await emit(event('variable.updated'));
    await drain();
    let [d] = await deliveries(hook.id);
    expect(d).toMatchObject({ state: 'failed', attempts: 1, lastStatusCode: 500, responseExcerpt: 'down' });
    const wait = Date.parse(d.nextAttemptAt) - clock.now().getTime();
    expect(wait).toBeGreaterThanOrEqual(24_000); // 30 s ± 20 %
    expect(wait).toBeLessThanOrEqual(36_000);
    // Not due yet: nothing is sent.
    await drain();
    expect(at('/down')).toHaveLength(1);
    const waits: number[] = [wait];
    for (let i = 2; i <= 8; i++) {
      clock.set(Date.parse(d.nextAttemptAt));
      await drain();
      [d] = await deliveries(hook.id);
      expect(d.attempts).toBe(i);
      if (d.nextAttemptAt) waits.push(Date.parse(d.nextAttemptAt) - clock.now().getTime());
    }
    expect(d).toMatchObject({ state: 'exhausted', attempts: 8, nextAttemptAt: null });
    expect(at('/down')).toHaveLength(8);
    // Each wait is its base (30 s × 4ⁿ, at most 12 h) spread by ±20 % jitter.
    expect(waits).toHaveLength(7);
    waits.forEach((w, i) => {
      const base = Math.min(30_000 * 4 ** i, 12 * 3600_000);
      expect(w, `wait ${i + 1}`).toBeGreaterThanOrEqual(base * 0.8);
      expect(w, `wait ${i + 1}`).toBeLessThanOrEqual(base * 1.2);
    });
    let w = (await t.api('GET', `/v1/webhooks/${hook.id}`)).body.data;
    expect(w).toMatchObject({ status: 'failing', consecutiveFailures: 8 });

    // Three more events, each failing 8 times: 32 consecutive failures disable the webhook.
    for (let n = 0; n < 3; n++) await emit(event('variable.updated'));
    // The longest wait is 12 h + 20 % jitter: 15 h steps make each round one attempt of each.
    for (let round = 0; round < 10; round++) {
      await drain();
      clock.advance(15 * 3600_000);
    }
    w = (await t.api('GET', `/v1/webhooks/${hook.id}`)).body.data;
    expect(w).toMatchObject({ status: 'disabled', consecutiveFailures: 32, disabledReason: 'failures' });
    expect(
      recorded.filter((e) => e.code === 'webhook.disabled' && e.details.webhookId === hook.id),
    ).toHaveLength(1);
    expect(at('/down')).toHaveLength(32);

    // Disabled: new events are not delivered; redelivery is refused.
    await emit(event('variable.updated'));
    await drain();
    expect(at('/down')).toHaveLength(32);
    const [latest] = await deliveries(hook.id);
    expectProblem(
      await t.api('POST', `/v1/webhook-deliveries/${latest.id}/redeliver`),
      409,
      'webhook_disabled',
    );

    // Re-enabled: counters reset; the next success keeps it active.
    const re = await t.api('PATCH', `/v1/webhooks/${hook.id}`, { body: { status: 'active' } });
    expect(re.body.data).toMatchObject({ status: 'active', consecutiveFailures: 0, disabledReason: null });
    rx.on('/down', answer(204, ''));
    await emit(event('variable.updated'));
    await drain();
    expect(at('/down')).toHaveLength(33);
    expect((await deliveries(hook.id))[0]).toMatchObject({ state: 'succeeded', lastStatusCode: 204 });
  });

  it('a success resets the failure count and a failing webhook becomes active again', async () => {
    let status = 500;
    rx.on('/flaky', (_q, res) => {
      res.writeHead(status);
      res.end();
    });
    const hook = await create('/flaky', { events: ['api_key.*'] });
    for (let i = 0; i < 8; i++) await emit(event('api_key.created'));
    await drain();
    expect((await t.api('GET', `/v1/webhooks/${hook.id}`)).body.data).toMatchObject({
      status: 'failing',
      consecutiveFailures: 8,
    });
    status = 200;
    clock.advance(60_000);
    await drain();
    expect((await t.api('GET', `/v1/webhooks/${hook.id}`)).body.data).toMatchObject({
      status: 'active',
      consecutiveFailures: 0,
    });
  });

  it('does not follow redirects: a 3xx is a failure and the Location is never requested', async () => {
    rx.on('/moved', answer(302, '', { location: `${rx.url}/elsewhere` }));
    const hook = await create('/moved', { events: ['domain.verified'] });
    await emit(event('domain.verified'));
    await drain();
    expect(at('/moved')).toHaveLength(1);
    expect(at('/elsewhere')).toHaveLength(0);
    const [d] = await deliveries(hook.id);
    expect(d).toMatchObject({ state: 'failed', lastStatusCode: 302 });
    expect(d.lastError).toContain('redirects are not followed');
  });

  it('reads at most 64 KiB of an answer: an endless 200 body still completes the delivery', async () => {
    let written = 0;
    rx.on('/endless', (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'a');
      const pump = () => {
        while (!res.destroyed && written < 64 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
      };
      res.on('error', () => {});
      pump();
    });
    const hook = await create('/endless', { events: ['team.updated'] });
    await emit(event('team.updated'));
    await drain();
    const [d] = await deliveries(hook.id);
    expect(d).toMatchObject({ state: 'succeeded', lastStatusCode: 200 });
    expect(d.responseExcerpt).toHaveLength(1024);
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('redelivers a delivery as a new one with the same event id', async () => {
    const hook = await create('/again', { events: ['space.created'] });
    const e = event('space.created');
    await emit(e);
    await drain();
    const [first] = await deliveries(hook.id);
    const r = await t.api('POST', `/v1/webhook-deliveries/${first.id}/redeliver`);
    expect(r.status, r.text).toBe(202);
    expect(r.body.data).toMatchObject({ state: 'pending', eventId: e.id, redeliveryOf: first.id });
    expect(r.body.data.id).not.toBe(first.id);
    await drain();
    const got = at('/again');
    expect(got).toHaveLength(2);
    expect(got[1]!.headers['service-event-id']).toBe(e.id);
    expect(got[1]!.headers['service-delivery-id']).toBe(r.body.data.id);
    expect(matchingSignatures(got[1]!, hook.secret)).toBe(1);
  });

  it('keeps teams apart: another team sees 404 everywhere and gets no deliveries of this team’s events', async () => {
    const hook = await create('/mine', { events: ['user.*'] });
    await emit(event('user.signed_in'));
    await drain();
    const [d] = await deliveries(hook.id);
    const other = await createUser(t, 'hook-rival');
    const as = { token: other.token };
    expectProblem(await t.api('GET', `/v1/webhooks/${hook.id}`, as), 404, 'not_found');
    expectProblem(
      await t.api('PATCH', `/v1/webhooks/${hook.id}`, { ...as, body: { description: 'x' } }),
      404,
      'not_found',
    );
    expectProblem(await t.api('DELETE', `/v1/webhooks/${hook.id}`, as), 404, 'not_found');
    expectProblem(
      await t.api('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { ...as, body: {} }),
      404,
      'not_found',
    );
    expectProblem(await t.api('GET', `/v1/webhooks/${hook.id}/deliveries`, as), 404, 'not_found');
    expectProblem(await t.api('GET', `/v1/webhook-deliveries/${d.id}`, as), 404, 'not_found');
    expectProblem(await t.api('POST', `/v1/webhook-deliveries/${d.id}/redeliver`, as), 404, 'not_found');
    const theirs = await t.api('GET', '/v1/webhooks', as);
    expect(theirs.body.data).toEqual([]);
    // Naming our team explicitly is refused too.
    const named = await t.api('POST', '/v1/webhooks', { ...as, body: { url: `${rx.url}/x`, team: teamId } });
    expect([403, 404]).toContain(named.status);
    // Their webhook does not receive our events.
    const r = await t.api('POST', '/v1/webhooks', { ...as, body: { url: `${rx.url}/theirs` } });
    expect(r.status, r.text).toBe(201);
    await emit(event('user.signed_in'));
    await drain();
    // Theirs hears only its own team's events (its own webhook.created, from the event log).
    const heard = at('/theirs').map((r) => JSON.parse(r.body).event as ActivityEvent);
    expect(heard.filter((e) => e.tenantId === teamId)).toEqual([]);
    expect(heard.every((e) => e.tenantId === other.teamId)).toBe(true);
    expect(at('/mine')).toHaveLength(2);
    expectProblem(await t.api('GET', '/v1/webhooks', { token: null }), 401, 'unauthorized');
  });

  it('only owners and admins manage webhooks: a member of the team is refused (403)', async () => {
    const hook = await create('/members');
    const member = await createUser(t, 'hook-member');
    const invited = await t.api('POST', `/v1/teams/${teamId}/invitations`, {
      body: { email: member.email, role: 'member' },
    });
    expect(invited.status, invited.text).toBeLessThan(300);
    const accepted = await t.api('POST', `/v1/account/invitations/${invited.body.data.id}/accept`, {
      token: member.token,
    });
    expect(accepted.status, accepted.text).toBeLessThan(300);
    const as = { token: member.token };
    expectProblem(await t.api('GET', `/v1/webhooks/${hook.id}`, as), 403, 'forbidden');
    expectProblem(
      await t.api('PATCH', `/v1/webhooks/${hook.id}`, { ...as, body: { description: 'x' } }),
      403,
      'forbidden',
    );
    expectProblem(
      await t.api('POST', '/v1/webhooks', { ...as, body: { url: `${rx.url}/m`, team: teamId } }),
      403,
      'forbidden',
    );
    expect((await t.api('GET', '/v1/webhooks', as)).body.data.map((w: any) => w.id)).not.toContain(hook.id);
  });

  it('patches description, url and events, and deletes (webhook.updated, webhook.deleted)', async () => {
    const hook = await create('/p1');
    const r = await t.api('PATCH', `/v1/webhooks/${hook.id}`, {
      body: { url: `${rx.url}/p2`, events: ['comment.*'], description: 'new' },
    });
    expect(r.body.data).toMatchObject({ url: `${rx.url}/p2`, events: ['comment.*'], description: 'new' });
    expect(
      recorded.find((e) => e.code === 'webhook.updated' && e.details.webhookId === hook.id)?.details.changed,
    ).toEqual(['url', 'events', 'description']);
    const off = await t.api('PATCH', `/v1/webhooks/${hook.id}`, { body: { status: 'disabled' } });
    expect(off.body.data).toMatchObject({ status: 'disabled', disabledReason: 'manual' });
    const del = await t.api('DELETE', `/v1/webhooks/${hook.id}`);
    expect(del.status).toBe(204);
    expectProblem(await t.api('GET', `/v1/webhooks/${hook.id}`), 404, 'not_found');
    expect(recorded.some((e) => e.code === 'webhook.deleted' && e.details.webhookId === hook.id)).toBe(true);
  });
});
