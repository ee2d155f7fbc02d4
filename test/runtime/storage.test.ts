import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

/**
 * `env.STORAGE` end to end (behaviour §11): uploads from a handler in real workerd, the type and size
 * rules, get/delete, read URLs signed with a rotatable key, objects outliving a publish, the owner's
 * API, and one space's code unable to read or delete another space's objects by id.
 */

const HANDLER = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const id = url.searchParams.get('id');
    try {
      if (url.pathname === '/up') {
        const type = request.headers.get('content-type');
        return Response.json(await env.STORAGE.upload(await request.arrayBuffer(), type ? { contentType: type } : {}));
      }
      if (url.pathname === '/up-text') return Response.json(await env.STORAGE.upload('plain words'));
      if (url.pathname === '/get') {
        const r = await env.STORAGE.get(id);
        return new Response(r.body, { status: r.status, headers: { 'content-type': r.headers.get('content-type') ?? '' } });
      }
      if (url.pathname === '/del') return Response.json({ deleted: await env.STORAGE.delete(id) });
      if (url.pathname === '/env') return Response.json({ keys: Object.keys(env), storage: Object.keys(env.STORAGE).sort() });
    } catch (e) {
      return Response.json({ error: e.message, code: e.code ?? null }, { status: 400 });
    }
    return new Response('nothing', { status: 404 });
  },
};
`;

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da6364f8ff3f0005fe02fea7d6a3a90000000049454e44ae426082',
  'hex',
);

describeEachDb('env.STORAGE', (db) => {
  let t: TestServer;
  const site = {
    'index.html': 'home',
    'handler.js': HANDLER,
    'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
  };
  let a: { id: string; slug: string };
  let b: { id: string; slug: string };
  beforeAll(async () => {
    t = await startServer({ db });
    a = await createSpace(t, undefined, { slug: `store-a-${db[0]}`, access: 'public' });
    b = await createSpace(t, undefined, { slug: `store-b-${db[0]}`, access: 'public' });
    await publishViaVersions(t, a.id, site);
    await publishViaVersions(t, b.id, site);
  });
  afterAll(async () => {
    await t?.close();
  });

  const fn = (space: { slug: string }, path: string, init: { raw?: Buffer | string; type?: string } = {}) =>
    t.api(init.raw === undefined ? 'GET' : 'POST', path, {
      token: null,
      host: `${space.slug}.localhost`,
      ...(init.raw !== undefined ? { raw: init.raw } : {}),
      headers: init.type ? { 'content-type': init.type } : {},
    });
  /** The bytes of a GET (the API helper decodes bodies as text). */
  const bytes = async (path: string, host?: string) => {
    const r = await request(`${t.url}${path}`, { headers: host ? { host } : {} });
    return { status: r.statusCode, headers: r.headers, raw: Buffer.from(await r.body.arrayBuffer()) };
  };
  const open = (url: string) => {
    const u = new URL(url);
    return t.api('GET', u.pathname + u.search, { token: null });
  };

  it('uploads, reads, deletes; refuses empty, oversized, HTML, SVG, scripts and executables', async () => {
    const env = await fn(a, '/env');
    expect(env.body).toEqual({ keys: ['DB', 'STORAGE'], storage: ['delete', 'get', 'upload'] });

    const up = await fn(a, '/up', { raw: PNG });
    expect(up.status, up.text).toBe(200);
    expect(up.body).toMatchObject({ contentType: 'image/png', size: PNG.length });
    expect(up.body.id).toMatch(/^[0-9a-f]{32}$/);
    const read = await bytes(new URL(up.body.url).pathname + new URL(up.body.url).search);
    expect(read.status).toBe(200);
    expect(read.headers['content-type']).toBe('image/png');
    expect(read.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.from(read.raw).equals(PNG)).toBe(true);
    const got = await bytes(`/get?id=${up.body.id}`, `${a.slug}.localhost`);
    expect(got.headers['content-type']).toBe('image/png');
    expect(Buffer.from(got.raw).equals(PNG)).toBe(true);
    // A string body: workerd's fetch declares text/plain, which is kept.
    const text = (await fn(a, '/up-text')).body;
    expect(text.size).toBe(11);
    expect(text.contentType).toMatch(/^text\/plain; ?charset=utf-8$/i);

    const refused = async (raw: Buffer | string, type: string | undefined, code: string) => {
      const r = await fn(a, '/up', { raw, ...(type ? { type } : {}) });
      expect(r.status, `${type}: ${r.text}`).toBe(400);
      expect(r.body.code).toBe(code);
    };
    await refused('<p>hi</p>', 'text/html', 'storage_type_refused');
    await refused('<!DOCTYPE html><p>hi', 'text/plain', 'storage_type_refused');
    await refused('<svg xmlns="http://www.w3.org/2000/svg"/>', 'image/png', 'storage_type_refused');
    await refused('alert(1)', 'application/javascript', 'storage_type_refused');
    await refused('<?php echo 1;', 'text/plain', 'storage_type_refused');
    await refused(
      Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]),
      'application/octet-stream',
      'storage_type_refused',
    );
    await refused('#!/bin/sh\nrm -rf /', undefined, 'storage_type_refused');
    await refused('', 'text/plain', 'storage_object_empty');
    await refused(
      Buffer.alloc(5 * 1024 * 1024 + 1, 1),
      'application/octet-stream',
      'storage_object_too_large',
    );

    expect((await fn(a, `/del?id=${up.body.id}`)).body).toEqual({ deleted: true });
    expect((await fn(a, `/get?id=${up.body.id}`)).status).toBe(404);
    expect((await fn(a, `/del?id=${up.body.id}`)).body).toEqual({ deleted: false });
    expect((await open(up.body.url)).status).toBe(404);
  });

  it('keeps objects across publishes; one space’s code cannot reach another’s objects', async () => {
    const up = await fn(a, '/up', { raw: PNG });
    const id = up.body.id as string;
    await publishViaVersions(t, a.id, { ...site, 'index.html': 'home v2' });
    expect((await fn(a, '/')).text).toBe('home v2');
    expect((await fn(a, `/get?id=${id}`)).status).toBe(200);
    // Space b names a's object: not found, not deleted.
    expect((await fn(b, `/get?id=${id}`)).status).toBe(404);
    expect((await fn(b, `/del?id=${id}`)).body).toEqual({ deleted: false });
    expect((await fn(a, `/get?id=${id}`)).status).toBe(200);
    // A read URL of a's object does not open under b's id.
    const u = new URL(up.body.url);
    expect((await t.api('GET', u.pathname.replace(a.id, b.id) + u.search, { token: null })).status).toBe(404);
  });

  it('the owner lists and deletes objects; rotating the read key ends old URLs', async () => {
    const up = await fn(a, '/up', { raw: PNG });
    const list = await t.api('GET', `/v1/spaces/${a.id}/storage?limit=100`);
    expect(list.status).toBe(200);
    const mine = list.body.data.find((o: { id: string }) => o.id === up.body.id);
    expect(mine).toMatchObject({ contentType: 'image/png', size: PNG.length, url: up.body.url });
    expect((await t.api('GET', `/v1/spaces/${b.id}/storage`)).body.data).toEqual([]);

    const rotated = await t.api('POST', `/v1/spaces/${a.id}/storage/rotate-read-key`);
    expect(rotated.status).toBe(200);
    expect((await open(up.body.url)).status).toBe(404);
    const fresh = (await t.api('GET', `/v1/spaces/${a.id}/storage?limit=100`)).body.data.find(
      (o: { id: string }) => o.id === up.body.id,
    );
    expect(fresh.url).not.toBe(up.body.url);
    expect((await open(fresh.url)).status).toBe(200);

    expect((await t.api('DELETE', `/v1/spaces/${a.id}/storage/${up.body.id}`)).status).toBe(204);
    expect((await fn(a, `/get?id=${up.body.id}`)).status).toBe(404);
    const again = await t.api('DELETE', `/v1/spaces/${a.id}/storage/${up.body.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('storage_object_not_found');
  });
});
