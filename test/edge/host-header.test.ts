import { afterAll, beforeAll, expect, it } from 'vitest';
import { exchange, get, header, type RawResponse } from '../helpers/raw-http.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

// RFC 9112 §3.2: a request with two Host fields, or (§3.2.2) an absolute-form target whose authority
// differs from Host, names its host ambiguously — the API, the edge and anything in front of them
// could each pick another one. HTTP clients never send two Hosts, so these tests use raw sockets.

const SITE = 'host-site.localhost';

function expectInvalidRequest(r: RawResponse) {
  expect(r.status).toBe(400);
  expect(header(r, 'content-type')).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(r.body);
  expect(body).toMatchObject({ status: 400, code: 'invalid_request' });
  expect(body.detail).toMatch(/host/i);
  expect(body.requestId).toMatch(/^req_/);
}

describeEachDb('one Host per request', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
    const s = await createSpace(t, undefined, { slug: 'host-site', access: 'public' });
    await publishViaVersions(t, s.id, { 'index.html': 'site home' });
    // Warm: host, version and answer are in memory, so the fast lane would take a plain GET.
    const warm = await exchange(t.port, get(SITE, '/') + get(SITE, '/', true));
    expect(warm.responses.map((r) => r.body)).toEqual(['site home', 'site home']);
  });
  afterAll(() => t.close());

  it('serves one Host as before, from the fast lane', async () => {
    const before = t.server.fastLane!.answered;
    const x = await exchange(t.port, get(SITE, '/', true));
    expect(x.responses[0]!.status).toBe(200);
    expect(t.server.fastLane!.answered).toBe(before + 1);
  });

  it.each([
    ['the same site twice', `Host: ${SITE}\r\nHost: ${SITE}`],
    ['site, then another host', `Host: ${SITE}\r\nHost: other.localhost`],
    ['site, then the API host', `Host: ${SITE}\r\nHOST: localhost`],
    ['the API host, then a site', `Host: localhost\r\nhost: ${SITE}`],
    ['the API host twice', 'Host: localhost\r\nHost: localhost'],
  ])('answers 400 to two Host headers: %s (fast lane and node:http)', async (_what, hosts) => {
    const before = t.server.fastLane!.answered;
    // First on a fresh connection (the lane's), then after a request node:http already owns.
    const fresh = await exchange(t.port, `GET / HTTP/1.1\r\n${hosts}\r\nConnection: close\r\n\r\n`);
    const owned = await exchange(
      t.port,
      `POST / HTTP/1.1\r\nHost: ${SITE}\r\nContent-Length: 0\r\n\r\n` +
        `GET /v1/account HTTP/1.1\r\n${hosts}\r\nConnection: close\r\n\r\n`,
    );
    expect(fresh.responses).toHaveLength(1);
    expectInvalidRequest(fresh.responses[0]!);
    expect(owned.responses).toHaveLength(2);
    expect(owned.responses[0]!.status).toBe(405);
    expectInvalidRequest(owned.responses[1]!);
    expect(fresh.wire + owned.wire).not.toContain('site home');
    expect(t.server.fastLane!.answered).toBe(before);
  });

  it('answers 400 when Host disagrees with an absolute-form target, and serves it when they agree', async () => {
    for (const [target, host] of [
      [`http://other.localhost/`, SITE],
      [`http://${SITE}/`, 'other.localhost'],
      [`http://localhost/v1/account`, SITE],
      [`http://user@${SITE}/`, SITE],
    ]) {
      const x = await exchange(
        t.port,
        `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      expect(x.responses, target).toHaveLength(1);
      expectInvalidRequest(x.responses[0]!);
    }
    const same = await exchange(
      t.port,
      `GET http://${SITE.toUpperCase()}:80/ HTTP/1.1\r\nHost: ${SITE}\r\nConnection: close\r\n\r\n`,
    );
    expect(same.responses[0]!.status).toBe(200);
    expect(same.responses[0]!.body).toBe('site home');
  });
});
