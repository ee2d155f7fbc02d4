import crypto from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Bind9, hasBind9, startBind9 } from '../helpers/bind9.ts';
import { freePort } from '../helpers/child-server.ts';
import { startDns, type TestDns } from '../helpers/dns-server.ts';
import { hasPebble, type Pebble, startPebble } from '../helpers/pebble.ts';
import { exchange, header } from '../helpers/raw-http.ts';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { publishViaVersions } from '../publishing/helpers.ts';

const ready = hasPebble && hasBind9;

/**
 * Wildcard certificates by DNS-01 (#21): Spaces writes the `_acme-challenge` TXT values into a real
 * BIND 9 by RFC 2136 dynamic update (TSIG-signed), and pebble, resolving through that BIND, checks
 * them. The wildcard of a custom domain whose zone BIND holds is proved directly; one elsewhere
 * through the owner's `_acme-challenge` CNAME into that zone; and the base domain gets `*.<base>`.
 * The test's own DNS server stands in for the recursive resolvers of the internet: ownership checks
 * and pebble ask it, and it answers from bind9 what it doesn't hold itself.
 */
describeEachDb('wildcard certificates by DNS-01 (bind9 + pebble)', (db) => {
  let t: TestServer;
  let dns: TestDns;
  let bind: Bind9;
  let pebble: Pebble;
  let root: string;
  let spaceId: string;
  let teamId: string;

  beforeAll(async () => {
    // Without pebble and bind9 (installed by .ci/system-deps) the tests below are skipped.
    if (!ready) return;
    bind = await startBind9({ zones: { 'example.test': [] } });
    // The "recursive resolver" of the test: its own records (the customer's CNAMEs and TXTs), and
    // bind9's zone behind them. Both the ownership checks and pebble ask it.
    dns = await startDns({ upstream: bind.address });
    const port = await freePort();
    pebble = await startPebble({ dnsServer: dns.address, httpPort: port });
    root = await pebble.root();
    t = await startServer({
      db,
      env: {
        PORT: String(port),
        SPACES_BASE_DOMAIN: 'spaces.example.test',
        SPACES_DNS_SERVERS: dns.address,
        SPACES_HTTPS_PORT: '0',
        SPACES_ACME_DIRECTORY: pebble.directory,
        SPACES_ACME_CA_FILE: pebble.caFile,
        SPACES_WORKER: 'off',
        ...bind.env,
        // Only example.test is this server's to update.
        SPACES_RFC2136_ZONE: 'example.test',
      },
    });
    const s = await t.api('POST', '/v1/spaces', { body: { access: 'public', slug: 'wild-site' } });
    spaceId = s.body.data.space.id;
    teamId = (await t.api('GET', '/v1/teams')).body.data[0].id;
    await publishViaVersions(t, spaceId, { 'index.html': '<h1>wild</h1>' });
    const on = await t.api('PATCH', `/v1/teams/${teamId}/domain-settings`, {
      body: { wildcardEnabled: true },
    });
    expect(on.body.data).toMatchObject({ wildcardEnabled: true, wildcardsSupported: true });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await pebble?.close();
    await bind?.close();
    await dns?.close();
  });

  /** A TLS request to the HTTPS listener for `host` (SNI), trusting only pebble's root. */
  const tlsGet = (host: string, path = '/') =>
    new Promise<{ status: number; body: string; cert: crypto.X509Certificate; type: string | undefined }>(
      (resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port: t.server.httpsPort!,
            servername: host,
            path,
            headers: { host },
            ca: root,
            agent: false,
          },
          (res) => {
            const peer = (res.socket as TLSSocket).getPeerCertificate();
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () =>
              resolve({
                status: res.statusCode!,
                body,
                cert: new crypto.X509Certificate(peer.raw),
                type: res.headers['content-type'],
              }),
            );
          },
        );
        req.on('error', reject);
        req.end();
      },
    );

  /** The TXT values BIND holds at `name`. */
  const bindTxt = async (name: string) => {
    const r = new Resolver();
    r.setServers([bind.address]);
    try {
      return (await r.resolveTxt(name)).map((c) => c.join(''));
    } catch {
      return [];
    }
  };

  /** Runs the certificate job once; a failure shows the CA's or the DNS server's words. */
  const expectIssued = async (issued: number) => {
    const result = await t.server.services.certificates.issueDue();
    const errors = await Promise.all(
      ['*.example.test', '*.spaces.example.test', '*.customer.test'].map(
        async (h) => `${h}: ${(await t.server.services.store.repos.certificates.byHostname(h))?.last_error}`,
      ),
    );
    expect(result, errors.join('\n')).toEqual({ issued, failed: 0 });
  };

  const addVerified = async (hostname: string) => {
    const r = await t.api('POST', '/v1/domains', { body: { hostname, spaceId } });
    expect(r.status, r.text).toBe(201);
    const d = r.body.data;
    const txt = d.records.find((x: any) => x.purpose === 'ownership');
    dns.set(txt.name, 'TXT', [txt.value]);
    dns.set(hostname, 'CNAME', ['wild-site.spaces.example.test']);
    const v = await t.api('POST', `/v1/domains/${d.id}/verify`);
    expect(v.body.data.status).toBe('verified');
    return d;
  };

  it.skipIf(!ready)(
    'issues *.example.test and *.<base domain> through bind9, and serves any one label by SNI',
    async () => {
      const d = await addVerified('*.example.test');
      // example.test is this server's zone: no delegation needed.
      expect(d.records.map((x: any) => x.purpose)).toEqual(['ownership', 'routing']);

      const certs = t.server.services.certificates;
      expect(certs.baseWildcard).toBe('*.spaces.example.test');
      await expectIssued(2);
      // The proofs are gone from the zone once the orders are done.
      expect(await bindTxt('_acme-challenge.example.test')).toEqual([]);
      expect(await bindTxt('_acme-challenge.spaces.example.test')).toEqual([]);

      const page = await tlsGet('blog.example.test');
      expect(page.cert.subjectAltName).toBe('DNS:*.example.test');
      expect([page.status, page.body, page.type]).toEqual([200, '<h1>wild</h1>', 'text/html; charset=utf-8']);
      // Plain HTTP to a name the wildcard covers moves to HTTPS.
      const plain = await exchange(
        t.port,
        'GET /x?y=1 HTTP/1.1\r\nHost: blog.example.test\r\nConnection: close\r\n\r\n',
      );
      expect([plain.responses[0]!.status, header(plain.responses[0]!, 'location')]).toEqual([
        308,
        `https://blog.example.test:${t.server.httpsPort}/x?y=1`,
      ]);
      // Two labels down is not the wildcard's: no certificate for it.
      await expect(tlsGet('a.b.example.test')).rejects.toThrow();

      // The managed hosts, by the base domain's own wildcard; they stay on plain HTTP too.
      const managed = await tlsGet('wild-site.spaces.example.test');
      expect(managed.cert.subjectAltName).toContain('DNS:*.spaces.example.test');
      expect(managed.cert.subjectAltName).toContain('DNS:spaces.example.test');
      expect([managed.status, managed.body]).toEqual([200, '<h1>wild</h1>']);
      const managedPlain = await exchange(
        t.port,
        'GET / HTTP/1.1\r\nHost: wild-site.spaces.example.test\r\nConnection: close\r\n\r\n',
      );
      expect(managedPlain.responses[0]!.status).toBe(200);
      // Nothing more is due.
      expect(await certs.issueDue()).toEqual({ issued: 0, failed: 0 });

      // Control lost: the wildcard's certificate is no longer presented, nor plain HTTP moved.
      dns.clear('_spaces-challenge.example.test');
      expect((await t.api('POST', `/v1/domains/${d.id}/verify`)).body.data.status).toBe('control_lost');
      await certs.reload();
      await expect(tlsGet('blog.example.test')).rejects.toThrow();
      const lost = await exchange(
        t.port,
        'GET / HTTP/1.1\r\nHost: blog.example.test\r\nConnection: close\r\n\r\n',
      );
      expect(lost.responses[0]!.status).toBe(404);
      // The base domain's stays.
      expect((await tlsGet('wild-site.spaces.example.test')).status).toBe(200);
    },
    120_000,
  );

  it.skipIf(!ready)(
    'a wildcard outside the provider’s zones is proved through the owner’s _acme-challenge CNAME',
    async () => {
      const d = await addVerified('*.customer.test');
      const cert = d.records.find((x: any) => x.purpose === 'certificate');
      expect(cert).toMatchObject({
        type: 'CNAME',
        name: '_acme-challenge.customer.test',
        value: 'customer.test.example.test',
      });
      // The diagnostics ask for the CNAME until the checks see it.
      const diag = await t.api('GET', `/v1/spaces/${spaceId}/domains/${d.id}/diagnostics`);
      expect(diag.body.data.problems.join(' ')).toContain('_acme-challenge.customer.test');
      dns.set('_acme-challenge.customer.test', 'CNAME', ['customer.test.example.test']);
      await t.api('POST', `/v1/domains/${d.id}/verify`);

      await expectIssued(1);
      const page = await tlsGet('shop.customer.test');
      expect(page.cert.subjectAltName).toBe('DNS:*.customer.test');
      expect([page.status, page.body]).toEqual([200, '<h1>wild</h1>']);
      const after = await t.api('GET', `/v1/spaces/${spaceId}/domains/${d.id}/diagnostics`);
      expect(after.body.data).toMatchObject({ serving: 'ready', problems: [] });
    },
    120_000,
  );

  it.skipIf(!ready)('a server with HTTPS but no DNS provider refuses wildcards, saying why', async () => {
    const plain = await startServer({ db, env: { SPACES_HTTPS_PORT: '0', SPACES_WORKER: 'off' } });
    try {
      const team = (await plain.api('GET', '/v1/teams')).body.data[0].id;
      const on = await plain.api('PATCH', `/v1/teams/${team}/domain-settings`, {
        body: { wildcardEnabled: true },
      });
      expect(on.body.data).toMatchObject({ wildcardEnabled: true, wildcardsSupported: false });
      const p = expectProblem(
        await plain.api('POST', '/v1/domains', { body: { hostname: '*.example.org' } }),
        400,
        'domain_wildcard_not_enabled',
      );
      expect([p.pointer, p.details]).toEqual(['/hostname', { reason: 'server' }]);
    } finally {
      await plain.close();
    }
  });
});
