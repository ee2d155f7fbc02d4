import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDns, type TestDns } from '../helpers/dns-server.ts';
import {
  createUser,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';

/**
 * Custom domains (#21, first part): the inventory, binding to a space, and DNS verification against
 * a real DNS server the test runs (SPACES_DNS_SERVERS), on both databases.
 */
describeEachDb('custom domains', (db) => {
  let t: TestServer;
  let dns: TestDns;
  let space: { id: string; slug: string; publicName: string };

  beforeAll(async () => {
    dns = await startDns();
    t = await startServer({
      db,
      env: { SPACES_DNS_SERVERS: dns.address, SPACES_BASE_DOMAIN: 'spaces.example.test' },
    });
    const s = await t.api('POST', '/v1/spaces', { body: {} });
    expect(s.status, s.text).toBe(201);
    space = {
      id: s.body.data.space.id,
      slug: s.body.data.space.slug,
      publicName: new URL(s.body.data.space.liveUrl).hostname.split('.')[0]!,
    };
  });
  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  const add = (hostname: string, extra: Record<string, unknown> = {}, token?: string) =>
    t.api('POST', '/v1/domains', { body: { hostname, ...extra }, ...(token ? { token } : {}) });
  const txtOf = (d: any) => d.records.find((r: any) => r.purpose === 'ownership');
  const routingOf = (d: any) => d.records.find((r: any) => r.purpose === 'routing');

  it('adds a domain bound to a space and answers the exact records to create', async () => {
    const r = await add('WWW.Example.test', { spaceId: space.id });
    expect(r.status, r.text).toBe(201);
    const d = r.body.data;
    expect(d).toMatchObject({
      hostname: 'www.example.test',
      asciiHostname: 'www.example.test',
      apex: false,
      wildcard: false,
      spaceId: space.id,
      role: 'standard',
      redirect: null,
      status: 'pending',
      verified: false,
    });
    expect(d.id).toMatch(/^dom_/);
    const txt = txtOf(d);
    expect(txt).toMatchObject({ type: 'TXT', name: '_spaces-challenge.www.example.test' });
    expect(txt.value).toMatch(/^spaces-verify=[A-Za-z0-9_-]{20,}$/);
    expect(routingOf(d)).toMatchObject({
      type: 'CNAME',
      name: 'www.example.test',
      value: `${space.publicName}.spaces.example.test`,
    });
    const listed = await t.api('GET', `/v1/spaces/${space.id}/domains`);
    expect(listed.body.data.map((x: any) => x.id)).toEqual([d.id]);
  });

  it('verifies once DNS holds the records, and loses control when the TXT record goes', async () => {
    const d = (await add('shop.example.test', { spaceId: space.id })).body.data;
    const before = await t.api('POST', `/v1/domains/${d.id}/verify`);
    expect(before.status, before.text).toBe(200);
    expect(before.body.data.status).toBe('pending');
    expect(txtOf(before.body.data).state).toBe('missing');

    dns.set('_spaces-challenge.shop.example.test', 'TXT', ['unrelated=1', txtOf(d).value]);
    dns.set('shop.example.test', 'CNAME', [`${space.publicName}.spaces.example.test`]);
    const after = await t.api('POST', `/v1/domains/${d.id}/verify`);
    expect(after.body.data).toMatchObject({ status: 'verified', verified: true });
    expect(after.body.data.verifiedAt).toEqual(expect.any(String));
    expect(after.body.data.records.map((r: any) => r.state)).toEqual(['ok', 'ok']);
    expect(txtOf(after.body.data).seen).toContain(txtOf(d).value);

    dns.set('shop.example.test', 'CNAME', ['elsewhere.example.net']);
    const moved = await t.api('POST', `/v1/domains/${d.id}/verify`);
    expect(moved.body.data.status).toBe('verified');
    expect(routingOf(moved.body.data)).toMatchObject({ state: 'mismatch', seen: ['elsewhere.example.net'] });

    dns.clear('_spaces-challenge.shop.example.test');
    const lost = await t.api('POST', `/v1/domains/${d.id}/verify`);
    expect(lost.body.data).toMatchObject({ status: 'control_lost', verified: false, verifiedAt: null });
  });

  it('diagnostics say what a bound domain waits for; ssl/retry needs a verified domain', async () => {
    const d = (await add('diag.example.test', { spaceId: space.id })).body.data;
    expect(d.certificate).toBeNull();
    const url = `/v1/spaces/${space.id}/domains/${d.id}`;
    const pending = await t.api('GET', `${url}/diagnostics`);
    expect(pending.status, pending.text).toBe(200);
    expect(pending.body.data.serving).toBe('waiting_for_dns');
    expect(pending.body.data.problems[0]).toContain(
      `_spaces-challenge.diag.example.test with ${txtOf(d).value}`,
    );
    expectProblem(await t.api('POST', `${url}/ssl/retry`), 409, 'verification_required');

    dns.set('_spaces-challenge.diag.example.test', 'TXT', [txtOf(d).value]);
    dns.set('diag.example.test', 'CNAME', [`${space.publicName}.spaces.example.test`]);
    await t.api('POST', `/v1/domains/${d.id}/verify`);
    const ready = await t.api('GET', `${url}/diagnostics`);
    // This server has no HTTPS listener: verified and routed is as far as it goes.
    expect(ready.body.data).toMatchObject({ serving: 'no_https', problems: [] });
    expect((await t.api('POST', `${url}/ssl/retry`)).status).toBe(202);
    // Not bound to another space of ours; not visible through it.
    const other = (await t.api('POST', '/v1/spaces', { body: {} })).body.data.space.id;
    expectProblem(await t.api('GET', `/v1/spaces/${other}/domains/${d.id}/diagnostics`), 404, 'not_found');
  });

  it('the check job verifies a pending domain on its own', async () => {
    const d = (await add('job.example.test', { spaceId: space.id })).body.data;
    dns.set('_spaces-challenge.job.example.test', 'TXT', [txtOf(d).value]);
    await t.server.services.domains.checkDue(new Date(Date.now() + 60_000));
    const got = await t.api('GET', `/v1/domains/${d.id}`);
    expect(got.body.data.status).toBe('verified');
    expect(Date.parse(got.body.data.nextCheckAt)).toBeGreaterThan(Date.now() + 3600_000);
  });

  it('normalises IDNs: stored as A-labels, shown as U-labels; apex domains need A records', async () => {
    const r = await add('Bücher.example', { spaceId: space.id });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data).toMatchObject({
      hostname: 'bücher.example',
      asciiHostname: 'xn--bcher-kva.example',
      apex: true,
    });
    expect(routingOf(r.body.data)).toMatchObject({ type: 'A', value: null });
    expect(routingOf(r.body.data).note).toMatch(/SPACES_DOMAIN_ADDRESSES/);
    expectProblem(await add('xn--bcher-kva.example'), 409, 'domain_already_exists');
  });

  it('refuses every hostname a custom domain cannot be, pointing at the field', async () => {
    const cases: Array<[string, string]> = [
      ['https://www.example.com/', 'invalid_domain_name'],
      ['www.example.com.', 'invalid_domain_name'],
      ['127.0.0.1', 'invalid_domain_name'],
      ['[::1]', 'invalid_domain_name'],
      ['www.example.com:8443', 'invalid_domain_name'],
      ['localhost', 'invalid_domain_name'],
      ['printer.local', 'invalid_domain_name'],
      ['co.uk', 'invalid_domain_name'],
      ['github.io', 'invalid_domain_name'],
      ['com', 'invalid_domain_name'],
      ['exa mple.com', 'invalid_domain_name'],
      ['-bad.example.com', 'invalid_domain_name'],
      [`${'a'.repeat(64)}.example.com`, 'invalid_domain_name'],
      ['   ', 'invalid_domain_name'],
      ['site.localhost', 'invalid_domain_name'],
      ['a.*.example.com', 'domain_wildcard_label'],
      ['*.example.com', 'domain_wildcard_not_enabled'],
      ['*example.com', 'domain_wildcard_label'],
      ['www.*', 'domain_wildcard_label'],
    ];
    for (const [hostname, code] of cases) {
      const p = expectProblem(await add(hostname), 400, code);
      expect(p.pointer, hostname).toBe('/hostname');
    }
    // Missing or mistyped fields are schema errors with their pointer.
    expect(
      expectProblem(await t.api('POST', '/v1/domains', { body: {} }), 400, 'validation_error').pointer,
    ).toBe('/hostname');
    const extra = await t.api('POST', '/v1/domains', { body: { hostname: 'x.example.com', color: 'red' } });
    expectProblem(extra, 400, 'validation_error');
  });

  it('refuses hosts under the base domain', async () => {
    for (const hostname of ['spaces.example.test', 'blog.spaces.example.test', 'x.y.SPACES.example.test']) {
      expect(expectProblem(await add(hostname), 400, 'domain_reserved_suffix').pointer).toBe('/hostname');
    }
  });

  it('redirect domains: a target and one of 301/302/307/308', async () => {
    const r = await add('old.example.test', {
      spaceId: space.id,
      role: 'redirect',
      redirect: { target: 'www.example.test', status: 301 },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data).toMatchObject({
      role: 'redirect',
      redirect: { target: 'www.example.test', status: 301 },
    });
    const noTarget = await add('old2.example.test', { role: 'redirect' });
    expect(expectProblem(noTarget, 400, 'domain_redirect_invalid').pointer).toBe('/redirect');
    expectProblem(
      await add('old3.example.test', {
        role: 'redirect',
        redirect: { target: 'x.example.com', status: 303 },
      }),
      400,
      'validation_error',
    );
    const badTarget = await add('old4.example.test', { role: 'redirect', redirect: { target: 'http://x/' } });
    expect(expectProblem(badTarget, 400, 'invalid_domain_name').pointer).toBe('/redirect/target');
    const standard = await t.api('PATCH', `/v1/domains/${r.body.data.id}`, {
      body: { role: 'standard', redirect: null },
    });
    expect(standard.body.data).toMatchObject({ role: 'standard', redirect: null });
  });

  it('a bound domain cannot be deleted; unbound, it can', async () => {
    const d = (await add('bound.example.test', { spaceId: space.id })).body.data;
    expectProblem(await t.api('DELETE', `/v1/domains/${d.id}`), 409, 'domain_bound');
    const unbound = await t.api('PATCH', `/v1/domains/${d.id}`, { body: { spaceId: null } });
    expect(unbound.body.data.spaceId).toBeNull();
    expect(routingOf(unbound.body.data)).toMatchObject({ type: 'CNAME', value: null });
    expect((await t.api('DELETE', `/v1/domains/${d.id}`)).status).toBe(204);
    expectProblem(await t.api('GET', `/v1/domains/${d.id}`), 404, 'not_found');
  });

  it('another team cannot see, change, verify, delete or bind a domain; it must prove control to take it over', async () => {
    const other = await createUser(t, 'domain-rival');
    const mine = (await add('contested.example.test', { spaceId: space.id })).body.data;
    for (const [method, path, body] of [
      ['GET', `/v1/domains/${mine.id}`, undefined],
      ['PATCH', `/v1/domains/${mine.id}`, { spaceId: null }],
      ['POST', `/v1/domains/${mine.id}/verify`, undefined],
      ['DELETE', `/v1/domains/${mine.id}`, undefined],
    ] as const) {
      expectProblem(
        await t.api(method, path, { token: other.token, ...(body ? { body } : {}) }),
        404,
        'not_found',
      );
    }
    const theirList = await t.api('GET', '/v1/domains', { token: other.token });
    expect(theirList.body.data.map((x: any) => x.id)).not.toContain(mine.id);
    expectProblem(
      await t.api('GET', `/v1/spaces/${space.id}/domains`, { token: other.token }),
      404,
      'not_found',
    );
    // Their own domain can't be bound to our space.
    const theirs = (await add('contested.example.test', {}, other.token)).body.data;
    expect(theirs.status).toBe('pending');
    expectProblem(
      await t.api('PATCH', `/v1/domains/${theirs.id}`, { token: other.token, body: { spaceId: space.id } }),
      404,
      'not_found',
    );

    // We verify first.
    dns.set('_spaces-challenge.contested.example.test', 'TXT', [txtOf(mine).value]);
    expect((await t.api('POST', `/v1/domains/${mine.id}/verify`)).body.data.status).toBe('verified');
    // Their record beside ours: both can't hold it.
    dns.set('_spaces-challenge.contested.example.test', 'TXT', [txtOf(mine).value, txtOf(theirs).value]);
    expectProblem(
      await t.api('POST', `/v1/domains/${theirs.id}/verify`, { token: other.token }),
      409,
      'domain_in_use',
    );
    expect((await t.api('GET', `/v1/domains/${mine.id}`)).body.data.status).toBe('verified');
    // Ours gone from DNS: they take it over, and ours has lost control.
    dns.set('_spaces-challenge.contested.example.test', 'TXT', [txtOf(theirs).value]);
    const taken = await t.api('POST', `/v1/domains/${theirs.id}/verify`, { token: other.token });
    expect(taken.body.data.status).toBe('verified');
    expect((await t.api('GET', `/v1/domains/${mine.id}`)).body.data.status).toBe('control_lost');
  });

  it('preflight says how a hostname would be stored and what it needs, or why not; check queues a look', async () => {
    const team = (await t.api('GET', '/v1/teams')).body.data[0].id;
    const ok = await t.api('POST', `/v1/teams/${team}/domains/preflight`, {
      body: { hostname: 'Fresh.Example.test' },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data).toMatchObject({
      hostname: 'fresh.example.test',
      apex: false,
      available: true,
      existingId: null,
    });
    expect(ok.body.data.records.map((r: any) => r.type)).toEqual(['TXT', 'CNAME']);
    const taken = await t.api('POST', `/v1/teams/${team}/domains/preflight`, {
      body: { hostname: 'www.example.test' },
    });
    expect(taken.body.data.available).toBe(false);
    expect(taken.body.data.existingId).toMatch(/^dom_/);
    const bad = await t.api('POST', `/v1/teams/${team}/domains/preflight`, { body: { hostname: 'co.uk' } });
    expect(expectProblem(bad, 400, 'invalid_domain_name').pointer).toBe('/hostname');
    // Nothing was added.
    const all = await t.api('GET', '/v1/domains?limit=100');
    expect(all.body.data.map((d: any) => d.hostname)).not.toContain('fresh.example.test');

    const queued = await t.api('POST', `/v1/teams/${team}/domains/${taken.body.data.existingId}/check`);
    expect(queued.status, queued.text).toBe(202);
    expect(Date.parse(queued.body.data.nextCheckAt)).toBeLessThanOrEqual(Date.now());
  });

  it('wildcards: only when the team allows them; verified by a TXT record on the parent', async () => {
    const team = (await t.api('GET', '/v1/teams')).body.data[0].id;
    const settingsUrl = `/v1/teams/${team}/domain-settings`;
    const before = await t.api('GET', settingsUrl);
    expect(before.status, before.text).toBe(200);
    // This server terminates no TLS: wildcards need no certificate of ours.
    expect(before.body.data).toMatchObject({
      teamId: team,
      wildcardEnabled: false,
      wildcardsSupported: true,
    });
    const refused = expectProblem(
      await add('*.wild.example.test', { spaceId: space.id }),
      400,
      'domain_wildcard_not_enabled',
    );
    expect(refused.pointer).toBe('/hostname');
    expect(refused.details).toMatchObject({ reason: 'team' });
    expectProblem(
      await t.api('POST', `/v1/teams/${team}/domains/preflight`, {
        body: { hostname: '*.wild.example.test' },
      }),
      400,
      'domain_wildcard_not_enabled',
    );
    // Bad input for the setting, and no changing it from another team.
    expect(
      expectProblem(
        await t.api('PATCH', settingsUrl, { body: { wildcardEnabled: 'yes' } }),
        400,
        'validation_error',
      ).pointer,
    ).toBe('/wildcardEnabled');
    expectProblem(await t.api('PATCH', settingsUrl, { body: {} }), 400, 'validation_error');
    const rival = await createUser(t, 'wildcard-rival');
    expectProblem(
      await t.api('PATCH', settingsUrl, { token: rival.token, body: { wildcardEnabled: true } }),
      404,
      'not_found',
    );
    const on = await t.api('PATCH', settingsUrl, { body: { wildcardEnabled: true } });
    expect(on.status, on.text).toBe(200);
    expect(on.body.data).toMatchObject({ wildcardEnabled: true, updatedAt: expect.any(String) });

    const r = await add('*.Wild.example.test', { spaceId: space.id });
    expect(r.status, r.text).toBe(201);
    const d = r.body.data;
    expect(d).toMatchObject({ hostname: '*.wild.example.test', wildcard: true, apex: false });
    expect(d.records.map((x: any) => [x.purpose, x.type, x.name])).toEqual([
      ['ownership', 'TXT', '_spaces-challenge.wild.example.test'],
      ['routing', 'CNAME', '*.wild.example.test'],
    ]);
    // Still one leading label only, and never under the base domain.
    expectProblem(await add('*.*.example.test'), 400, 'domain_wildcard_label');
    expectProblem(await add('*.spaces.example.test'), 400, 'domain_reserved_suffix');
    expectProblem(await add('*.co.uk'), 400, 'invalid_domain_name');

    dns.set('_spaces-challenge.wild.example.test', 'TXT', [txtOf(d).value]);
    dns.set('*.wild.example.test', 'CNAME', [`${space.publicName}.spaces.example.test`]);
    const v = await t.api('POST', `/v1/domains/${d.id}/verify`);
    expect(v.body.data.status).toBe('verified');
    // The wildcard record is checked through a name only it answers.
    expect(v.body.data.records.map((x: any) => x.state)).toEqual(['ok', 'ok']);
    const diag = await t.api('GET', `/v1/spaces/${space.id}/domains/${d.id}/diagnostics`);
    expect(diag.body.data).toMatchObject({ serving: 'no_https', problems: [] });

    // Turning wildcards off refuses new ones; the existing one stays.
    await t.api('PATCH', settingsUrl, { body: { wildcardEnabled: false } });
    expectProblem(await add('*.other.example.test'), 400, 'domain_wildcard_not_enabled');
    expect((await t.api('GET', `/v1/domains/${d.id}`)).body.data.status).toBe('verified');
  });

  it('lists the team’s domains newest first, with keyset pages', async () => {
    const all = await t.api('GET', '/v1/domains?limit=2');
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toHaveLength(2);
    expect(all.body.pagination.hasMore).toBe(true);
    const next = await t.api(
      'GET',
      `/v1/domains?limit=100&cursor=${encodeURIComponent(all.body.pagination.nextCursor)}`,
    );
    const ids = [...all.body.data, ...next.body.data].map((x: any) => x.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(new Set(ids).size).toBe(ids.length);
  });
});
