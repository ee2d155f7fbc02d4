/**
 * A space's database with several instances (issue 26): instances on one PostgreSQL database, each
 * with its own data directory (as on separate machines) and one shared blob store. Every call on a
 * space's database goes to the one instance that owns it (the others forward), so the rows are one
 * sequence whichever instance a request reaches; an owner that stops hands over at once with
 * every row (its snapshot in the blob store); an owner that dies makes calls fail with
 * `db_owner_unavailable` until its lease runs out, then another instance restores its last
 * snapshot and serves.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const handler = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      await env.DB.exec('CREATE TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY, via TEXT)');
      if (url.pathname === '/api/hit') {
        const r = await env.DB.prepare('INSERT INTO hits (via) VALUES (?)').bind(url.searchParams.get('via')).run();
        return Response.json({ id: r.meta.last_row_id });
      }
      if (url.pathname === '/api/count') return Response.json(await env.DB.prepare('SELECT count(*) AS n FROM hits').first('n'));
      return new Response('no route', { status: 404 });
    } catch (e) {
      return Response.json({ error: e.message }, { status: 503 });
    }
  },
};
`;

const LEASE_MS = 2000;
const env = { SPACES_SECRET_KEY: 'k'.repeat(40), SPACES_SPACE_DB_LEASE_MS: String(LEASE_MS) };

describe.skipIf(!PG_URL)('space databases across instances', () => {
  let a: TestServer;
  let b: TestServer;
  let c: TestServer;
  let spaceId: string;
  const host = 'owned-db.localhost';
  beforeAll(async () => {
    a = await startServer({ db: 'postgres', env });
    b = await startServer({ instanceOf: a, ownDataDir: true, env });
    c = await startServer({ instanceOf: a, ownDataDir: true, env });
    const space = await createSpace(a, undefined, { slug: 'owned-db', access: 'public' });
    spaceId = space.id;
    await publishViaVersions(a, spaceId, {
      'index.html': 'home',
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
      'handler.js': handler,
    });
  }, 60_000);
  afterAll(async () => {
    await c?.close().catch(() => {});
    await b?.close().catch(() => {});
    await a?.close();
  });

  const hit = (t: TestServer, via: string) => t.api('GET', `/api/hit?via=${via}`, { token: null, host });
  const count = async (t: TestServer) => (await t.api('GET', '/api/count', { token: null, host })).body;
  const owner = () => a.server.services.store.repos.spaceDbOwners.get(spaceId);
  const fileOn = (t: TestServer) => path.join(t.dataDir, 'space-db', `${spaceId}.sqlite`);

  it('keeps one sequence of rows whichever instance a request reaches', async () => {
    // b answers first: it becomes the owner.
    expect((await hit(b, 'b')).body).toEqual({ id: 1 });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) {
      const t = [a, b, c][i % 3]!;
      const r = await hit(t, 'x');
      expect(r.status).toBe(200);
      ids.push(r.body.id);
    }
    expect(ids).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
    for (const t of [a, b, c]) expect(await count(t)).toBe(13);
    const row = await owner();
    expect(row?.address).toBe(`http://127.0.0.1:${b.port}`);
    // Only the owner has the file: the others never opened it.
    expect(fs.existsSync(fileOn(b))).toBe(true);
    expect(fs.existsSync(fileOn(a))).toBe(false);
    expect(fs.existsSync(fileOn(c))).toBe(false);
    // The owner's API goes through the owner too.
    const inspect = await c.api('GET', `/v1/spaces/${spaceId}/db`);
    expect(inspect.body.data.tables).toEqual([expect.objectContaining({ name: 'hits', rowCount: 13 })]);
  }, 60_000);

  it('hands over at once, with every row, when the owner stops', async () => {
    await b.close();
    // c asks first after the handover: it takes the lease and restores b's last snapshot.
    expect((await hit(c, 'c')).body).toEqual({ id: 14 });
    expect((await owner())?.address).toBe(`http://127.0.0.1:${c.port}`);
    expect(await count(a)).toBe(14);
    expect((await hit(a, 'a')).body).toEqual({ id: 15 });
  }, 60_000);

  it('serves again from the last snapshot once a dead owner’s lease has run out', async () => {
    // Wait for c's snapshot of the rows so far.
    const deadline = Date.now() + 10_000;
    let gen = (await owner())!.snapshot_generation;
    const start = gen;
    while (gen === start || (await owner())!.snapshot_at === null) {
      if (Date.now() > deadline) throw new Error('no snapshot within 10 s');
      await sleep(100);
      gen = (await owner())!.snapshot_generation;
    }
    // c dies: it neither snapshots again nor gives up its lease.
    const repos = c.server.services.store.repos.spaceDbOwners as any;
    repos.release = async () => {};
    repos.recordSnapshot = async () => false;
    await c.close();
    const during = await hit(a, 'a');
    expect(during.status).toBe(503);
    const api = await a.api('GET', `/v1/spaces/${spaceId}/db`);
    expect(api.status).toBe(503);
    expect(api.body.code).toBe('db_owner_unavailable');
    await sleep(LEASE_MS + 200);
    expect(await count(a)).toBe(15);
    expect((await hit(a, 'a')).body).toEqual({ id: 16 });
    expect((await owner())?.address).toBe(`http://127.0.0.1:${a.port}`);
    expect(fs.existsSync(fileOn(a))).toBe(true);
  }, 60_000);
});
