import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDns, type TestDns } from '../helpers/dns-server.ts';
import { exchange, header } from '../helpers/raw-http.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/** A verified custom domain serves its space's live channel like the managed host; redirects redirect. */
describeEachDb('serving custom domains', (db) => {
  let t: TestServer;
  let dns: TestDns;
  let spaceId: string;

  beforeAll(async () => {
    dns = await startDns();
    t = await startServer({ db, env: { SPACES_DNS_SERVERS: dns.address } });
    spaceId = (await createSpace(t, undefined, { slug: 'custom-site', access: 'public' })).id;
    await publishViaVersions(t, spaceId, { 'index.html': '<h1>v1</h1>', 'about/index.html': 'about' });
  });
  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  const get = async (host: string, path = '/') => {
    const ex = await exchange(t.port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    return ex.responses[0]!;
  };
  const verified = async (hostname: string, extra: Record<string, unknown> = {}) => {
    const d = (await t.api('POST', '/v1/domains', { body: { hostname, spaceId, ...extra } })).body.data;
    const txt = d.records.find((r: any) => r.type === 'TXT');
    dns.set(txt.name, 'TXT', [txt.value]);
    const v = await t.api('POST', `/v1/domains/${d.id}/verify`);
    expect(v.body.data.status).toBe('verified');
    return { ...d, txt };
  };

  it('serves the live version on a verified domain, follows promotes, and stops when unbound or lost', async () => {
    const pending = (await t.api('POST', '/v1/domains', { body: { hostname: 'www.example.test', spaceId } }))
      .body.data;
    // Bound but not verified: nothing to see.
    const before = await get('www.example.test');
    expect(before.status).toBe(404);
    expect(before.body).not.toContain('v1');

    const txt = pending.records.find((r: any) => r.type === 'TXT');
    dns.set(txt.name, 'TXT', [txt.value]);
    await t.api('POST', `/v1/domains/${pending.id}/verify`);
    // The space's liveUrl names its primary domain now.
    const liveUrl = async () =>
      (await t.api('GET', `/v1/spaces/${spaceId}`)).body.data.space.liveUrl as string;
    expect(await liveUrl()).toBe(`http://www.example.test:${t.port}`);
    const page = await get('www.example.test');
    expect(page.status).toBe(200);
    expect(page.body).toBe('<h1>v1</h1>');
    expect(header(page, 'x-robots-tag')).toBeUndefined();
    expect((await get('www.example.test', '/about/')).body).toBe('about');

    await publishViaVersions(t, spaceId, { 'index.html': '<h1>v2</h1>' });
    expect((await get('www.example.test')).body).toBe('<h1>v2</h1>');

    dns.clear(txt.name);
    expect((await t.api('POST', `/v1/domains/${pending.id}/verify`)).body.data.status).toBe('control_lost');
    expect((await get('www.example.test')).status).toBe(404);
    dns.set(txt.name, 'TXT', [txt.value]);
    await t.api('POST', `/v1/domains/${pending.id}/verify`);
    expect((await get('www.example.test')).status).toBe(200);

    await t.api('PATCH', `/v1/domains/${pending.id}`, { body: { spaceId: null } });
    expect(await liveUrl()).toBe(`http://custom-site.localhost:${t.port}`);
    const unbound = await get('www.example.test');
    expect(unbound.status).toBe(404);
    expect(unbound.body).not.toContain('v2');
  });

  it('a redirect domain answers its status to the target, keeping path and query', async () => {
    await verified('old.example.test', {
      role: 'redirect',
      redirect: { target: 'new.example.test', status: 301 },
    });
    const r = await get('old.example.test', '/a/b?c=1&d=%20');
    expect(r.status).toBe(301);
    expect(header(r, 'location')).toBe('http://new.example.test/a/b?c=1&d=%20');
  });

  it('a wildcard domain serves any one label under its parent; an exact domain wins; unbinding stops it', async () => {
    const team = (await t.api('GET', '/v1/teams')).body.data[0].id;
    await t.api('PATCH', `/v1/teams/${team}/domain-settings`, { body: { wildcardEnabled: true } });
    // Asked before the wildcard exists: the edge must not remember "nothing here".
    expect((await get('early.wild.test')).status).toBe(404);
    const wild = await verified('*.wild.test');
    expect(wild.txt.name).toBe('_spaces-challenge.wild.test');
    for (const host of ['early.wild.test', 'anything.wild.test', 'xn--bcher-kva.wild.test']) {
      const r = await get(host);
      // The live version (the first test promoted v2).
      expect([host, r.status, r.body]).toEqual([host, 200, '<h1>v2</h1>']);
    }
    // Only one label: neither the parent nor deeper names.
    expect((await get('wild.test')).status).toBe(404);
    expect((await get('a.b.wild.test')).status).toBe(404);
    // The space's liveUrl never names a wildcard.
    expect((await t.api('GET', `/v1/spaces/${spaceId}`)).body.data.space.liveUrl).not.toContain('wild.test');

    // An exact domain of the same parent wins over the wildcard (here: a redirect).
    await verified('shop.wild.test', {
      role: 'redirect',
      redirect: { target: 'store.example.test', status: 302 },
    });
    const shop = await get('shop.wild.test', '/cart?x=1');
    expect([shop.status, header(shop, 'location')]).toEqual([302, 'http://store.example.test/cart?x=1']);
    expect((await get('other.wild.test')).status).toBe(200);

    await t.api('PATCH', `/v1/domains/${wild.id}`, { body: { spaceId: null } });
    const gone = await get('anything.wild.test');
    expect(gone.status).toBe(404);
    expect(gone.body).not.toContain('v2');
  });

  it('a host no domain names gets the unknown-host page, the same as before domains existed', async () => {
    const r = await get('nobody.example.test');
    expect(r.status).toBe(404);
    expect(r.body).not.toContain('custom-site');
  });
});
