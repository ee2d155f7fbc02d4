import type { IncomingMessage } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkAddress,
  createSafeDispatcher,
  EMPTY_ALLOW_LIST,
  forbiddenAddressReason,
  type ProxyOptions,
  parseProxyAllowList,
  proxyRequest,
  sanitizeSetCookie,
  upstreamRequestHeaders,
  visitorResponseHeaders,
} from '../../src/serve/proxy.ts';
import { get, type Served, serve } from './helpers.ts';

describe('address policy', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::',
    '[::1]',
  ])('refuses %s', (ip) => {
    expect(forbiddenAddressReason(ip)).not.toBeNull();
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    'allows public %s',
    (ip) => {
      expect(forbiddenAddressReason(ip)).toBeNull();
    },
  );

  it('parses the operator allow-list', () => {
    const allow = parseProxyAllowList(
      '10.0.0.0/8, 127.0.0.1:4000 [::1]:5000,192.168.5.5 intranet.local:8443',
    );
    expect(checkAddress('10.9.9.9', 80, allow)).toBeNull();
    expect(checkAddress('192.168.5.5', 1, allow)).toBeNull();
    expect(checkAddress('192.168.5.6', 1, allow)).not.toBeNull();
    expect(checkAddress('127.0.0.1', 4000, allow)).toBeNull();
    expect(checkAddress('127.0.0.1', 4001, allow)).not.toBeNull();
    expect(checkAddress('::ffff:127.0.0.1', 4000, allow)).toBeNull();
    expect(checkAddress('::1', 5000, allow)).toBeNull();
    expect(checkAddress('172.20.0.1', 8443, allow, 'intranet.local')).toBeNull();
    expect(checkAddress('172.20.0.1', 8443, allow, 'other.local')).not.toBeNull();
    expect(() => parseProxyAllowList('not an entry!')).toThrow(/SPACES_PROXY_ALLOW/);
    expect(() => parseProxyAllowList('10.0.0.0/99')).toThrow(/CIDR/);
    expect(() => parseProxyAllowList('host:99999')).toThrow();
    expect(parseProxyAllowList('')).toEqual({ cidrs: [], hostPorts: new Set() });
  });
});

describe('header hygiene', () => {
  const opts = { clientIp: '203.0.113.9', proto: 'https', host: 'site.example' } as ProxyOptions;
  it('strips hop-by-hop and Connection-named headers, sets Host and X-Forwarded-*', () => {
    const req = {
      rawHeaders: [
        'Host',
        'site.example',
        'Connection',
        'keep-alive, X-Secret',
        'Keep-Alive',
        'timeout=5',
        'TE',
        'trailers',
        'Upgrade',
        'websocket',
        'Proxy-Authorization',
        'Basic x',
        'X-Secret',
        'hush',
        'X-Forwarded-Host',
        'spoofed',
        'Accept',
        'text/html',
        'Cookie',
        '__spaces_challenge=abc; theme=dark',
      ],
      headers: {
        connection: 'keep-alive, X-Secret',
        'x-forwarded-for': '1.2.3.4',
        cookie: '__spaces_challenge=abc; theme=dark',
      },
    } as unknown as IncomingMessage;
    const h = upstreamRequestHeaders(req, new URL('https://api.example.com:8443/x'), opts);
    expect(h).toEqual({
      accept: 'text/html',
      cookie: 'theme=dark',
      host: 'api.example.com:8443',
      'x-forwarded-for': '1.2.3.4, 203.0.113.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'site.example',
    });
  });

  it('never passes a visitor’s X-Service-Authorization or __Host-spaces cookies; sends the edge’s own', () => {
    const req = {
      rawHeaders: [
        'X-Service-Authorization',
        'Bearer forged.forged.forged',
        'Authorization',
        'Bearer visitor-own',
        'Cookie',
        '__Host-spaces-session=s; __Host-spaces-door=d; theme=dark',
      ],
      headers: { cookie: '__Host-spaces-session=s; __Host-spaces-door=d; theme=dark' },
    } as unknown as IncomingMessage;
    const without = upstreamRequestHeaders(req, new URL('https://api.example.com/x'), opts);
    expect(without['x-service-authorization']).toBeUndefined();
    expect(without.authorization).toBe('Bearer visitor-own');
    expect(without.cookie).toBe('theme=dark');
    const withToken = upstreamRequestHeaders(req, new URL('https://api.example.com/x'), {
      ...opts,
      serviceAuthorization: 'Bearer edge.minted.token',
    });
    expect(withToken['x-service-authorization']).toBe('Bearer edge.minted.token');
    expect(sanitizeSetCookie('__Host-spaces-door=x; Path=/; Secure')).toBeNull();
  });

  it('cleans upstream response headers and applies the cache option', () => {
    const up = {
      connection: 'close, x-internal',
      'x-internal': '1',
      'transfer-encoding': 'chunked',
      'keep-alive': 'timeout=5',
      'proxy-authenticate': 'Basic',
      'content-type': 'text/plain',
      'cache-control': 'public, max-age=60, s-maxage=600',
      'set-cookie': ['a=1; Domain=.example.com; Path=/', '__spaces_access=forged; Path=/'],
    };
    const priv = visitorResponseHeaders(up, 'private');
    expect(priv).toEqual([
      'content-type',
      'text/plain',
      'Set-Cookie',
      'a=1; Path=/',
      'Cache-Control',
      'private, max-age=60',
    ]);
    const shared = visitorResponseHeaders(up, 'shared');
    expect(shared).toContain('public, max-age=60, s-maxage=600');
    expect(visitorResponseHeaders({}, 'private')).toEqual(['Cache-Control', 'private']);
    expect(sanitizeSetCookie('x=1; domain=evil; HttpOnly')).toBe('x=1; HttpOnly');
  });

  it('relays nothing outside the field grammar: such an answer is refused whole', () => {
    for (const bad of ['a\r\nSet-Cookie: x=1', 'a\u0000', 'a\u010d\u010ab', 'a\u2028']) {
      expect(visitorResponseHeaders({ 'x-a': bad }, 'private')).toBeNull();
      expect(visitorResponseHeaders({ 'set-cookie': [`s=${bad}`] }, 'private')).toBeNull();
    }
    expect(visitorResponseHeaders({ 'x a': '1' }, 'private')).toBeNull();
    // Latin-1 (obs-text) is valid HTTP and passes as it came.
    expect(visitorResponseHeaders({ 'x-a': 'café' }, 'private')).toEqual([
      'x-a',
      'café',
      'Cache-Control',
      'private',
    ]);
  });
});

