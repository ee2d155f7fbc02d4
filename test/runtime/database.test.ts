/**
 * `env.DB` through the bindings channel (issue 26), with real workerd processes and the real server
 * on port 0: the shim hides the internal binding, rows belong to the space (they survive a new
 * publish and a rollback), `batch` is one transaction, a handler cannot reach another file
 * (ATTACH, VACUUM INTO) or leave a transaction open, and two spaces never see each other's rows.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { edgeRuntime } from '../../src/serve/runtime.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const handler = (tag: string) => `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const q = (k) => url.searchParams.get(k);
    try {
      if (url.pathname === '/keys') return Response.json(Object.keys(env).sort());
      if (url.pathname === '/setup') return Response.json(await env.DB.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE, data BLOB)'));
      if (url.pathname === '/add') return Response.json(await env.DB.prepare('INSERT INTO notes (body) VALUES (?)').bind(q('body') + ' ${tag}').run());
      if (url.pathname === '/list') return Response.json(await env.DB.prepare('SELECT id, body FROM notes ORDER BY id').all());
      if (url.pathname === '/count') return Response.json(await env.DB.prepare('SELECT count(*) AS n FROM notes').first('n'));
      if (url.pathname === '/first') return Response.json(await env.DB.prepare('SELECT body FROM notes WHERE id = ?').bind(Number(q('id'))).first());
      if (url.pathname === '/raw') return Response.json(await env.DB.prepare('SELECT id, body FROM notes ORDER BY id').raw({ columnNames: true }));
      if (url.pathname === '/blob') {
        await env.DB.prepare('INSERT INTO notes (body, data) VALUES (?, ?)').bind('blob', new Uint8Array([1, 2, 255])).run();
        return Response.json(await env.DB.prepare("SELECT data FROM notes WHERE body = 'blob'").first('data'));
      }
      if (url.pathname === '/batch') {
        const s = env.DB.prepare('INSERT INTO notes (body) VALUES (?)');
        return Response.json(await env.DB.batch([s.bind('batch one'), s.bind('batch two'), s.bind(q('third'))]));
      }
      if (url.pathname === '/sql') return Response.json(await env.DB.exec(q('sql')));
      return new Response('no route', { status: 404 });
    } catch (e) {
      return Response.json({ error: e.message, code: e.code ?? null }, { status: 500 });
    }
  },
};
`;

const site = (tag: string) => ({
  'index.html': 'home',
  'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
  'handler.js': handler(tag),
});

describeEachDb('env.DB in workerd', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(async () => {
    await t?.close();
  });
  const get = (host: string, p: string) => t.api('GET', p, { token: null, host });

  let space: any;
  const host = 'db-one.localhost';
  it('gives env.DB (not the internal binding) and runs prepared statements', async () => {
    space = await createSpace(t, undefined, { slug: 'db-one', access: 'public' });
    await publishViaVersions(t, space.id, site('v1'));
    expect((await get(host, '/keys')).body).toEqual(['DB', 'STORAGE']);
    const setup = await get(host, '/setup');
    expect(setup.status).toBe(200);
    expect(setup.body.count).toBe(1);
    const added = await get(host, '/add?body=first');
    expect(added.body).toMatchObject({
      success: true,
      results: [],
      meta: { changes: 1, last_row_id: 1, changed_db: true },
    });
    expect(added.body.meta.size_after).toBeGreaterThan(0);
    await get(host, '/add?body=second');
    const list = await get(host, '/list');
    expect(list.body.results).toEqual([
      { id: 1, body: 'first v1' },
      { id: 2, body: 'second v1' },
    ]);
    expect(list.body.meta.rows_read).toBe(2);
    expect((await get(host, '/count')).body).toBe(2);
    expect((await get(host, '/first?id=2')).body).toEqual({ body: 'second v1' });
    expect((await get(host, '/first?id=99')).body).toBeNull();
    expect((await get(host, '/raw')).body).toEqual([
      ['id', 'body'],
      [1, 'first v1'],
      [2, 'second v1'],
    ]);
    expect((await get(host, '/blob')).body).toEqual([1, 2, 255]);
    // SQL errors surface in the handler as thrown Errors with SQLite's message.
    const bad = await get(host, `/sql?sql=${encodeURIComponent('SELECT * FROM nope')}`);
    expect(bad.status).toBe(500);
    expect(bad.body.error).toContain('no such table: nope');
    // The file is the space's, under the data dir.
    expect(fs.existsSync(path.join(t.server.services.config.dataDir, 'space-db', `${space.id}.sqlite`))).toBe(
      true,
    );
  });

  it('keeps the rows across a new publish and a rollback', async () => {
    const first = (await t.api('GET', `/v1/spaces/${space.id}/versions`)).body.data;
    const v1 = first[first.length - 1].id;
    await publishViaVersions(t, space.id, site('v2'));
    await get(host, '/add?body=third');
    expect((await get(host, '/list')).body.results.map((r: any) => r.body)).toEqual([
      'first v1',
      'second v1',
      'blob',
      'third v2',
    ]);
    const back = await t.api('POST', `/v1/spaces/${space.id}/versions/${v1}/promote`, { body: {} });
    expect(back.status).toBe(200);
    await get(host, '/add?body=fourth');
    expect((await get(host, '/count')).body).toBe(5);
    expect((await get(host, '/list')).body.results.at(-1).body).toBe('fourth v1');
  });

  it('runs batch as one transaction', async () => {
    const ok = await get(host, '/batch?third=batch three');
    expect(ok.status).toBe(200);
    expect(ok.body).toHaveLength(3);
    expect(ok.body[2].meta.changes).toBe(1);
    expect((await get(host, '/count')).body).toBe(8);
    // The third statement breaks the UNIQUE constraint: none of the three stays.
    const failed = await get(host, '/batch?third=first v1');
    expect(failed.status).toBe(500);
    expect(failed.body.error).toContain('UNIQUE');
    expect((await get(host, '/count')).body).toBe(8);
  });

  it('refuses ATTACH, VACUUM INTO, load_extension and open transactions', async () => {
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'db-escape-')), 'x.db');
    const tries = [
      `ATTACH DATABASE '${outside}' AS other`,
      `attach '${outside}' as other`,
      `/* c */ VACUUM INTO '${outside}'`,
      `SELECT 1; VACUUM main INTO '${outside}'`,
      "SELECT load_extension('/tmp/x.so')",
      'BEGIN',
      'PRAGMA journal_mode = DELETE',
      'PRAGMA writable_schema = ON',
    ];
    for (const sql of tries) {
      const r = await get(host, `/sql?sql=${encodeURIComponent(sql)}`);
      expect(r.status, sql).toBe(500);
      expect(r.body.code, sql).toBe('db_statement_refused');
    }
    expect(fs.existsSync(outside)).toBe(false);
    // A keyword inside a value is only a value.
    const fine = await get(
      host,
      `/sql?sql=${encodeURIComponent("INSERT INTO notes (body) VALUES ('ATTACH or VACUUM INTO x')")}`,
    );
    expect(fine.status).toBe(200);
    // Triggers (BEGIN … END inside CREATE TRIGGER) still work.
    const trig = await get(
      host,
      `/sql?sql=${encodeURIComponent('CREATE TRIGGER IF NOT EXISTS t1 AFTER INSERT ON notes BEGIN SELECT 1; END')}`,
    );
    expect(trig.status).toBe(200);
  });

  it('keeps two spaces apart', async () => {
    const other = await createSpace(t, undefined, { slug: 'db-two', access: 'public' });
    await publishViaVersions(t, other.id, site('other'));
    const h2 = 'db-two.localhost';
    // Its own empty database: the first space's table does not exist there.
    const none = await get(h2, '/list');
    expect(none.status).toBe(500);
    expect(none.body.error).toContain('no such table: notes');
    await get(h2, '/setup');
    await get(h2, '/add?body=mine');
    expect((await get(h2, '/list')).body.results).toEqual([{ id: 1, body: 'mine other' }]);
    // The first space still has its own rows (8 + the one inserted above), none of the other's.
    expect((await get(host, '/count')).body).toBe(9);
    expect(edgeRuntime(t.server.services).bindings.names()).toEqual(['db']);
  });
});
