import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseHead } from '../../src/serve/wire.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

// The edge's fast lane (src/serve/wire.ts) answers warm GET/HEADs on the raw socket and hands every
// other request, with the rest of its connection, to node:http. These tests speak raw HTTP/1.1 so
// pipelining, partial heads, keep-alive and hand-off are exercised byte for byte.

const HOST = 'lane-site.localhost';
const site = {
  'index.html': '<html><head><title>lane</title></head><body>home page</body></html>',
  'app.css': 'body { color: red; }\n'.repeat(40),
  'docs/index.html': '<html><body>docs</body></html>',
  _redirects: '/old /index.html 301\n/app/* /index.html 200\n',
  _headers: '/*\n  X-Frame-Options: DENY\n',
};

interface Res {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads `count` responses off a socket (bodies by Content-Length; none for HEAD/304). */
function readResponses(sock: net.Socket, count: number, heads: boolean[] = []): Promise<Res[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const out: Res[] = [];
    const timer = setTimeout(() => reject(new Error(`timeout; got ${out.length}: ${buf}`)), 5000);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) break;
        const lines = buf.toString('latin1', 0, end).split('\r\n');
        const status = Number(lines[0]!.split(' ')[1]);
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) {
          const i = l.indexOf(':');
          headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
        }
        const noBody = heads[out.length] === true || status === 304 || status === 204;
        if (!noBody && headers['transfer-encoding'] === 'chunked') {
          const term = buf.indexOf('0\r\n\r\n', end + 4);
          if (term === -1) break;
          out.push({ status, headers, body: buf.toString('utf8', end + 4, term) });
          buf = buf.subarray(term + 5);
        } else {
          const len = noBody ? 0 : Number(headers['content-length'] ?? 0);
          if (buf.length < end + 4 + len) break;
          out.push({ status, headers, body: buf.toString('utf8', end + 4, end + 4 + len) });
          buf = buf.subarray(end + 4 + len);
        }
        if (out.length === count) {
          clearTimeout(timer);
          sock.removeListener('data', onData);
          return resolve(out);
        }
      }
    };
    sock.on('data', onData);
  });
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

const get = (path: string, extra = '', method = 'GET') =>
  `${method} ${path} HTTP/1.1\r\nHost: ${HOST}\r\n${extra}\r\n`;

it('parses only plain heads', () => {
  expect(parseHead('GET / HTTP/1.1\r\nHost: a.localhost\r\nAccept: */*')).toEqual({
    method: 'GET',
    url: '/',
    headers: { host: 'a.localhost', accept: '*/*' },
    keepAlive: true,
  });
  // Header names in any case, known (matched to a constant) or not (sliced and lowercased).
  expect(
    parseHead(
      'HEAD /a?b=1 HTTP/1.1\r\nHOST:a\r\naccept-ENCODING:  gzip \t\r\nX-Custom-Thing: 1\r\nIf-None-Match: "x"\r\nAccept_Encoding: y',
    ),
  ).toEqual({
    method: 'HEAD',
    url: '/a?b=1',
    headers: {
      host: 'a',
      'accept-encoding': 'gzip',
      'x-custom-thing': '1',
      'if-none-match': '"x"',
      accept_encoding: 'y',
    },
    keepAlive: true,
  });
  expect(parseHead('GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, Close')?.keepAlive).toBe(false);
  expect(parseHead('GET / HTTP/1.0\r\nConnection: close')?.keepAlive).toBe(false);
  expect(parseHead('GET /x HTTP/1.1\r\nHost: a\r\nConnection: close')?.keepAlive).toBe(false);
  expect(parseHead('GET /x HTTP/1.0\r\nHost: a')?.keepAlive).toBe(false);
  expect(parseHead('GET /x HTTP/1.0\r\nConnection: keep-alive')?.keepAlive).toBe(true);
  for (const head of [
    'POST / HTTP/1.1\r\nHost: a',
    'GET / HTTP/1.1', // no Host
    'GET http://a/ HTTP/1.1\r\nHost: a', // absolute form
    'GET / HTTP/2.0\r\nHost: a',
    'GET /a b HTTP/1.1\r\nHost: a',
    'GET / HTTP/1.1\r\nHost: a\r\nHost: b', // repeated header
    'GET / HTTP/1.1\r\nHost: a\r\nConstructor: x', // an Object.prototype name
    'GET / HTTP/1.1\r\nHost: a\r\n folded', // obs-fold
    'GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0',
    'GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked',
    'GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade',
    'GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue',
    'GET / HTTP/1.1\r\nHost: a\r\nBad Name: x',
    'GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b',
    'GET / HTTP/1.1\r\nHost: a\r\n: empty',
    'GET / HTTP/1.1\r\nHost: a\r\nAccept\rEncoding: x', // a CR where a known name has '-'
    'GET / HTTP/1.1\r\nHost: a\r\nNo colon here',
    'GET / HTTP/1.1\r\nHost: a\r\nNo colon\r\nX: y:z', // the next line's colon is not this one's
    'GET / HTTP/1.1\r\nHOST: a\r\nhost: b', // a repeat in another case
  ]) {
    expect(parseHead(head), head).toBeNull();
  }
});

