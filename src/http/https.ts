import fs from 'node:fs';
import type http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { CertificateService } from '../domain/domains/certificates.ts';
import { hostnameOf } from '../serve/host.ts';
import { admitPlatformRequest } from '../serve/platform-requests.ts';
import { installFastLane, type WireAnswer, type WireHandler, type WireRequest } from '../serve/wire.ts';

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
  // The server's own requests to its edge (crons) come over plain HTTP on purpose.
  if (admitPlatformRequest(req)) return false;
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

/** HTTP/2 connection-specific headers (RFC 9113 §8.2.2) node:http2 refuses to send. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];

/**
 * The dispatch for HTTP/2 requests (node:http2's compatibility objects): the `:authority` becomes
 * the `Host` the rest of the server reads, and connection-specific headers a handler sets for
 * HTTP/1.1 are dropped rather than failing the response.
 */
function h2Dispatch(dispatch: http.RequestListener) {
  return (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void => {
    const authority = req.headers[':authority'];
    if (!req.headers.host && typeof authority === 'string') req.headers.host = authority;
    const setHeader = res.setHeader.bind(res);
    res.setHeader = (name: string, value: number | string | readonly string[]) =>
      HOP_BY_HOP.includes(name.toLowerCase()) ? res : setHeader(name, value);
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => http2.Http2ServerResponse;
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      const last = rest[rest.length - 1];
      if (last && typeof last === 'object') {
        const headers = Array.isArray(last) ? last : { ...(last as Record<string, unknown>) };
        if (!Array.isArray(headers)) {
          for (const k of Object.keys(headers)) if (HOP_BY_HOP.includes(k.toLowerCase())) delete headers[k];
        }
        rest[rest.length - 1] = headers;
      }
      return writeHead(status, ...rest);
    }) as typeof res.writeHead;
    dispatch(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse);
  };
}

/** Request headers that mean a body or a protocol switch: the full path's job (as in the lane). */
const NOT_FAST = new Set(['content-length', 'transfer-encoding', 'expect', 'upgrade']);

/** An HTTP/2 request as the fast lane's handler reads it, or null when it is not one for the lane. */
function wireRequestOf(req: http2.Http2ServerRequest): WireRequest | null {
  const method = req.method;
  const url = req.url;
  if ((method !== 'GET' && method !== 'HEAD') || !url.startsWith('/')) return null;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name[0] === ':') continue;
    if (NOT_FAST.has(name) || typeof value !== 'string') return null;
    headers[name] = value;
  }
  headers.host ??= String(req.headers[':authority'] ?? '');
  return { method, url, headers };
}

/** Sends a lane answer on an HTTP/2 stream; false when its headers can't go out as they are. */
function sendH2(res: http2.Http2ServerResponse, method: string, a: WireAnswer): boolean {
  const headers: Record<string, string | string[]> = {};
  let length = false;
  for (let i = 0; i < a.headers.length; i += 2) {
    const name = a.headers[i]!.toLowerCase();
    if (HOP_BY_HOP.includes(name)) continue;
    if (name === 'content-length') length = true;
    const value = a.headers[i + 1]!;
    const prev = headers[name];
    headers[name] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value];
  }
  const bodyless = method === 'HEAD' || a.status === 304 || a.status === 204;
  if (!length && bodyless && a.status !== 304 && a.status !== 204) headers['content-length'] = '0';
  try {
    res.writeHead(a.status, headers);
  } catch {
    return false;
  }
  if (bodyless || !a.body) res.end();
  else res.end(a.body);
  return true;
}

/**
 * HTTP/2 requests: the fast lane's handler first (answers in memory, sent on the stream), the full
 * dispatch for the rest.
 */
function h2Handler(dispatch: http.RequestListener, fast: WireHandler | undefined) {
  const full = h2Dispatch(dispatch);
  return (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void => {
    const wire = fast ? wireRequestOf(req) : null;
    if (!fast || !wire) {
      full(req, res);
      return;
    }
    let out: ReturnType<WireHandler>;
    try {
      out = fast(wire);
    } catch {
      out = null;
    }
    if (out instanceof Promise) {
      out.then(
        (a) => {
          if (!a || !sendH2(res, wire.method, a)) full(req, res);
        },
        () => full(req, res),
      );
    } else if (!out || !sendH2(res, wire.method, out)) full(req, res);
  };
}

/**
 * The HTTPS listener: TLS 1.2 and 1.3, the certificate chosen by SNI from the issued ones (refreshed
 * in memory when one changes), `SPACES_TLS_CERT`/`SPACES_TLS_KEY` for every other name. Requests go
 * through the same dispatch as plain HTTP, so a custom domain is served exactly like the managed host.
 *
 * With `http2`, ALPN offers `h2` beside `http/1.1` (node:http2 with `allowHTTP1`): HTTP/1.1
 * connections still take the fast lane on the decrypted stream; HTTP/2 sessions go to node:http2.
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
  /** Offer HTTP/2 by ALPN (`SPACES_HTTP2`). */
  http2: boolean;
}): Promise<HttpsListener> {
  const fallback =
    options.tlsCert && options.tlsKey
      ? { cert: fs.readFileSync(options.tlsCert), key: fs.readFileSync(options.tlsKey) }
      : {};
  const tlsOptions = {
    ...fallback,
    minVersion: 'TLSv1.2' as const,
    SNICallback: (
      servername: string,
      cb: (err: Error | null, ctx?: import('node:tls').SecureContext) => void,
    ) => cb(null, options.certs.contextFor(servername)),
  };
  // Off by default: node:http2 costs several times the CPU per request of the HTTP/1.1 fast lane
  // (bench/README.md, the h2 case), and browsers take h2 whenever it is offered.
  const useH2 = options.http2;
  let server: https.Server;
  if (useH2) {
    const h2 = h2Handler(options.dispatch, options.fast);
    server = http2.createSecureServer({ ...tlsOptions, allowHTTP1: true }) as unknown as https.Server;
    // HTTP/1.1 requests come through node:http's machinery on the same server: the same dispatch.
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (req.httpVersionMajor === 2) h2(req as never, res as never);
      else options.dispatch(req, res);
    });
    // node:http2's server lacks node:http's connection closers, which the fast lane and close() use.
    const sockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    // …and its timeouts (node:https's defaults), which the lane and the HTTP/1.1 fallback read.
    server.keepAliveTimeout ??= 5000;
    server.headersTimeout ??= 60_000;
    server.requestTimeout ??= 300_000;
    server.closeIdleConnections ??= () => {};
    server.closeAllConnections ??= () => {
      for (const socket of sockets) socket.destroy();
    };
  } else server = https.createServer(tlsOptions, options.dispatch);
  // A failed handshake (no certificate for the name, a scanner) is the client's problem, not ours.
  server.on('tlsClientError', () => {});
  if (options.fast) {
    const sessions = server.listeners('secureConnection') as ((socket: Socket) => void)[];
    installFastLane(server as unknown as http.Server, options.fast, 'secureConnection');
    if (useH2) {
      // HTTP/2 sessions skip the lane (it reads HTTP/1.1 heads only).
      const lane = server.listeners('secureConnection') as ((socket: Socket) => void)[];
      server.removeAllListeners('secureConnection');
      server.on('secureConnection', (socket: TLSSocket) => {
        for (const l of socket.alpnProtocol === 'h2' ? sessions : lane) l.call(server, socket);
      });
    }
  }
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
