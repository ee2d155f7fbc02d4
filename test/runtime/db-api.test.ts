/**
 * The owner's API over a runtime space's database (issue 26, behaviour §10), on the real server with
 * real workerd: rows a handler wrote through env.DB are what inspect, dump and export show; an
 * export in 16 MiB keyset pages round-trips through import (and the handler reads the imported
 * rows); migrations keep a ledger and refuse edits and unflagged drops; the console URL works once;
 * a static space answers `db_not_available`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const handler = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/api/add') {
      const r = await env.DB.prepare('INSERT INTO notes (body) VALUES (?)').bind(url.searchParams.get('body')).run();
      return Response.json(r.meta);
    }
    if (url.pathname === '/api/list') return Response.json((await env.DB.prepare('SELECT id, body FROM notes ORDER BY id').all()).results);
    return new Response('no route', { status: 404 });
  },
};
`;
const site = {
  'index.html': 'home',
  'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
  'handler.js': handler,
};

describeEachDb('the space database API', (db) => {
  let t: TestServer;
  let spaceId: string;
  const host = 'db-api.localhost';
  beforeAll(async () => {
    t = await startServer({ db });
    const space = await createSpace(t, undefined, { slug: 'db-api', access: 'public' });
    spaceId = space.id;
    await publishViaVersions(t, spaceId, site);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });
  const base = () => `/v1/spaces/${spaceId}/db`;
  const migrate = (body: unknown) => t.api('POST', `${base()}/migrate`, { body });

  it('answers db_not_available for a space that runs no code', async () => {
    const plain = await createSpace(t, undefined, { slug: 'db-static' });
    await publishViaVersions(t, plain.id, { 'index.html': 'static' });
    for (const p of ['', '/dump', '/export', '/console']) {
      const r = await t.api('GET', `/v1/spaces/${plain.id}/db${p}`);
      expect(r.status, p).toBe(404);
      expect(r.body.code, p).toBe('db_not_available');
    }
    const m = await t.api('POST', `/v1/spaces/${plain.id}/db/migrate`, {
      body: { migrations: [{ name: 'a', sql: 'CREATE TABLE a (x)' }] },
    });
    expect(m.body.code).toBe('db_not_available');
  });

  it('migrates with a ledger: applies, skips, refuses an edit and an unflagged drop', async () => {
    const m1 = {
      name: '0001_notes.sql',
      sql: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)',
    };
    const first = await migrate({ migrations: [m1] });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      applied: [{ name: '0001_notes.sql' }],
      skipped: [],
      dryRun: false,
    });
    const m2 = { name: '0002_blob.sql', sql: 'ALTER TABLE notes ADD COLUMN data BLOB' };
    const second = await migrate({ migrations: [m1, m2] });
    expect(second.body.data).toMatchObject({
      applied: [{ name: '0002_blob.sql' }],
      skipped: ['0001_notes.sql'],
    });
    const edited = await migrate({ migrations: [{ ...m1, sql: `${m1.sql} -- changed` }] });
    expect(edited.status).toBe(409);
    expect(edited.body).toMatchObject({ code: 'db_migration_changed', pointer: '/migrations/0/sql' });
    const drop = await migrate({
      migrations: [{ name: '0003_drop.sql', sql: 'ALTER TABLE notes DROP COLUMN data' }],
    });
    expect(drop.status).toBe(409);
    expect(drop.body.code).toBe('db_migration_destructive');
    const broken = await migrate({
      migrations: [
        { name: '0003_ok.sql', sql: 'CREATE TABLE other (x)' },
        { name: '0004_bad.sql', sql: 'INSERT INTO nowhere VALUES (1)' },
      ],
    });
    expect(broken.status).toBe(422);
    expect(broken.body).toMatchObject({ code: 'db_migration_failed', pointer: '/migrations/1/sql' });
    const invalid = await migrate({ migrations: [{ name: '../x', sql: 'SELECT 1' }] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('validation_error');
    const dup = await migrate({ migrations: [m2, m2] });
    expect(dup.body).toMatchObject({ code: 'validation_error', pointer: '/migrations/1/name' });
    const inspect = await t.api('GET', base());
    expect(inspect.status).toBe(200);
    expect(inspect.body.data.tables.map((x: any) => x.name)).toEqual(['notes']);
    expect(inspect.body.data.migrations.map((x: any) => x.name)).toEqual(['0001_notes.sql', '0002_blob.sql']);
  });

  it('shows the rows a handler wrote: inspect and dump (25 by default, at most 100)', async () => {
    for (let i = 1; i <= 30; i++)
      expect((await t.api('GET', `/api/add?body=n${i}`, { token: null, host })).status).toBe(200);
    const inspect = await t.api('GET', base());
    const notes = inspect.body.data.tables[0];
    expect(notes).toMatchObject({ name: 'notes', rowCount: 30, withoutRowid: false });
    expect(notes.columns.map((c: any) => c.name)).toEqual(['id', 'body', 'data']);
    expect(inspect.body.data.sizeBytes).toBeGreaterThan(0);
    const dump = await t.api('GET', `${base()}/dump`);
    expect(dump.body.data.limit).toBe(25);
    expect(dump.body.data.tables[0]).toMatchObject({ name: 'notes', rowCount: 30, truncated: true });
    expect(dump.body.data.tables[0].rows).toHaveLength(25);
    expect(dump.body.data.tables[0].rows[0]).toEqual({ id: 1, body: 'n1', data: null });
    expect((await t.api('GET', `${base()}/dump?limit=100`)).body.data.tables[0].rows).toHaveLength(30);
    const tooMany = await t.api('GET', `${base()}/dump?limit=101`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.code).toBe('validation_error');
  });

  it('exports in keyset pages of at most 16 MiB and round-trips through import', async () => {
    // 20 rows of 1 MiB (1.33 MiB as base64): more than one page.
    const fill = await migrate({
      migrations: [
        {
          name: '0005_fill.sql',
          sql: 'CREATE TABLE big (k INTEGER PRIMARY KEY, b BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) INSERT INTO big (b) SELECT randomblob(1048576) FROM n',
        },
      ],
    });
    expect(fill.status).toBe(200);
    const pages: any[] = [];
    let url: string | null = `${base()}/export`;
    while (url) {
      const r: any = await t.api('GET', url);
      expect(r.status).toBe(200);
      expect(r.text.length).toBeLessThanOrEqual(16 * 1024 * 1024 + 4096);
      pages.push(r.body);
      if (r.body.next) {
        expect(r.headers.link).toContain('rel="next"');
        url = `${base()}/export?cursor=${encodeURIComponent(r.body.next)}`;
      } else url = null;
    }
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages[0].format).toBe('spaces.db-export');
    expect(pages[0].schema.map((s: any) => s.name)).toContain('notes');
    const merged = { ...pages[0], next: null, tables: [] as any[] };
    for (const p of pages)
      for (const tb of p.tables) {
        const had = merged.tables.find((x: any) => x.name === tb.name);
        if (had) had.rows.push(...tb.rows);
        else merged.tables.push({ ...tb, rows: [...tb.rows] });
      }
    const rowsOf = (name: string) => merged.tables.find((x: any) => x.name === name).rows;
    expect(rowsOf('big').map((r: any[]) => r[0])).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(rowsOf('notes')).toHaveLength(30);
    const bigBefore = rowsOf('big').map((r: any[]) => r[1].$blob);

    // One table alone; an unknown table; a cursor no page gave.
    const one = await t.api('GET', `${base()}/export/notes`);
    expect(one.body.tables.map((x: any) => x.name)).toEqual(['notes']);
    expect((await t.api('GET', `${base()}/export/nope`)).body.code).toBe('db_table_not_found');
    expect((await t.api('GET', `${base()}/export?cursor=xyz`)).body.code).toBe('db_export_cursor_invalid');

    // Change the database, then import the export: it is as it was, and the handler reads it.
    await t.api('GET', '/api/add?body=after-export', { token: null, host });
    await migrate({ migrations: [{ name: '0006_drop.sql', sql: 'DROP TABLE big' }], allowDrop: true });
    const imported = await t.api('POST', `${base()}/import`, { body: merged });
    expect(imported.status, JSON.stringify(imported.body).slice(0, 300)).toBe(200);
    expect(imported.body.data).toEqual({ tables: 3, rows: 53 });
    const list = await t.api('GET', '/api/list', { token: null, host });
    expect(list.body).toHaveLength(30);
    expect(list.body.at(-1)).toEqual({ id: 30, body: 'n30' });
    const again = await t.api('GET', `${base()}/export/big`);
    const reread: string[] = again.body.tables[0].rows.map((r: any[]) => r[1].$blob);
    let cursor = again.body.next;
    while (cursor) {
      const r = await t.api('GET', `${base()}/export/big?cursor=${encodeURIComponent(cursor)}`);
      reread.push(...r.body.tables[0].rows.map((x: any[]) => x[1].$blob));
      cursor = r.body.next;
    }
    expect(reread).toEqual(bigBefore);
    const inspect = await t.api('GET', base());
    expect(inspect.body.data.migrations.map((m: any) => m.name)).toContain('0005_fill.sql');
    expect(inspect.body.data.migrations.map((m: any) => m.name)).not.toContain('0006_drop.sql');

    // A page is not a whole export; a broken document changes nothing.
    const page = await t.api('POST', `${base()}/import`, { body: { ...pages[0], next: 'abc' } });
    expect(page.status).toBe(422);
    expect(page.body.code).toBe('db_import_invalid');
    const broken = {
      ...merged,
      tables: [
        {
          name: 'notes',
          columns: ['id', 'body'],
          rows: [
            [1, 'a'],
            [1, 'dup'],
          ],
        },
      ],
    };
    const dupKey = await t.api('POST', `${base()}/import`, { body: broken });
    expect(dupKey.status).toBe(422);
    expect((await t.api('GET', '/api/list', { token: null, host })).body).toHaveLength(30);
  }, 120_000);

  it('gives a console URL that works once, with the token only in the fragment', async () => {
    const opened = await t.api('GET', `${base()}/console`);
    expect(opened.status).toBe(200);
    const url = new URL(opened.body.data.url);
    expect(url.pathname).toBe('/v1/db-console');
    expect(url.search).toBe('');
    const token = url.hash.slice(1);
    expect(token.length).toBeGreaterThan(30);
    const page = await t.api('GET', '/v1/db-console', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'nonce-");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const session = await t.api('POST', '/v1/db-console/session', { token: null, body: { token } });
    expect(session.status).toBe(200);
    expect(session.body.data.spaceId).toBe(spaceId);
    const reused = await t.api('POST', '/v1/db-console/session', { token: null, body: { token } });
    expect(reused.status).toBe(401);
    expect(reused.body.code).toBe('db_console_invalid');
    const q = await t.api('POST', '/v1/db-console/query', {
      token: null,
      headers: { 'x-spaces-console': session.body.data.session },
      body: { sql: 'SELECT id, body FROM notes WHERE id <= 2 ORDER BY id' },
    });
    expect(q.status).toBe(200);
    expect(q.body.data).toMatchObject({
      columns: ['id', 'body'],
      rows: [
        [1, 'n1'],
        [2, 'n2'],
      ],
      spaceId,
    });
    const write = await t.api('POST', '/v1/db-console/query', {
      token: null,
      headers: { 'x-spaces-console': session.body.data.session },
      body: { sql: "UPDATE notes SET body = 'edited' WHERE id = 1" },
    });
    expect(write.body.data.changes).toBe(1);
    expect((await t.api('GET', '/api/list', { token: null, host })).body[0].body).toBe('edited');
    const refused = await t.api('POST', '/v1/db-console/query', {
      token: null,
      headers: { 'x-spaces-console': session.body.data.session },
      body: { sql: "ATTACH '/tmp/x.db' AS x" },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('db_statement_refused');
    const noSession = await t.api('POST', '/v1/db-console/query', {
      token: null,
      headers: { 'x-spaces-console': 'made-up' },
      body: { sql: 'SELECT 1' },
    });
    expect(noSession.status).toBe(401);
  });

  it('keeps the forwarding route closed to calls without the cluster signature', async () => {
    const r = await t.api('POST', `/v1/internal/space-db/${spaceId}/all`, {
      token: null,
      body: { sql: 'SELECT * FROM notes', params: [] },
    });
    expect(r.status).toBe(404);
    const signed = await t.api('POST', `/v1/internal/space-db/${spaceId}/all`, {
      token: null,
      headers: { 'x-spaces-instance-auth': `${Date.now()}.${'0'.repeat(64)}` },
      body: { sql: 'SELECT * FROM notes', params: [] },
    });
    expect(signed.status).toBe(404);
  });

  it('purging the space removes its database file and what its functions kept', async () => {
    const file = path.join(t.dataDir, 'space-db', `${spaceId}.sqlite`);
    expect(fs.existsSync(file)).toBe(true);
    expect((await t.api('DELETE', `/v1/spaces/${spaceId}`)).status).toBe(202);
    const later = new Date(Date.now() + 8 * 24 * 3600 * 1000);
    expect(await t.server.services.spaces.purgeDeleted(later)).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    expect(await t.server.services.store.repos.spaceDbOwners.get(spaceId)).toBeNull();
  });
});
