import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * Security issue #17, item 4: until a visitor is signed in to it, a team/private space is
 * indistinguishable from a hostname with no space — on the site (every path, method and service
 * path, on managed, preview-channel and version hostnames, old names, suspended and deleted spaces)
 * and on the API's access pages. Hostnames are compared with labels of the same length, so even
 * `Content-Length` must match; only the hostname itself is blanked before comparing.
 */
interface Snapshot {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const VARYING = new Set(['date', 'x-request-id', 'keep-alive']);

async function fetchRaw(
  url: string,
  opts: { method?: string; host?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Snapshot> {
  const res = await request(url, {
    method: (opts.method ?? 'GET') as 'GET',
    headers: { ...opts.headers, ...(opts.host ? { host: opts.host } : {}) },
    body: opts.body,
  });
  const body = await res.body.text();
  return { status: res.statusCode, headers: res.headers as Snapshot['headers'], body };
}

/** The response with every spelling of `hostname` blanked. */
function blank(s: Snapshot, hostname: string): Snapshot {
  const spellings = [hostname, encodeURIComponent(hostname)];
  const scrub = (v: string) => spellings.reduce((acc, x) => acc.split(x).join('<host>'), v);
  const headers: Snapshot['headers'] = {};
  for (const [k, v] of Object.entries(s.headers)) {
    if (VARYING.has(k)) continue;
    headers[k] = Array.isArray(v) ? v.map(scrub) : v === undefined ? v : scrub(v);
  }
  if (s.body.includes('req_')) throw new Error('a request id in the body: compare it separately');
  return { status: s.status, headers, body: scrub(s.body) };
}

describeEachDb('private spaces look like no space at all', (db) => {
  let t: TestServer;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let outsider: Awaited<ReturnType<typeof createUser>>;
  let versionId: string;
  let suspendedId: string;
  beforeAll(async () => {
    t = await startServer({ db });
    owner = await createUser(t, 'owner');
    outsider = await createUser(t, 'outsider');
    const priv = await createSpace(t, owner.token, {
      slug: 'priv',
      title: 'Secret Plans',
      access: 'private',
    });
    const v1 = (
      await publishViaVersions(t, priv.id, { 'index.html': 'private content' }, { token: owner.token })
    ).finalized;
    versionId = v1.version.id;
    const promoted = await t.api('POST', `/v1/spaces/${priv.id}/versions/${versionId}/promote`, {
      token: owner.token,
      body: { channel: 'beta' },
    });
    expect(promoted.status).toBe(200);
    const crew = await createSpace(t, owner.token, { slug: 'crew', title: 'Crew Room', access: 'team' });
    await publishViaVersions(t, crew.id, { 'index.html': 'team content' }, { token: owner.token });
    const olds = await createSpace(t, owner.token, { slug: 'olds', title: 'Renamed', access: 'private' });
    await publishViaVersions(t, olds.id, { 'index.html': 'renamed private' }, { token: owner.token });
    const renamed = await t.api('POST', `/v1/spaces/${olds.id}/rename`, {
      token: owner.token,
      body: { slug: 'news' },
    });
    expect(renamed.status).toBeLessThan(300);
    const susp = await createSpace(t, owner.token, { slug: 'susp', title: 'Suspended', access: 'private' });
    await publishViaVersions(t, susp.id, { 'index.html': 'suspended' }, { token: owner.token });
    suspendedId = susp.id;
    await t.server.services.database.db
      .updateTable('spaces')
      .set({ disabled_reason: 'site_suspended', disabled_at: new Date().toISOString() })
      .where('id', '=', susp.id)
      .execute();
    t.server.services.events.spaceChanged(susp.id);
    const gone = await createSpace(t, owner.token, { slug: 'gone', title: 'Deleted', access: 'private' });
    await publishViaVersions(t, gone.id, { 'index.html': 'deleted' }, { token: owner.token });
    expect((await t.api('DELETE', `/v1/spaces/${gone.id}`, { token: owner.token })).status).toBeLessThan(300);
  });
  afterAll(() => t.close());

  /** [what, hostname of a hidden space, the same hostname naming no space] */
  const hosts = (): Array<[string, string, string]> => [
    ['private, managed', 'priv.localhost', 'nope.localhost'],
    ['private, preview channel', 'beta--priv.localhost', 'beta--nope.localhost'],
    ['private, version', `${versionId}--priv.localhost`, `${versionId}--nope.localhost`],
    [
      'private, version (DNS spelling)',
      `${versionId.replace('_', '-')}--priv.localhost`,
      `${versionId.replace('_', '-')}--nope.localhost`,
    ],
    ['private, unknown channel', 'zeta--priv.localhost', 'zeta--nope.localhost'],
    ['team', 'crew.localhost', 'nope.localhost'],
    ['private, previous name', 'olds.localhost', 'nope.localhost'],
    ['private, suspended', 'susp.localhost', 'nope.localhost'],
    ['private, deleted', 'gone.localhost', 'nope.localhost'],
  ];

  const requests: Array<{ method: string; path: string; headers?: Record<string, string>; body?: string }> = [
    { method: 'GET', path: '/' },
    { method: 'GET', path: '/', headers: { accept: 'application/json' } },
    { method: 'GET', path: '/docs/page?x=1', headers: { accept: 'text/plain' } },
    { method: 'HEAD', path: '/' },
    { method: 'POST', path: '/form', headers: { 'content-type': 'text/plain' }, body: 'x' },
    { method: 'GET', path: '/__service/collab.css' },
    { method: 'GET', path: '/__/sfk_not_a_key' },
    { method: 'GET', path: '/__service/access?token=forged&return=/' },
    {
      method: 'POST',
      path: '/__service/challenge',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=x&solution=1',
    },
    { method: 'GET', path: '/__service/nothing' },
    { method: 'GET', path: '/%2e%2e/x' },
  ];

  it('answers a visitor exactly as for a hostname with no space, whatever is asked', async () => {
    for (const [what, hidden, unknown] of hosts()) {
      for (const r of requests) {
        const opts = { method: r.method, headers: r.headers, body: r.body };
        const a = await fetchRaw(`${t.url}${r.path}`, { ...opts, host: hidden });
        const b = await fetchRaw(`${t.url}${r.path}`, { ...opts, host: unknown });
        expect(blank(a, hidden), `${what}: ${r.method} ${r.path}`).toEqual(blank(b, unknown));
        expect(a.status, `${what}: ${r.method} ${r.path}`).toBe(302);
        // And it says nothing about the space.
        expect(a.body + JSON.stringify(a.headers), what).not.toMatch(
          /Secret Plans|Crew Room|news\.localhost|suspended|private content/i,
        );
      }
    }
  });

  it('sends both to the same sign-in page of the API, which names nothing', async () => {
    const cookie = { cookie: 'spaces_csrf=fixed-csrf-binding-value-0123' };
    for (const [what, hidden, unknown] of hosts()) {
      const site = await fetchRaw(`${t.url}/some/page`, { host: hidden });
      expect(site.status, what).toBe(302);
      const acquire = new URL(String(site.headers.location));
      expect(acquire.pathname).toBe('/v1/access/acquire');
      const pageFor = (host: string) => {
        const u = new URL(acquire);
        u.searchParams.set('host', host);
        return fetchRaw(`${t.url}${u.pathname}${u.search}`, { headers: cookie });
      };
      const a = await pageFor(hidden);
      const b = await pageFor(unknown);
      expect(a.status, what).toBe(200);
      expect(a.body).toContain('Sign in');
      expect(a.body).not.toMatch(/Secret Plans|Crew Room|Renamed|Suspended|Deleted/);
      expect(blank(a, hidden), what).toEqual(blank(b, unknown));
    }
  });

  it('after sign-in, tells someone the space is not for the same thing as no space', async () => {
    const session = (token: string) => ({
      cookie: `spaces_session=${token}; spaces_csrf=fixed-csrf-binding-value-0123`,
    });
    const acquire = (host: string, token: string) =>
      fetchRaw(`${t.url}/v1/access/acquire?host=${host}&return=/`, { headers: session(token) });
    for (const [what, hidden, unknown] of hosts()) {
      const a = await acquire(hidden, outsider.token);
      const b = await acquire(unknown, outsider.token);
      expect(a.status, what).toBe(404);
      expect(a.body).not.toMatch(/Secret Plans|Crew Room|private|team/);
      expect(blank(a, hidden), what).toEqual(blank(b, unknown));
    }
  });

  it('lets a signed-in member in through the hand-off, old names included', async () => {
    const session = { cookie: `spaces_session=${owner.token}` };
    const enter = async (host: string, expectedHost = host) => {
      const acquire = await fetchRaw(`${t.url}/v1/access/acquire?host=${host}&return=/`, {
        headers: session,
      });
      expect(acquire.status, host).toBe(302);
      const handoff = new URL(String(acquire.headers.location));
      expect(handoff.hostname).toBe(expectedHost);
      const landed = await fetchRaw(`${t.url}${handoff.pathname}${handoff.search}`, { host: expectedHost });
      expect(landed.status).toBe(303);
      const cookie = String(landed.headers['set-cookie']).split(';')[0]!;
      return (path = '/') => fetchRaw(`${t.url}${path}`, { host: expectedHost, headers: { cookie } });
    };
    expect((await (await enter('priv.localhost'))()).body).toContain('private content');
    expect((await (await enter('beta--priv.localhost'))()).body).toContain('private content');
    expect((await (await enter(`${versionId}--priv.localhost`))()).body).toContain('private content');
    expect((await (await enter('crew.localhost'))()).body).toContain('team content');
    expect((await (await enter('olds.localhost', 'news.localhost'))()).body).toContain('renamed private');
    // Signed in to it, a suspended space shows its notice; the service paths answer again.
    const suspended = await enter('susp.localhost');
    const notice = await suspended();
    expect(notice.status).toBe(403);
    expect(notice.body).toContain('suspended');
    expect(suspendedId).toMatch(/^spc_/);
    const inside = await enter('priv.localhost');
    expect((await inside('/__service/collab.css')).status).toBe(200);
    // Deleted stays unknown, also to its owner.
    const gone = await fetchRaw(`${t.url}/v1/access/acquire?host=gone.localhost&return=/`, {
      headers: session,
    });
    expect(gone.status).toBe(404);
  });
});
