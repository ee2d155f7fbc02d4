import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cli, cliEnv } from '../cli/helpers.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * Runtime logs end to end: a real workerd's tail worker posts each request's trace to the server's
 * log sink; the lines (console levels, objects as JSON, uncaught exceptions with their stack) carry
 * the request's id, which the answer names too; filters, paging, follow, and one space's lines never
 * in another's log.
 */

const HANDLER = `
export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/throw') throw new TypeError('the widget is missing');
    console.log('hello from', url.pathname, { n: 1 });
    console.warn('careful');
    console.error('it broke', 42);
    return new Response('ok');
  },
};
`;

describeEachDb('runtime logs', (db) => {
  let t: TestServer;
  let space: { id: string; slug: string };
  let other: { id: string; slug: string };
  beforeAll(async () => {
    t = await startServer({ db });
    const site = {
      'index.html': 'home',
      'handler.js': HANDLER,
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
    };
    space = await createSpace(t, undefined, { slug: `rtlog-${db[0]}`, access: 'public' });
    other = await createSpace(t, undefined, { slug: `rtlog-other-${db[0]}`, access: 'public' });
    await publishViaVersions(t, space.id, site);
    await publishViaVersions(t, other.id, site);
  });
  afterAll(async () => {
    await t?.close();
  });

  const logs = async (spaceId: string, query = '') =>
    (await t.api('GET', `/v1/spaces/${spaceId}/logs/runtime${query}`)).body;
  async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
    const end = Date.now() + 10_000;
    for (;;) {
      const v = await fn();
      if (ok(v)) return v;
      if (Date.now() > end) throw new Error(`not yet: ${JSON.stringify(v).slice(0, 500)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('keeps each request’s console lines and exceptions under the id its answer names', async () => {
    const host = `${space.slug}.localhost`;
    const r = await t.api('GET', '/api/a?x=1', { token: null, host, headers: { 'x-request-id': 'spoofed' } });
    expect(r.status).toBe(200);
    const id = r.headers['x-request-id'] as string;
    expect(id).toMatch(/^rid_/);
    const page = await until(
      () => logs(space.id, `?requestId=${id}`),
      (b) => b.data?.length === 3,
    );
    // Newest first.
    expect(page.data.map((l: { level: string; message: string }) => [l.level, l.message])).toEqual([
      ['error', 'it broke 42'],
      ['warn', 'careful'],
      ['log', 'hello from /api/a {"n":1}'],
    ]);
    expect(page.data[0]).toMatchObject({
      requestId: id,
      method: 'GET',
      path: '/api/a?x=1',
      status: 200,
      outcome: 'ok',
    });
    expect((await logs(space.id, '?requestId=spoofed')).data).toEqual([]);

    const thrown = await t.api('GET', '/throw', { token: null, host });
    expect(thrown.status).toBe(500);
    const tid = thrown.headers['x-request-id'] as string;
    const err = await until(
      () => logs(space.id, `?requestId=${tid}`),
      (b) => b.data?.length >= 1,
    );
    expect(err.data[0].level).toBe('error');
    expect(err.data[0].message).toContain('TypeError: the widget is missing');
    expect(err.data[0].outcome).toBe('exception');

    // Level filter and paging.
    const errors = await logs(space.id, '?level=error');
    expect(errors.data.every((l: { level: string }) => l.level === 'error')).toBe(true);
    const first = await logs(space.id, '?limit=2');
    expect(first.data).toHaveLength(2);
    const next = await logs(space.id, `?limit=2&cursor=${encodeURIComponent(first.pagination.nextCursor)}`);
    expect(next.data[0].id < first.data[1].id).toBe(true);

    // The other space ran the same code: none of these lines are in its log, and none of its in ours.
    const o = await t.api('GET', '/api/b', { token: null, host: `${other.slug}.localhost` });
    const oid = o.headers['x-request-id'] as string;
    await until(
      () => logs(other.id),
      (b) => b.data?.length === 3,
    );
    const otherLines = (await logs(other.id)).data;
    expect(otherLines.every((l: { requestId: string }) => l.requestId === oid)).toBe(true);
    expect((await logs(space.id, `?requestId=${oid}`)).data).toEqual([]);
    const bad = await t.api('GET', `/v1/spaces/${space.id}/logs/runtime?level=fatal`);
    expect(bad.status).toBe(400);
  });

  it('names the route module that answered, and filters by it', async () => {
    const routed = await createSpace(t, undefined, { slug: `rtlog-routes-${db[0]}`, access: 'public' });
    await publishViaVersions(t, routed.id, {
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
      'functions/users/[id].ts':
        "export const onRequest = ({ params }) => { console.log('user', params.id); return new Response('u'); };",
      'functions/users/new.ts':
        "export const onRequest = () => { console.log('new user form'); return new Response('n'); };",
    });
    const host = `${routed.slug}.localhost`;
    await t.api('GET', '/users/7', { token: null, host });
    await t.api('GET', '/users/new', { token: null, host });
    const all = await until(
      () => logs(routed.id),
      (b) => b.data?.length === 2,
    );
    expect(all.data.map((l: { handler: string; message: string }) => [l.handler, l.message]).sort()).toEqual([
      ['/users/:id', 'user 7'],
      ['/users/new', 'new user form'],
    ]);
    const one = await logs(routed.id, `?handler=${encodeURIComponent('/users/:id')}`);
    expect(one.data.map((l: { message: string }) => l.message)).toEqual(['user 7']);
  });

  it('`spaces logs --runtime` lists them, filtered by level', async () => {
    const r = await t.api('GET', '/api/cli', { token: null, host: `${space.slug}.localhost` });
    const id = r.headers['x-request-id'] as string;
    await until(
      () => logs(space.id, `?requestId=${id}`),
      (b) => b.data?.length === 3,
    );
    const env = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey } };
    const out = await cli(env, ['logs', space.id, '--runtime', '--request-id', id]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('hello from /api/cli {"n":1}');
    expect(out.stdout).toContain('handler.js');
    const errors = await cli(env, [
      'logs',
      space.id,
      '--runtime',
      '--request-id',
      id,
      '--level',
      'error',
      '--json',
    ]);
    expect(errors.code, errors.stderr).toBe(0);
    expect(JSON.parse(errors.stdout).map((l: { message: string }) => l.message)).toEqual(['it broke 42']);
  });

  it('follows new lines as NDJSON', async () => {
    const url = new URL(`${t.url}/v1/spaces/${space.id}/logs/runtime?follow=true`);
    const got: string[] = [];
    const req = http.get(url, { headers: { authorization: `Bearer ${t.ownerKey}` } });
    const done = new Promise<void>((resolve, reject) => {
      req.on('response', (res) => {
        expect(res.headers['content-type']).toContain('application/x-ndjson');
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          got.push(...chunk.split('\n').filter(Boolean));
          if (got.some((l) => l.includes('/api/followed'))) resolve();
        });
      });
      req.on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 300));
    await t.api('GET', '/api/followed', { token: null, host: `${space.slug}.localhost` });
    await done;
    req.destroy();
    const line = JSON.parse(got.find((l) => l.includes('/api/followed'))!);
    expect(line).toMatchObject({ level: 'log', path: '/api/followed' });
  });
});
