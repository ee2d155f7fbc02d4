import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { selfSignedCertificate } from '../helpers/self-signed.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const HOST = 'h2-site.localhost';

/** A throwaway certificate for the site host and the API's address (SPACES_TLS_CERT/KEY). */
function certificate(): { dir: string; cert: string; key: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-h2-'));
  const { cert, key } = selfSignedCertificate(dir, HOST, [`DNS:${HOST}`, 'IP:127.0.0.1']);
  return { dir, cert, key };
}

/** One HTTP/2 request (node:http2's client) to the HTTPS listener, SNI `servername`. */
async function h2(
  port: number,
  ca: Buffer,
  headers: http2.OutgoingHttpHeaders,
  servername: string | null = HOST,
): Promise<{
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
  alpn: string | false | null;
}> {
  // No SNI for an IP address (RFC 6066): the certificate names 127.0.0.1 too.
  const session = http2.connect(`https://127.0.0.1:${port}`, { ca, ...(servername ? { servername } : {}) });
  try {
    return await new Promise((resolve, reject) => {
      session.on('error', reject);
      const req = session.request({ ':authority': HOST, ...headers });
      let body = '';
      let head: http2.IncomingHttpHeaders = {};
      req.setEncoding('utf8');
      req.on('response', (h) => (head = h));
      req.on('data', (c) => (body += c));
      req.on('end', () =>
        resolve({
          status: Number(head[':status']),
          headers: head,
          body,
          alpn: (session.socket as TLSSocket).alpnProtocol,
        }),
      );
      req.on('error', reject);
      req.end();
    });
  } finally {
    session.close();
  }
}

/**
 * HTTP/2 by ALPN on the HTTPS listener (SPACES_HTTP2=on): sites and the API over h2, HTTP/1.1 on
 * the same port.
 */
describeEachDb('HTTP/2 on the HTTPS listener', (db) => {
  let t: TestServer;
  let tls: ReturnType<typeof certificate>;
  let ca: Buffer;

  beforeAll(async () => {
    tls = certificate();
    ca = fs.readFileSync(tls.cert);
    t = await startServer({
      db,
      env: { SPACES_HTTPS_PORT: '0', SPACES_TLS_CERT: tls.cert, SPACES_TLS_KEY: tls.key, SPACES_HTTP2: 'on' },
    });
    const space = await createSpace(t, undefined, { slug: 'h2-site', access: 'public' });
    await publishViaVersions(t, space.id, {
      'index.html': '<h1>over h2</h1>',
      _headers: '/*\n  X-Frame-Options: DENY\n',
    });
  });
  afterAll(async () => {
    await t?.close();
    if (tls) fs.rmSync(tls.dir, { recursive: true, force: true });
  });

  it('an h2 client gets the site with the same headers as HTTP/1.1, and conditional requests work', async () => {
    const port = t.server.httpsPort!;
    const page = await h2(port, ca, { ':method': 'GET', ':path': '/' });
    expect(page.alpn).toBe('h2');
    expect([page.status, page.body]).toEqual([200, '<h1>over h2</h1>']);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers.etag).toEqual(expect.any(String));
    // No HTTP/1.1 connection headers in an HTTP/2 response.
    expect(page.headers.connection).toBeUndefined();
    expect(page.headers['keep-alive']).toBeUndefined();

    // The same answer over HTTP/1.1 on the same port (ALPN http/1.1).
    const one = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
      (resolve, reject) => {
        https
          .get(
            { host: '127.0.0.1', port, servername: HOST, headers: { host: HOST }, ca, agent: false },
            (res) => {
              let body = '';
              res.on('data', (c) => (body += c));
              res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
            },
          )
          .on('error', reject);
      },
    );
    expect([one.status, one.body, one.headers.etag]).toEqual([200, '<h1>over h2</h1>', page.headers.etag]);
    for (const h of ['content-type', 'x-frame-options', 'cache-control']) {
      expect(page.headers[h], h).toBe(one.headers[h]);
    }

    const cached = await h2(port, ca, { ':method': 'GET', ':path': '/', 'if-none-match': page.headers.etag });
    expect([cached.status, cached.body]).toEqual([304, '']);
    const head = await h2(port, ca, { ':method': 'HEAD', ':path': '/' });
    expect([head.status, head.body, head.headers['content-length']]).toEqual([
      200,
      '',
      page.headers['content-length'],
    ]);
    const missing = await h2(port, ca, { ':method': 'GET', ':path': '/nope' });
    expect(missing.status).toBe(404);
  });

  it('the API answers over h2 too', async () => {
    const r = await h2(
      t.server.httpsPort!,
      ca,
      {
        ':method': 'GET',
        ':path': '/v1/spaces/h2-site',
        ':authority': `127.0.0.1:${t.server.httpsPort}`,
        authorization: `Bearer ${t.ownerKey}`,
      },
      null,
    );
    expect(r.status, r.body).toBe(200);
    expect(JSON.parse(r.body).data.space.slug).toBe('h2-site');
    const problem = await h2(
      t.server.httpsPort!,
      ca,
      { ':method': 'GET', ':path': '/v1/spaces/nope', ':authority': `127.0.0.1:${t.server.httpsPort}` },
      null,
    );
    expect(problem.status).toBe(401);
    expect(problem.headers['content-type']).toContain('application/problem+json');
  });

  it('by default (SPACES_HTTP2 unset) only HTTP/1.1 is offered', async () => {
    const off = await startServer({
      db,
      env: { SPACES_HTTPS_PORT: '0', SPACES_TLS_CERT: tls.cert, SPACES_TLS_KEY: tls.key },
    });
    try {
      await expect(h2(off.server.httpsPort!, ca, { ':method': 'GET', ':path': '/' })).rejects.toThrow();
    } finally {
      await off.close();
    }
  });
});
