import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * A private space with grants, share links and a password elsewhere is, to a visitor holding
 * nothing, the same as a hostname with no space: same status, same body (the hostname blanked; the
 * labels have the same length), and the same timing within noise over 1,000 requests each
 * (interleaved; medians printed).
 */
let t: TestServer;
let priv: string;
let unknown: string;
let spaceId: string;
let ownerToken: string;
let linkUrl: string;

beforeAll(async () => {
  t = await startServer();
  const owner = await createUser(t, 'hider');
  const s = await createSpace(t, owner.token, { access: 'private', slug: 'hidden-one' });
  await publishViaVersions(t, s.id, { 'index.html': 'secret', 'a/b.html': 'x' }, { token: owner.token });
  const api = (path: string, body: unknown) =>
    t.api('POST', `/v1/spaces/${s.id}${path}`, { token: owner.token, body });
  await api('/grants', { audience: { type: 'team' }, paths: ['/a/**'] });
  linkUrl = (await api('/share-links', { paths: ['/a/**'] })).body.data.url;
  spaceId = s.id;
  ownerToken = owner.token;
  await api('/password-credentials', { password: 'long enough', paths: ['/p/**'] });
  priv = 'hidden-one.localhost';
  unknown = 'hidden-two.localhost';
});
afterAll(() => t?.close());

async function hit(host: string, path: string) {
  const t0 = process.hrtime.bigint();
  const r = await request(`${t.url}${path}`, { headers: { host } });
  const body = await r.body.text();
  const ns = Number(process.hrtime.bigint() - t0);
  const headers = { ...r.headers } as Record<string, unknown>;
  delete headers.date;
  delete headers['keep-alive'];
  const scrub = (v: string) => v.split(host).join('<host>').split(encodeURIComponent(host)).join('<host>');
  return { status: r.statusCode, body: scrub(body), headers: JSON.parse(scrub(JSON.stringify(headers))), ns };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

it('answers a visitor of a private space exactly as for no space, timing included', async () => {
  for (const path of ['/', '/a/b', '/a/b?__=sl_forged', '/__service/password', '/nope']) {
    const a = await hit(priv, path);
    const b = await hit(unknown, path);
    expect({ ...a, ns: 0 }, path).toEqual({ ...b, ns: 0 });
  }
  const times: Record<string, number[]> = { private: [], unknown: [] };
  // Interleaved, and which goes first alternates, so neither pays for always following the other.
  for (let i = 0; i < 1000; i++) {
    if (i % 2 === 0) {
      times.private!.push((await hit(priv, '/a/b')).ns);
      times.unknown!.push((await hit(unknown, '/a/b')).ns);
    } else {
      times.unknown!.push((await hit(unknown, '/a/b')).ns);
      times.private!.push((await hit(priv, '/a/b')).ns);
    }
  }
  const mp = median(times.private!) / 1e3;
  const mu = median(times.unknown!) / 1e3;
  console.log(
    `unseen timing over 1,000 requests each: private median ${mp.toFixed(0)} µs, unknown median ${mu.toFixed(0)} µs, ratio ${(mp / mu).toFixed(2)}`,
  );
  // Within noise on a loaded machine: neither is systematically slower by more than a third.
  expect(mp / mu).toBeLessThan(1.35);
  expect(mu / mp).toBeLessThan(1.35);
}, 120_000);

it('keeps unseen answers out of the space’s access log; a visitor let in is logged', async () => {
  const log = t.server.services.accessLog!;
  await log.flush();
  const lines = async () =>
    (await t.api('GET', `/v1/spaces/${spaceId}/logs/access`, { token: ownerToken })).body.data as {
      path: string;
      status: number;
    }[];
  const before = (await lines()).length;
  await hit(priv, '/a/b?unseen-probe=1');
  await hit(priv, '/nope?unseen-probe=2');
  await log.flush();
  const after = await lines();
  expect(after.filter((l) => l.path.includes('unseen-probe'))).toEqual([]);
  expect(after.length).toBe(before);
  // The same path through the share link: redirected in place, then served and recorded.
  const u = new URL(linkUrl);
  const first = await request(`${t.url}/a/b${u.search}`, { headers: { host: priv } });
  await first.body.dump();
  const cookie = String([first.headers['set-cookie']].flat()[0]).split(';')[0]!;
  const page = await request(`${t.url}/a/b?seen-probe=1`, { headers: { host: priv, cookie } });
  expect(page.statusCode).toBe(200);
  await page.body.dump();
  await log.flush();
  expect((await lines()).some((l) => l.path === '/a/b?seen-probe=1' && l.status === 200)).toBe(true);
});
