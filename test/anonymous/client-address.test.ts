import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * One client-address rule for the API (anonymous quotas, rate limits) and the edge (firewall): the
 * socket peer, or — only from a trusted proxy — the rightmost `X-Forwarded-For` hop that is not a
 * trusted proxy. The test server's peer is always 127.0.0.1.
 */
async function publishAs(t: TestServer, xff?: string) {
  const fd = new FormData();
  fd.append('files', new Blob(['<h1>hi</h1>']), 'index.html');
  const res = await request(`${t.url}/v1/publish`, {
    method: 'POST',
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
    body: fd,
  });
  const body = (await res.body.json()) as { code?: string };
  return { status: res.statusCode, code: body.code };
}

/** A public site blocking 203.0.113.5 only: 403 at the edge means "the edge took the client to be 203.0.113.5". */
async function blockingSite(t: TestServer, slug: string): Promise<(xff?: string) => Promise<number>> {
  const s = await createSpace(t, undefined, {
    slug,
    access: 'public',
    config: { firewall: [{ action: 'block', match: { ip: '203.0.113.5' } }] },
  });
  await publishViaVersions(t, s.id, { 'index.html': 'ok' });
  return async (xff) =>
    (
      await t.api('GET', '/', {
        token: null,
        host: `${slug}.localhost`,
        headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
      })
    ).status;
}

describe('client address from an untrusted peer', () => {
  let t: TestServer;
  beforeAll(async () => {
    // A proxy is configured, but the test client (127.0.0.1) is not it.
    t = await startServer({
      env: { SPACES_TRUSTED_PROXIES: '10.0.0.0/8', SPACES_ANON_PUBLISHES_PER_HOUR: '1' },
    });
  });
  afterAll(() => t.close());

  it('ignores a forged X-Forwarded-For: every request shares the socket address’s quota and firewall answer', async () => {
    expect((await publishAs(t, '198.51.100.1')).status).toBe(201);
    const second = await publishAs(t, '198.51.100.2');
    expect(second.status).toBe(429);
    expect(second.code).toBe('anonymous_publish_rate_limited');
    expect((await publishAs(t)).status).toBe(429);
    const site = await blockingSite(t, 'untrusted-fw');
    expect(await site('203.0.113.5')).toBe(200);
    expect(await site('203.0.113.5, 10.0.0.1')).toBe(200);
  });
});

describe('client address through trusted proxies', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({
      env: {
        SPACES_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8',
        SPACES_ANON_PUBLISHES_PER_HOUR: '1',
        SPACES_ANON_SPACES_PER_IP: '1',
      },
    });
  });
  afterAll(() => t.close());

  it('gives two forwarded clients separate anonymous rate-limit buckets', async () => {
    expect((await publishAs(t, '198.51.100.1')).status).toBe(201);
    const again = await publishAs(t, '198.51.100.1');
    expect(again.status).toBe(429);
    expect(again.code).toBe('anonymous_publish_rate_limited');
    expect((await publishAs(t, '198.51.100.2')).status).toBe(201);
  });

  it('takes the rightmost hop that is not a trusted proxy; what the client wrote further left is ignored', async () => {
    // Client 203.0.113.5 through two of our proxies (10.1.2.3, then 127.0.0.1).
    expect((await publishAs(t, '203.0.113.5, 10.1.2.3')).status).toBe(201);
    // The same client claiming to be someone else: the left entry is its own, the rest is ours.
    const forged = await publishAs(t, '192.0.2.77, 203.0.113.5, 10.9.9.9');
    expect(forged.status).toBe(429);
    expect((await publishAs(t, '192.0.2.77')).status).toBe(201);
    // Every hop trusted: the leftmost is the client.
    expect((await publishAs(t, '10.5.5.5, 10.1.2.3')).status).toBe(201);
    expect((await publishAs(t, '10.5.5.5')).status).toBe(429);

    const site = await blockingSite(t, 'trusted-fw');
    expect(await site()).toBe(200);
    expect(await site('203.0.113.5')).toBe(403);
    expect(await site('203.0.113.5, 10.1.2.3')).toBe(403);
    expect(await site('192.0.2.77, 203.0.113.5, 10.9.9.9')).toBe(403);
    expect(await site('203.0.113.5, 198.51.100.1, 10.1.2.3')).toBe(200);
  });

  it('counts live unclaimed spaces per forwarded client', async () => {
    // Rate limits are per hour and spent above; a fresh server keeps this test about the space quota.
    const u = await startServer({
      env: {
        SPACES_TRUSTED_PROXIES: '127.0.0.1',
        SPACES_ANON_PUBLISHES_PER_HOUR: '100',
        SPACES_ANON_SPACES_PER_IP: '1',
      },
    });
    try {
      expect((await publishAs(u, '198.51.100.7')).status).toBe(201);
      const full = await publishAs(u, '198.51.100.7');
      expect(full.status).toBe(429);
      expect(full.code).toBe('anonymous_space_limit_reached');
      expect((await publishAs(u, '198.51.100.8')).status).toBe(201);
    } finally {
      await u.close();
    }
  });
});
