import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { CertificateService } from '../domain/domains/certificates.ts';
import { hostnameOf } from '../serve/host.ts';
import { installFastLane, type WireHandler } from '../serve/wire.ts';

/** Where ACME CAs look for HTTP-01 answers, on any hostname, over plain HTTP. */
export const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge/';
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

function plain(res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

/** Answers `/.well-known/acme-challenge/<token>` from the challenges every instance shares. */
export function answerAcmeChallenge(
  certs: CertificateService,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const token = (req.url ?? '').slice(ACME_CHALLENGE_PATH.length).split('?')[0]!;
  if ((req.method !== 'GET' && req.method !== 'HEAD') || !TOKEN.test(token)) {
    plain(res, 404, 'Not found\n');
    return;
  }
  certs.challengeAnswer(token).then(
    (answer) => (answer ? plain(res, 200, answer) : plain(res, 404, 'Not found\n')),
    () => plain(res, 503, 'Try again\n', { 'retry-after': '5' }),
  );
}

/**
 * Plain HTTP to a hostname whose certificate is in service moves to HTTPS: GET and HEAD get a 308 to
 * the same path and query; other methods a 400 (a body sent in the clear is not replayed). True when
 * it answered.
 */
export function toHttps(
  certs: CertificateService,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  portSuffix: string,
): boolean {
  if ((req.socket as TLSSocket).encrypted) return false;
  const host = hostnameOf(req.headers.host ?? '');
  if (!host || !certs.hasCertificate(host)) return false;
  if (req.method === 'GET' || req.method === 'HEAD') {
    plain(res, 308, `https://${host}${portSuffix}${req.url ?? '/'}\n`, {
      location: `https://${host}${portSuffix}${req.url ?? '/'}`,
    });
  } else {
    plain(res, 400, `This site is served over HTTPS: send the request to https://${host}${portSuffix}.\n`);
  }
  return true;
}

export interface HttpsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * The HTTPS listener: TLS 1.2 and 1.3, the certificate chosen by SNI from the issued ones (refreshed
 * in memory when one changes), `SPACES_TLS_CERT`/`SPACES_TLS_KEY` for every other name. Requests go
 * through the same dispatch as plain HTTP, so a custom domain is served exactly like the managed host.
 */
export async function createHttpsListener(options: {
  certs: CertificateService;
  port: number;
  host: string;
  tlsCert: string | null;
  tlsKey: string | null;
  dispatch: http.RequestListener;
  /** The site edge's fast lane for plain GET/HEAD on the decrypted stream (see serve/wire.ts). */
  fast?: WireHandler;
}): Promise<HttpsListener> {
  const fallback =
    options.tlsCert && options.tlsKey
      ? { cert: fs.readFileSync(options.tlsCert), key: fs.readFileSync(options.tlsKey) }
      : {};
  const server = https.createServer(
    {
      ...fallback,
      minVersion: 'TLSv1.2',
      SNICallback: (servername, cb) => cb(null, options.certs.contextFor(servername)),
    },
    options.dispatch,
  );
  // A failed handshake (no certificate for the name, a scanner) is the client's problem, not ours.
  server.on('tlsClientError', () => {});
  if (options.fast) installFastLane(server as unknown as http.Server, options.fast, 'secureConnection');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
