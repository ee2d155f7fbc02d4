import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';
import { type Received, type Receiver, startReceiver } from './receiver.ts';

// End to end, nothing injected: a real server with its job worker, a real HTTP receiver on 127.0.0.1
// (allowed through SPACES_WEBHOOK_ALLOW), a webhook created over the API, a version published over
// the API. The receiver gets `version.ready` from the event log through the durable queue, with the
// body and headers of §14 and a signature checked here with Node's crypto (not the service's helper).

/** Verifies a `Service-Signature` header the way a receiver following the docs would. */
function verify(r: Received, secret: string, nowSeconds: number): boolean {
  const header = String(r.headers['service-signature']);
  const parts = header.split(',').map((p) => p.trim());
  const t = parts.find((p) => p.startsWith('t='))?.slice(2);
  if (!t || !/^\d+$/.test(t)) return false;
  // Stale timestamps are refused (~300 s).
  if (Math.abs(nowSeconds - Number(t)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${r.body}`).digest();
  return parts
    .filter((p) => p.startsWith('v1='))
    .some((p) => {
      const got = Buffer.from(p.slice(3), 'hex');
      return got.length === expected.length && timingSafeEqual(got, expected);
    });
}

describeEachDb('publish → webhook version.ready', (db) => {
  let t: TestServer;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await startReceiver();
    t = await startServer({
      db,
      env: { SPACES_WEBHOOK_ALLOW: 'http,127.0.0.1', SPACES_JOB_POLL_MS: '50' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('delivers version.ready for a published version, signed, with the §14 body and headers', async () => {
    const created = await t.api('POST', '/v1/webhooks', {
      body: { url: `${rx.url}/hooks/spaces`, events: ['version.ready'], description: 'e2e' },
    });
    expect(created.status, created.text).toBe(201);
    const secret = created.body.data.secret as string;
    expect(secret).toMatch(/^whsec_/);

    const space = await createSpace(t, undefined, { slug: 'hooked-site', access: 'public' });
    const version = await publishViaVersions(t, space.id, { 'index.html': '<h1>hooked</h1>' });
    const versionId: string = version.created.version.id;
    expect(versionId).toMatch(/^ver_/);

    const deadline = Date.now() + 20_000;
    while (rx.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(rx.received.length, 'no delivery reached the receiver').toBeGreaterThanOrEqual(1);
    // Only version.ready passes the filter (space.created, version.created and channel.promoted do not).
    await new Promise((r) => setTimeout(r, 500));
    const got = rx.received.filter((r) => r.path === '/hooks/spaces');
    expect(got).toHaveLength(1);
    const r = got[0]!;

    expect(r.method).toBe('POST');
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(verify(r, secret, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verify(r, `${secret}x`, Math.floor(Date.now() / 1000))).toBe(false);
    // A body changed by one byte no longer verifies.
    expect(
      verify({ ...r, body: r.body.replace('version.ready', 'version.reaDy') }, secret, Date.now() / 1000),
    ).toBe(false);
    expect(String(r.headers['service-signature'])).toMatch(/^t=\d+, v1=[0-9a-f]{64}$/);

    const body = JSON.parse(r.body);
    expect(Object.keys(body).sort()).toEqual(['event', 'version']);
    expect(body.version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const e = body.event;
    expect(Object.keys(e).sort()).toEqual(
      ['actor', 'code', 'createdAt', 'details', 'id', 'message', 'sequence', 'spaceId', 'tenantId'].sort(),
    );
    expect(e).toMatchObject({ code: 'version.ready', spaceId: space.id });
    expect(e.id).toMatch(/^evt_/);
    expect(Number.isInteger(e.sequence)).toBe(true);
    expect(e.actor).toMatchObject({ type: expect.any(String) });
    expect(JSON.stringify(e.details)).toContain(versionId);
    expect(r.headers['service-event-id']).toBe(e.id);
    expect(r.headers['service-delivery-id']).toMatch(/^whd_/);

    // The same event is in the space's activity (one event log feeds both), and the delivery is recorded.
    const activity = await t.api('GET', `/v1/spaces/${space.id}/activity?code=version.ready`);
    expect(activity.body.data.map((x: { id: string }) => x.id)).toEqual([e.id]);
    const deliveries = await t.api('GET', `/v1/webhooks/${created.body.data.id}/deliveries`);
    expect(deliveries.body.data[0]).toMatchObject({
      id: r.headers['service-delivery-id'],
      eventId: e.id,
      eventCode: 'version.ready',
      state: 'succeeded',
      attempts: 1,
      lastStatusCode: 200,
    });
  }, 40_000);
});