describeEachDb('site edge fast lane', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
    const space = await createSpace(t, undefined, { slug: 'lane-site', access: 'public' });
    await publishViaVersions(t, space.id, site);
  });
  afterAll(() => t.close());

  const lane = () => t.server.fastLane!;

  it('answers on the raw socket with the same response node:http gives', async () => {
    // node:http's answer: an API request first hands this connection over for good.
    const s = await connect(t.port);
    const before = lane().handedOff;
    s.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await readResponses(s, 1);
    expect(lane().handedOff).toBe(before + 1);
    s.write(get('/app.css', 'Accept-Encoding: identity\r\n'));
    const [cold] = await readResponses(s, 1);
    s.destroy();

    const s2 = await connect(t.port);
    const answered = lane().answered;
    s2.write(get('/app.css', 'Accept-Encoding: identity\r\n'));
    const [warm] = await readResponses(s2, 1);
    expect(lane().answered).toBe(answered + 1);
    s2.destroy();

    expect(warm!.status).toBe(200);
    expect(warm!.body).toBe(site['app.css']);
    const strip = (h: Record<string, string>) => {
      const { date, 'keep-alive': _k, connection: _c, ...rest } = h;
      return rest;
    };
    expect(strip(warm!.headers)).toEqual(strip(cold!.headers));
    expect(warm!.headers.date).toMatch(/GMT$/);
    expect(warm!.headers.connection).toBe('keep-alive');
    expect(warm!.headers['x-frame-options']).toBe('DENY');
  });

  it('gives the answer node:http gives, request by request, over a corpus of paths and headers', async () => {
    const corpus: Array<[string, string, string]> = [];
    const paths = [
      '/',
      '/index.html',
      '/docs',
      '/docs/',
      '/docs/index.html',
      '/app.css',
      '/app.css?v=1',
      '/old',
      '/old?x=1',
      '/app/x/y',
      '/%2e%2e/etc/passwd',
      '/a/../app.css',
      '//app.css',
      '/missing',
      '/missing.css',
      '/_redirects',
      '/_headers',
      '/.env',
      '/__service/collab.css',
    ];
    const variants = [
      '',
      'Accept-Encoding: gzip, deflate, br\r\n',
      'Accept-Encoding: gzip\r\n',
      'If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n',
    ];
    for (const p of paths) for (const v of variants) for (const m of ['GET', 'HEAD']) corpus.push([m, p, v]);

    // node:http's answers on one handed-off connection, the lane's on another (warm by then).
    const viaNode = await connect(t.port);
    viaNode.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await readResponses(viaNode, 1);
    const answered = lane().answered;
    const comparable = (r: Res) => {
      const { date, 'keep-alive': _k, connection: _c, 'transfer-encoding': _t, ...headers } = r.headers;
      if (r.body === '' && headers['content-length'] === '0') delete headers['content-length'];
      return { status: r.status, headers, body: r.body };
    };
    for (const [method, p, v] of corpus) {
      viaNode.write(get(p, v, method));
      const [fromNode] = await readResponses(viaNode, 1, [method === 'HEAD']);
      // A fresh connection each time: one the lane hands off would compare node:http with itself.
      const viaLane = await connect(t.port);
      viaLane.write(get(p, v, method));
      const [fromLane] = await readResponses(viaLane, 1, [method === 'HEAD']);
      viaLane.destroy();
      expect(comparable(fromLane!), `${method} ${p} ${v}`).toEqual(comparable(fromNode!));
    }
    viaNode.destroy();
    // Most of the corpus went through the lane (system pages such as 404s are node:http's).
    expect(lane().answered - answered).toBeGreaterThan(corpus.length / 2);
  });

  it('answers pipelined requests in order: files, a redirect, a 304 and a HEAD', async () => {
    const warm = await connect(t.port);
    warm.write(get('/'));
    const first = await readResponses(warm, 1);
    warm.destroy();
    const etag = first[0]!.headers.etag!;

    const s = await connect(t.port);
    const answered = lane().answered;
    s.write(
      get('/') +
        get('/old') +
        get('/', `If-None-Match: ${etag}\r\n`) +
        get('/docs/', '', 'HEAD') +
        get('/app/deep/link') +
        get('/app/another/route'),
    );
    const r = await readResponses(s, 6, [false, false, false, true, false, false]);
    s.destroy();
    expect(r.map((x) => x.status)).toEqual([200, 301, 304, 200, 200, 200]);
    expect(r[0]!.body).toContain('home page');
    expect(r[1]!.headers.location).toBe('/index.html');
    expect(r[1]!.headers['content-length']).toBe('0');
    expect(r[2]!.headers.etag).toBe(etag);
    expect(r[3]!.headers['content-length']).toBe(String(Buffer.byteLength(site['docs/index.html'])));
    expect(r[4]!.body).toContain('home page');
    // The SPA rule answers unknown paths too (routed by the lane on first sight, then remembered).
    expect(r[5]!.body).toContain('home page');
    expect(lane().answered).toBe(answered + 6);
  });

  it('answers a long pipeline in order without losing a response', async () => {
    const s = await connect(t.port);
    const n = 300;
    let batch = '';
    for (let i = 0; i < n; i++) batch += get(i % 3 === 0 ? '/app.css' : i % 3 === 1 ? '/old' : '/docs/');
    s.write(batch);
    const r = await readResponses(s, n);
    s.destroy();
    r.forEach((res, i) => {
      if (i % 3 === 0) expect(res.body).toBe(site['app.css']);
      else if (i % 3 === 1) expect(res.headers.location).toBe('/index.html');
      else expect(res.body).toBe(site['docs/index.html']);
    });
  });

  it('hands a connection to node:http mid-way without losing or reordering bytes', async () => {
    const warm = await connect(t.port);
    warm.write(get('/app.css'));
    await readResponses(warm, 1);
    warm.destroy();

    const s = await connect(t.port);
    const answered = lane().answered;
    // A warm GET, then a POST with a body (405 from node:http), then a GET, pipelined in one write.
    s.write(
      `${get('/app.css')}POST /app.css HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 5\r\n\r\nhello${get('/app.css')}`,
    );
    const r = await readResponses(s, 3);
    expect(r.map((x) => x.status)).toEqual([200, 405, 200]);
    expect(r[1]!.headers.allow).toBe('GET, HEAD');
    expect(r[2]!.body).toBe(site['app.css']);
    expect(lane().answered).toBe(answered + 1);
    // The connection stays usable under node:http.
    s.write(get('/app.css'));
    const [again] = await readResponses(s, 1);
    expect(again!.status).toBe(200);
    s.destroy();
  });

  it('waits for a head split across packets and answers ranges through node:http', async () => {
    const s = await connect(t.port);
    s.write('GET /app.css HT');
    await new Promise((r) => setTimeout(r, 50));
    s.write(`TP/1.1\r\nHost: ${HOST}\r\n`);
    await new Promise((r) => setTimeout(r, 50));
    s.write('\r\n');
    const [whole] = await readResponses(s, 1);
    expect(whole!.body).toBe(site['app.css']);
    s.write(get('/app.css', 'Range: bytes=0-3\r\n'));
    const [part] = await readResponses(s, 1);
    expect(part!.status).toBe(206);
    expect(part!.body).toBe('body');
    s.destroy();
  });

  it('leaves a head with bare-LF line ends to node:http instead of waiting for CRLF', async () => {
    const s = await connect(t.port);
    s.write(`GET /app.css HTTP/1.1\nHost: ${HOST}\n\n`);
    const [res] = await readResponses(s, 1);
    expect([200, 400]).toContain(res!.status);
    s.destroy();
  });

  it('closes after Connection: close and HTTP/1.0 without keep-alive', async () => {
    for (const req of [
      get('/app.css', 'Connection: close\r\n'),
      `GET /app.css HTTP/1.0\r\nHost: ${HOST}\r\n\r\n`,
    ]) {
      const s = await connect(t.port);
      const closed = new Promise((r) => s.on('close', r));
      s.write(req);
      const [res] = await readResponses(s, 1);
      expect(res!.status).toBe(200);
      expect(res!.headers.connection).toBe('close');
      await closed;
    }
    const s = await connect(t.port);
    s.write(`GET /app.css HTTP/1.0\r\nHost: ${HOST}\r\nConnection: keep-alive\r\n\r\n`);
    const [kept] = await readResponses(s, 1);
    expect(kept!.headers.connection).toBe('keep-alive');
    s.write(`GET /app.css HTTP/1.0\r\nHost: ${HOST}\r\nConnection: keep-alive\r\n\r\n`);
    expect((await readResponses(s, 1))[0]!.status).toBe(200);
    s.destroy();
  });

  it('leaves API hosts, malformed heads and oversized heads to node:http', async () => {
    const api = await connect(t.port);
    api.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const [ready] = await readResponses(api, 1);
    expect(ready!.status).toBe(200);
    api.destroy();

    for (const [raw, status] of [
      [`GET /app.css HTTP/1.1\r\nHost: ${HOST}\r\nX-Bad: a\x01b\r\n\r\n`, 400],
      [
        `GET /app.css HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n`,
        400,
      ],
      [`GET /app.css HTTP/1.1\r\nHost: ${HOST}\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ] as const) {
      const s = await connect(t.port);
      s.write(raw);
      const [res] = await readResponses(s, 1);
      expect(res!.status).toBe(status);
      s.destroy();
    }
  });
});

it('closes idle lane connections promptly when the server stops', async () => {
  const t = await startServer();
  const space = await createSpace(t, undefined, { slug: 'lane-site', access: 'public' });
  await publishViaVersions(t, space.id, site);
  const warm = await connect(t.port);
  warm.write(get('/app.css'));
  await readResponses(warm, 1);
  const idle = await connect(t.port);
  idle.write(get('/app.css'));
  await readResponses(idle, 1);
  expect(t.server.fastLane!.connections).toBeGreaterThan(0);
  const closed = new Promise((r) => idle.on('close', r));
  const started = Date.now();
  await t.close();
  await closed;
  expect(Date.now() - started).toBeLessThan(3000);
  warm.destroy();
});