describe('proxyRequest over HTTP', () => {
  let upstream: Served;
  let edge: Served;
  let target = '';
  let options: Partial<ProxyOptions> = {};
  let seen: IncomingMessage | null = null;
  let seenBody = '';
  const dispatchers: Array<ReturnType<typeof createSafeDispatcher>> = [];

  beforeAll(async () => {
    upstream = await serve((req, res) => {
      seen = req;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seenBody = Buffer.concat(chunks).toString();
        if (req.url === '/redirect') {
          res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
          res.end();
          return;
        }
        if (req.url === '/slow') {
          setTimeout(() => res.end('late'), 2000);
          return;
        }
        if (req.url === '/big') {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '50000' });
          res.end(Buffer.alloc(50_000));
          return;
        }
        if (req.url === '/bigstream') {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          for (let i = 0; i < 10; i++) res.write(Buffer.alloc(5000));
          res.end();
          return;
        }
        res.writeHead(201, {
          'content-type': 'text/plain',
          connection: 'close',
          'set-cookie': 'u=1; Domain=localhost; Path=/',
          'cache-control': 'public, max-age=30',
        });
        res.end(`upstream saw ${req.method} ${req.url}`);
      });
    });
    const allow = parseProxyAllowList(`127.0.0.1:${upstream.port}`);
    const allowed = createSafeDispatcher({ allow });
    dispatchers.push(allowed);
    edge = await serve((req, res) => {
      void proxyRequest(req, res, {
        target: target || `http://127.0.0.1:${upstream.port}${req.url}`,
        dispatcher: allowed,
        allow,
        clientIp: '198.51.100.7',
        proto: 'http',
        host: 'site.localhost',
        ...options,
      });
    });
  });
  afterAll(async () => {
    await edge.close();
    await upstream.close();
    for (const d of dispatchers) await d.close();
  });

  it('relays an allow-listed loopback upstream both ways', async () => {
    target = '';
    options = {};
    const r = await get(`${edge.url}/api/x?q=1`, {
      method: 'POST',
      body: 'hello body',
      headers: { 'content-type': 'text/plain', connection: 'keep-alive', 'x-forwarded-for': '10.0.0.1' },
    });
    expect(r.status).toBe(201);
    expect(r.body.toString()).toBe('upstream saw POST /api/x?q=1');
    expect(seenBody).toBe('hello body');
    expect(seen!.headers.host).toBe(`127.0.0.1:${upstream.port}`);
    expect(seen!.headers['x-forwarded-for']).toBe('10.0.0.1, 198.51.100.7');
    expect(seen!.headers['x-forwarded-host']).toBe('site.localhost');
    expect(seen!.headers['x-forwarded-proto']).toBe('http');
    expect(r.headers['set-cookie']).toEqual(['u=1; Path=/']);
    expect(r.headers['cache-control']).toBe('private, max-age=30');
  });

  it('passes upstream Cache-Control through with cache: shared', async () => {
    options = { cache: 'shared' };
    const r = await get(`${edge.url}/c`);
    expect(r.headers['cache-control']).toBe('public, max-age=30');
    options = {};
  });

  it('passes redirects back instead of following them', async () => {
    const r = await get(`${edge.url}/redirect`);
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('http://169.254.169.254/latest/meta-data/');
  });

  it('caps the response size and times out', async () => {
    options = { maxResponseBytes: 10_000 };
    const big = await get(`${edge.url}/big`, { headers: { accept: 'application/json' } });
    expect(big.status).toBe(502);
    expect(JSON.parse(big.body.toString())).toMatchObject({ code: 'upstream_failed' });
    // Without a declared length the cap hits mid-body: the headers are out, so the connection is cut.
    await expect(get(`${edge.url}/bigstream`)).rejects.toThrow(/socket hang up|aborted/);
    options = { timeoutMs: 200 };
    const slow = await get(`${edge.url}/slow`);
    expect(slow.status).toBe(504);
    options = {};
  });

  it.each([
    ['127.0.0.1', (p: number) => `http://127.0.0.1:${p + 1}/`],
    ['[::ffff:127.0.0.1]', (p: number) => `http://[::ffff:127.0.0.1]:${p + 1}/`],
    ['0x7f000001', (p: number) => `http://0x7f000001:${p + 1}/`],
    ['2130706433', (p: number) => `http://2130706433:${p + 1}/`],
    ['127.1', (p: number) => `http://127.1:${p + 1}/`],
    ['0177.0.0.1', (p: number) => `http://0177.0.0.1:${p + 1}/`],
    ['[::1]', (p: number) => `http://[::1]:${p + 1}/`],
    ['10.0.0.1', () => 'http://10.0.0.1/'],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/'],
    ['[fd00:ec2::254]', () => 'http://[fd00:ec2::254]/'],
    ['localhost (resolves to loopback)', (p: number) => `http://localhost:${p + 1}/`],
  ])('refuses %s', async (_name, make) => {
    target = make(upstream.port);
    seen = null;
    const r = await get(`${edge.url}/`, { headers: { accept: 'text/html' } });
    expect(r.status).toBe(502);
    expect(r.body.toString()).toContain('not a public address');
    expect(seen).toBeNull();
    target = '';
  });

  it('checks the resolved address at connect time, not only the URL text', async () => {
    const d = createSafeDispatcher({
      resolve: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
    });
    dispatchers.push(d);
    await expect(request(`http://rebind.test:${upstream.port}/`, { dispatcher: d })).rejects.toMatchObject({
      code: 'OUTBOUND_TARGET_REFUSED',
    });
    const bare = createSafeDispatcher({ allow: EMPTY_ALLOW_LIST });
    dispatchers.push(bare);
    await expect(request(`http://127.0.0.1:${upstream.port}/`, { dispatcher: bare })).rejects.toMatchObject({
      code: 'OUTBOUND_TARGET_REFUSED',
    });
    await expect(request(`http://localhost:${upstream.port}/`, { dispatcher: bare })).rejects.toMatchObject({
      code: 'OUTBOUND_TARGET_REFUSED',
    });
    // A name that resolves (via the injected resolver) to the allow-listed address works.
    const named = createSafeDispatcher({
      allow: parseProxyAllowList(`127.0.0.1:${upstream.port}`),
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    dispatchers.push(named);
    const ok = await request(`http://upstream.test:${upstream.port}/named`, { dispatcher: named });
    expect(ok.statusCode).toBe(201);
    expect(await ok.body.text()).toBe('upstream saw GET /named');
    expect(seen!.headers.host).toBe(`upstream.test:${upstream.port}`);
  });

  it('refuses non-http targets and credentials', async () => {
    for (const t of ['ftp://example.com/', 'http://user:pw@example.com/', 'not a url']) {
      target = t;
      const r = await get(`${edge.url}/`);
      expect(r.status, t).toBe(502);
    }
    target = '';
  });
});
