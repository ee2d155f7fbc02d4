/**
 * Functions served by real workerd processes (issue 26), through the real server on port 0: static
 * files first, misses on claimed routes to the worker, unclaimed paths 404 without waking it, bodies
 * streamed both ways, variables and secrets as `env`, the wall-clock limit, crash restart, outbound
 * fetch (refused without the capability, SSRF-guarded with it), isolation between spaces, and no
 * workerd left behind when the server closes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { edgeRuntime } from '../../src/serve/runtime.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const runtimeOf = (t: TestServer) => edgeRuntime(t.server.services);

const HANDLER = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/env') return Response.json({ GREETING: env.GREETING ?? null, TOKEN: env.TOKEN ?? null, OTHER: env.OTHER_SECRET ?? null, keys: Object.keys(env).sort() });
    if (url.pathname === '/echo') return new Response(request.body, { headers: { 'x-method': request.method } });
    if (url.pathname === '/stream') {
      let i = 0;
      const body = new ReadableStream({ async pull(c) { if (i++ >= 5) return c.close(); c.enqueue(new TextEncoder().encode('chunk' + i + '\\n')); await new Promise((r) => setTimeout(r, 20)); } });
      return new Response(body);
    }
    if (url.pathname === '/loop') { for (;;) {} }
    if (url.pathname === '/crash') { return new Response(String(globalThis.process?.pid ?? 'no process')); }
    if (url.pathname === '/fetch') {
      try { const r = await fetch(url.searchParams.get('u')); return new Response('fetched ' + r.status + ' ' + (r.headers.get('x-spaces-outbound-refused') ?? '') + ' ' + (await r.text())); }
      catch (e) { return new Response('fetch failed: ' + e.message, { status: 502 }); }
    }
    if (url.pathname === '/read') {
      try { const r = await fetch(url.searchParams.get('u')); return new Response(await r.text(), { status: r.status }); }
      catch (e) { return new Response('fetch failed: ' + e.message, { status: 502 }); }
    }
    return new Response('handler ' + url.pathname);
  },
};
`;

describeEachDb('functions in workerd', (db) => {
  let t: TestServer;
  let local: http.Server;
  let localUrl: string;
  let hits = 0;
  beforeAll(async () => {
    t = await startServer({ db, env: { SPACES_FUNCTIONS_TIMEOUT_MS: '1500' } });
    local = http.createServer((_q, s) => {
      hits++;
      s.end('private data');
    });
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
    localUrl = `http://127.0.0.1:${(local.address() as AddressInfo).port}/secret`;
  });
  afterAll(async () => {
    local.close();
    await t?.close();
  });

  const get = (host: string, path: string) => t.api('GET', path, { token: null, host });

  it('answers /api/hello from functions/ while static files keep being served', async () => {
    const space = await createSpace(t, undefined, { slug: 'fn-hello', access: 'public' });
    await publishViaVersions(t, space.id, {
      'index.html': '<h1>static home</h1>',
      'api/static.txt': 'a static file under a function directory',
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
      'functions/api/hello.ts':
        "export const onRequestGet = ({ request }: { request: Request }) => new Response('hello from ' + new URL(request.url).pathname, { headers: { 'x-fn': '1' } });",
      'functions/users/[id].ts':
        'export const onRequest = ({ params }: { params: Record<string, string> }) => Response.json(params);',
    });
    const host = 'fn-hello.localhost';
    const hello = await get(host, '/api/hello');
    expect(hello.status).toBe(200);
    expect(hello.text).toBe('hello from /api/hello');
    expect(hello.headers['x-fn']).toBe('1');
    expect((await get(host, '/users/42')).body).toEqual({ id: '42' });
    expect((await get(host, '/')).text).toContain('static home');
    expect((await get(host, '/api/static.txt')).text).toContain('a static file');
    // Another method on a route without its handler: the module answers 405.
    expect((await t.api('POST', '/api/hello', { token: null, host, raw: 'x' })).status).toBe(405);
    // An unclaimed path is the static 404 and starts no process.
    const before = runtimeOf(t).pool.pids().size;
    expect((await get(host, '/nothing/here')).status).toBe(404);
    expect(runtimeOf(t).pool.pids().size).toBe(before);
  });

  it('runs _middleware modules around the routes of their folders, outermost first', async () => {
    const space = await createSpace(t, undefined, { slug: 'fn-mw', access: 'public' });
    await publishViaVersions(t, space.id, {
      'index.html': '<h1>static home</h1>',
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
      // Root: times every function request and stamps the answer.
      'functions/_middleware.ts': `export const onRequest = async ({ next, data }) => {
        data.trail = ['root'];
        const res = await next();
        const out = new Response(res.body, res);
        out.headers.set('x-mw', data.trail.join('>'));
        return out;
      };`,
      // /api: an array of handlers; the second refuses without a key, short-circuiting the route.
      'functions/api/_middleware.ts': `export const onRequest = [
        ({ next, data }) => { data.trail.push('api'); return next(); },
        ({ request, next, data }) => {
          if (request.headers.get('x-key') !== 'k') return new Response('no key', { status: 401 });
          data.trail.push('auth');
          return next();
        },
      ];`,
      'functions/api/who.ts':
        'export const onRequestGet = ({ data, params }) => Response.json({ trail: data.trail, params });',
      'functions/hello.ts':
        "export const onRequest = ({ data }) => new Response('hi ' + data.trail.join(','));",
    });
    const host = 'fn-mw.localhost';
    const hi = await get(host, '/hello');
    expect(hi.text).toBe('hi root');
    expect(hi.headers['x-mw']).toBe('root');
    const denied = await get(host, '/api/who');
    expect(denied.status).toBe(401);
    expect(denied.text).toBe('no key');
    expect(denied.headers['x-mw']).toBe('root>api');
    const ok = await t.api('GET', '/api/who', { token: null, host, headers: { 'x-key': 'k' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ trail: ['root', 'api', 'auth'], params: {} });
    expect(ok.headers['x-mw']).toBe('root>api>auth');
    // Static files are not wrapped (static first), and no diagnostic warns about the middleware.
    const home = await get(host, '/');
    expect(home.text).toContain('static home');
    expect(home.headers['x-mw']).toBeUndefined();
    const rt = await t.api('GET', `/v1/spaces/${space.id}/runtime`);
    expect(JSON.stringify(rt.body)).not.toContain('runtime_middleware_unsupported');
  });

  let handlerHost = '';
  let handlerSpace: any;
  it('streams bodies both ways and gives variables and secrets as env', async () => {
    handlerSpace = await createSpace(t, undefined, { slug: 'fn-handler', access: 'public' });
    await t.api('PUT', `/v1/spaces/${handlerSpace.id}/variables/GREETING`, { body: { value: 'hi' } });
    await t.api('PUT', `/v1/spaces/${handlerSpace.id}/variables/TOKEN`, {
      body: { value: 's3cret', secret: true },
    });
    await publishViaVersions(t, handlerSpace.id, {
      'index.html': 'home',
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
      'handler.js': HANDLER,
    });
    handlerHost = 'fn-handler.localhost';
    const env = await get(handlerHost, '/env');
    expect(env.body).toMatchObject({ GREETING: 'hi', TOKEN: 's3cret', OTHER: null });
    const big = Buffer.alloc(3 * 1024 * 1024, 'x');
    const echo = await t.api('POST', '/echo', { token: null, host: handlerHost, raw: big });
    expect(echo.status).toBe(200);
    expect(echo.text.length).toBe(big.length);
    expect(echo.headers['x-method']).toBe('POST');
    const stream = await get(handlerHost, '/stream');
    expect(stream.text).toBe('chunk1\nchunk2\nchunk3\nchunk4\nchunk5\n');
    expect((await get(handlerHost, '/')).text).toBe('home');
    // The handler claims every path a file does not answer.
    expect((await get(handlerHost, '/anything')).text).toBe('handler /anything');
    expect((await get(handlerHost, '/handler.js')).text).toBe('handler /handler.js');
  });

  it('cuts an infinite loop at the limit, restarts the process and serves the next request', async () => {
    const before = [...runtimeOf(t).pool.pids().values()];
    const other = await get('fn-hello.localhost', '/api/hello');
    expect(other.status).toBe(200);
    const started = Date.now();
    const [loop, meanwhile] = await Promise.all([
      get(handlerHost, '/loop'),
      new Promise((r) => setTimeout(r, 300)).then(() => get('fn-hello.localhost', '/api/hello')),
    ]);
    expect(loop.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(5000);
    // Another space's worker answered while this one was wedged.
    expect(meanwhile.status).toBe(200);
    const next = await get(handlerHost, '/env');
    expect(next.status).toBe(200);
    const wedged = before.filter((pid) => !alive(pid));
    expect(wedged.length).toBe(1);
  });

  it('restarts a crashed workerd on the next request', async () => {
    expect((await get(handlerHost, '/env')).status).toBe(200);
    const old = [...runtimeOf(t).pool.pids().values()];
    for (const pid of old) process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    const again = await get(handlerHost, '/env');
    expect(again.status).toBe(200);
    expect(again.body.GREETING).toBe('hi');
    const now = [...runtimeOf(t).pool.pids().values()];
    expect(now.length).toBe(1);
    expect(old).not.toContain(now[0]);
  });

  it('refuses outbound fetch without the capability and guards it with the capability', async () => {
    const denied = await get(handlerHost, `/fetch?u=${encodeURIComponent(localUrl)}`);
    expect(denied.status).toBe(502);
    expect(denied.text).toContain('fetch failed');
    const publicDenied = await get(handlerHost, `/fetch?u=${encodeURIComponent('http://93.184.215.14/')}`);
    expect(publicDenied.status).toBe(502);

    const withFetch = await createSpace(t, undefined, { slug: 'fn-fetch', access: 'public' });
    await publishViaVersions(t, withFetch.id, {
      'index.html': 'home',
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions', capabilities: ['fetch'] } }),
      'handler.js': HANDLER,
    });
    const guarded = await get('fn-fetch.localhost', `/fetch?u=${encodeURIComponent(localUrl)}`);
    expect(guarded.text).toMatch(/^fetched 502 .*refused/);
    for (const u of ['http://169.254.169.254/latest/meta-data/', 'http://[::1]:80/', 'http://localhost/'])
      expect((await get('fn-fetch.localhost', `/fetch?u=${encodeURIComponent(u)}`)).text).toMatch(
        /^fetched 502 /,
      );
    expect(hits).toBe(0);
  });

  it('keeps one space’s worker from another’s variables and files', async () => {
    const a = await createSpace(t, undefined, { slug: 'fn-iso-a', access: 'private' });
    await t.api('PUT', `/v1/spaces/${a.id}/variables/OTHER_SECRET`, {
      body: { value: 'a-only', secret: true },
    });
    await publishViaVersions(t, a.id, { 'index.html': 'a private page', 'secret.txt': 'a file' });
    // The other space's variable is not in this worker's env.
    const env = await get(handlerHost, '/env');
    expect(env.body.OTHER).toBeNull();
    expect(env.body.keys).toEqual(['DB', 'GREETING', 'STORAGE', 'TOKEN']);
    // Its files are not reachable from inside: no outbound network, and no filesystem in workerd.
    const viaServer = await get(
      handlerHost,
      `/read?u=${encodeURIComponent(`${t.url.replace('127.0.0.1', 'fn-iso-a.localhost')}/secret.txt`)}`,
    );
    expect(viaServer.status).toBe(502);
    expect(viaServer.text).not.toContain('a file');
    const file = await get(handlerHost, `/read?u=${encodeURIComponent('file:///etc/passwd')}`);
    expect(file.text).not.toContain('root:');
    const proc = await get(handlerHost, '/crash');
    expect(proc.text).toBe('no process');
  });

  it('leaves no workerd process behind when the server closes', async () => {
    const pids = [...runtimeOf(t).pool.pids().values()];
    expect(pids.length).toBeGreaterThan(0);
    await t.close();
    for (const pid of pids) expect(alive(pid)).toBe(false);
    t = undefined as never;
  });
});
