import crypto from 'node:crypto';
import https from 'node:https';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../helpers/child-server.ts';
import { startDns, type TestDns } from '../helpers/dns-server.ts';
import { hasPebble, type Pebble, startPebble } from '../helpers/pebble.ts';
import { exchange, header } from '../helpers/raw-http.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { publishViaVersions } from '../publishing/helpers.ts';

/**
 * Certificates for verified custom domains from a real ACME CA (pebble), HTTP-01 answered by the
 * server itself, the HTTPS listener presenting them by SNI, plain HTTP moving to HTTPS, and renewal
 * two thirds into a short-lived certificate's life.
 */
describeEachDb('certificates for custom domains (pebble)', (db) => {
  let t: TestServer;
  let dns: TestDns;
  let pebble: Pebble;
  let root: string;

  beforeAll(async () => {
    // Without pebble (installed by .ci/system-deps) the tests below are skipped.
    if (!hasPebble) return;
    dns = await startDns();
    const port = await freePort();
    pebble = await startPebble({ dnsServer: dns.address, httpPort: port, validitySeconds: 30 });
    root = await pebble.root();
    t = await startServer({
      db,
      env: {
        PORT: String(port),
        SPACES_DNS_SERVERS: dns.address,
        SPACES_HTTPS_PORT: '0',
        SPACES_ACME_DIRECTORY: pebble.directory,
        SPACES_ACME_CA_FILE: pebble.caFile,
        SPACES_ACME_EMAIL: 'ops@example.test',
        SPACES_WORKER: 'off',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await pebble?.close();
    await dns?.close();
  });

  /** A TLS request to the HTTPS listener for `host`, trusting only pebble's root. */
  const tlsGet = (host: string, path = '/') =>
    new Promise<{
      status: number;
      body: string;
      hsts: string | undefined;
      cert: crypto.X509Certificate;
      authorized: boolean;
    }>((resolve, reject) => {
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
          const sock = res.socket as import('node:tls').TLSSocket;
          const peer = sock.getPeerCertificate();
          const authorized = sock.authorized;
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => {
            try {
              resolve({
                status: res.statusCode!,
                body,
                hsts: res.headers['strict-transport-security'] as string | undefined,
                cert: new crypto.X509Certificate(peer.raw),
                authorized,
              });
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });

  it.skipIf(!hasPebble)(
    'issues a certificate for a verified domain, serves it by SNI, and moves plain HTTP to HTTPS',
    async () => {
      const s = await t.api('POST', '/v1/spaces', { body: { access: 'public' } });
      await publishViaVersions(t, s.body.data.space.id, { 'index.html': '<h1>over https</h1>' });
      const d = (
        await t.api('POST', '/v1/domains', {
          body: { hostname: 'www.example.test', spaceId: s.body.data.space.id },
        })
      ).body.data;
      const txt = d.records.find((r: any) => r.type === 'TXT');
      dns.set(txt.name, 'TXT', [txt.value]);
      dns.set('www.example.test', 'A', ['127.0.0.1']);
      expect((await t.api('POST', `/v1/domains/${d.id}/verify`)).body.data.status).toBe('verified');

      const certs = t.server.services.certificates;
      expect(await certs.issueDue()).toEqual({ issued: 1, failed: 0 });
      const first = await tlsGet('www.example.test');
      expect(first.authorized).toBe(true);
      expect(first.cert.subjectAltName).toContain('DNS:www.example.test');
      // The live version, served over HTTPS on the custom domain.
      expect([first.status, first.body, first.hsts]).toEqual([200, '<h1>over https</h1>', undefined]);
      // HSTS is opt-in per space, and sent over HTTPS only.
      const patched = await t.api('PATCH', `/v1/spaces/${s.body.data.space.id}`, {
        body: { config: { hsts: { maxAge: 600, includeSubDomains: true } } },
      });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.data.space.config).toMatchObject({ hsts: { maxAge: 600 } });
      expect((await tlsGet('www.example.test')).hsts).toBe('max-age=600; includeSubDomains');
      const managedPlain = await exchange(
        t.port,
        `GET / HTTP/1.1\r\nHost: ${new URL(s.body.data.space.liveUrl).host}\r\nConnection: close\r\n\r\n`,
      );
      expect(header(managedPlain.responses[0]!, 'strict-transport-security')).toBeUndefined();
      // The private key is stored sealed, never as PEM.
      const row = await t.server.services.store.repos.certificates.byHostname('www.example.test');
      expect(row?.key_sealed).toMatch(/^v1:/);
      expect(row?.key_sealed).not.toContain('PRIVATE KEY');
      // No challenge is left behind once the order is done.
      expect(await certs.challengeAnswer('anything')).toBeNull();

      const plain = await exchange(
        t.port,
        'GET /a/b?c=1 HTTP/1.1\r\nHost: www.example.test\r\nConnection: close\r\n\r\n',
      );
      expect(plain.responses[0]!.status).toBe(308);
      expect(header(plain.responses[0]!, 'location')).toBe(
        `https://www.example.test:${t.server.httpsPort}/a/b?c=1`,
      );
      const post = await exchange(
        t.port,
        'POST /form HTTP/1.1\r\nHost: www.example.test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
      );
      expect(post.responses[0]!.status).toBe(400);
      // The managed host stays on plain HTTP.
      const managed = await exchange(
        t.port,
        `GET / HTTP/1.1\r\nHost: ${new URL(s.body.data.space.liveUrl).host}\r\nConnection: close\r\n\r\n`,
      );
      expect(managed.responses[0]!.status).not.toBe(308);

      // Renewal: nothing is due until two thirds of the lifetime have passed.
      expect(await certs.issueDue()).toEqual({ issued: 0, failed: 0 });
      const lifetime = Date.parse(first.cert.validTo) - Date.parse(first.cert.validFrom);
      expect(lifetime).toBeLessThanOrEqual(60_000);
      const renewAt = Date.parse(row!.renew_after!);
      await new Promise((r) => setTimeout(r, Math.max(0, renewAt - Date.now() + 500)));
      expect(await certs.issueDue()).toEqual({ issued: 1, failed: 0 });
      const second = await tlsGet('www.example.test');
      expect(second.authorized).toBe(true);
      expect(second.cert.serialNumber).not.toBe(first.cert.serialNumber);
    },
    120_000,
  );

  it.skipIf(!hasPebble)(
    'a failed order is recorded and retried later; an unknown name gets no certificate',
    async () => {
      const s = await t.api('POST', '/v1/spaces', { body: {} });
      const d = (
        await t.api('POST', '/v1/domains', {
          body: { hostname: 'nowhere.example.test', spaceId: s.body.data.space.id },
        })
      ).body.data;
      const txt = d.records.find((r: any) => r.type === 'TXT');
      dns.set(txt.name, 'TXT', [txt.value]);
      // Verified by TXT, but its name does not resolve: the CA can't reach us.
      expect((await t.api('POST', `/v1/domains/${d.id}/verify`)).body.data.status).toBe('verified');
      const certs = t.server.services.certificates;
      expect(await certs.issueDue()).toEqual({ issued: 0, failed: 1 });
      const row = await t.server.services.store.repos.certificates.byHostname('nowhere.example.test');
      expect(row).toMatchObject({ status: 'failed', attempts: 1 });
      expect(row?.last_error).toBeTruthy();
      expect(Date.parse(row!.next_attempt_at!)).toBeGreaterThan(Date.now() + 4 * 60_000);
      // Not due again right away; ssl/retry makes it due now.
      expect(await certs.issueDue()).toEqual({ issued: 0, failed: 0 });
      const retry = await t.api('POST', `/v1/spaces/${s.body.data.space.id}/domains/${d.id}/ssl/retry`);
      expect(retry.status, retry.text).toBe(202);
      expect(retry.body.data.certificate).toMatchObject({ status: 'failed', lastError: expect.any(String) });
      expect(await certs.issueDue()).toEqual({ issued: 0, failed: 1 });
      expect(
        (await t.server.services.store.repos.certificates.byHostname('nowhere.example.test'))?.attempts,
      ).toBe(2);
      await expect(tlsGet('nowhere.example.test')).rejects.toThrow();
    },
    120_000,
  );
});
