import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { sweepUnreferencedBlobs } from '../../src/domain/publishing/service.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, download, manifestOf, publishViaVersions, type Site, sha } from './helpers.ts';

/** A site big enough that a one-file change is a small layer: 40 files. */
function bigSite(tag = ''): Site {
  const site: Site = { 'index.html': '<!doctype html><h1>Home</h1>' };
  for (let i = 0; i < 40; i++) site[`pages/p${i}.html`] = `<p>page ${i}${tag}</p>`;
  return site;
}

describeEachDb('publishing: layered versions', (db) => {
  let t: TestServer;
  const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
  beforeAll(async () => {
    t = await startServer({ db, clock });
  });
  afterAll(() => t.close());

  const versionRow = (id: string) =>
    t.server.services.database.db
      .selectFrom('versions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const ownRows = (id: string) =>
    t.server.services.database.db
      .selectFrom('version_files')
      .selectAll()
      .where('version_id', '=', id)
      .execute();
  const listFiles = async (spaceId: string, versionId: string) => {
    const out: Array<{ path: string; sha256: string }> = [];
    let cursor: string | undefined;
    do {
      const q = `limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await t.api('GET', `/v1/spaces/${spaceId}/versions/${versionId}/files?${q}`);
      expect(res.status).toBe(200);
      out.push(...res.body.data.map((f: any) => ({ path: f.path, sha256: f.sha256 })));
      cursor = res.body.nextCursor ?? res.body.pagination?.nextCursor ?? undefined;
    } while (cursor);
    return out;
  };
  const expected = (site: Site) =>
    Object.entries(site)
      .map(([path, c]) => ({ path, sha256: sha(c) }))
      .sort((a, b) => (a.path < b.path ? -1 : 1));

  it('stores a small change as a layer over the live version: rows only for what changed', async () => {
    const space = await createSpace(t, undefined, { slug: 'layered', access: 'public' });
    const v1Site = bigSite();
    const v1 = (await publishViaVersions(t, space.id, v1Site)).finalized!.version;
    expect((await versionRow(v1.id)).base_id).toBeNull();
    expect(await ownRows(v1.id)).toHaveLength(41);

    // One file changed, one added, one removed.
    const v2Site: Site = { ...v1Site, 'pages/p3.html': '<p>changed</p>', 'new.txt': 'added' };
    delete v2Site['pages/p7.html'];
    const r2 = await publishViaVersions(t, space.id, v2Site);
    expect(r2.uploaded.sort()).toEqual(['new.txt', 'pages/p3.html']);
    const v2 = r2.finalized!.version;
    expect(v2.status).toBe('ready');
    expect((await versionRow(v2.id)).base_id).toBe(v1.id);
    const own = await ownRows(v2.id);
    expect(own.map((r) => [r.path, r.removed]).sort()).toEqual([
      ['new.txt', 0],
      ['pages/p3.html', 0],
      ['pages/p7.html', 1],
    ]);

    // Every reader sees the whole file list: the paged listing, the archive, the diff, the site.
    expect(await listFiles(space.id, v2.id)).toEqual(expected(v2Site));
    const files = await download(t, space.id, v2.id);
    expect([...files.keys()].sort()).toEqual(Object.keys(v2Site).sort());
    expect(files.get('pages/p3.html')!.toString()).toBe('<p>changed</p>');
    expect(files.get('pages/p4.html')!.toString()).toBe('<p>page 4</p>');
    const diff = await t.api('GET', `/v1/spaces/${space.id}/versions/${v2.id}/diff?against=${v1.id}`);
    expect(diff.body.data).toMatchObject({
      added: ['new.txt'],
      changed: ['pages/p3.html'],
      removed: ['pages/p7.html'],
    });
    const get = (p: string) => t.api('GET', p, { token: null, host: 'layered.localhost' });
    expect((await get('/pages/p3')).text).toBe('<p>changed</p>');
    expect((await get('/pages/p4')).text).toBe('<p>page 4</p>');
    expect((await get('/new.txt')).text).toBe('added');
    expect((await get('/pages/p7')).status).toBe(404);

    // The next change layers over the same flat base (never a chain), carrying v2's changes along.
    const v3Site: Site = { ...v2Site, 'pages/p5.html': '<p>five</p>' };
    const r3 = await publishViaVersions(t, space.id, v3Site);
    expect(r3.uploaded).toEqual(['pages/p5.html']);
    const v3 = r3.finalized!.version;
    expect((await versionRow(v3.id)).base_id).toBe(v1.id);
    expect(await listFiles(space.id, v3.id)).toEqual(expected(v3Site));
    expect((await get('/pages/p5')).text).toBe('<p>five</p>');
    expect((await get('/pages/p3')).text).toBe('<p>changed</p>');

    // Rolling back to v2 serves v2's layer again.
    const rb = await t.api('POST', `/v1/spaces/${space.id}/versions/${v2.id}/promote`, { body: {} });
    expect(rb.status).toBe(200);
    expect((await get('/pages/p5')).text).toBe('<p>page 5</p>');

    // Re-publishing v3's files over v2 (live) is not a no-op but uploads nothing.
    const again = await t.api('POST', `/v1/spaces/${space.id}/versions`, {
      body: { files: manifestOf(v3Site) },
    });
    expect(again.body.data.noop).toBe(false);
    expect(again.body.data.upload.targets).toEqual([]);
  });

  it('stores a large change flat, and it becomes the next base', async () => {
    const space = await createSpace(t);
    const v1 = (await publishViaVersions(t, space.id, bigSite())).finalized!.version;
    const v2Site = bigSite(' v2'); // every page changed: 40 of 41 files
    const v2 = (await publishViaVersions(t, space.id, v2Site)).finalized!.version;
    expect((await versionRow(v2.id)).base_id).toBeNull();
    expect(await ownRows(v2.id)).toHaveLength(41);
    const v3 = (await publishViaVersions(t, space.id, { ...v2Site, 'x.txt': 'x' })).finalized!.version;
    expect((await versionRow(v3.id)).base_id).toBe(v2.id);
    expect(v1.id).not.toBe(v2.id);
  });

  it('keeps a deleted base’s rows and blobs while a layer needs them, and drops them after', async () => {
    const space = await createSpace(t, undefined, { slug: 'layered-delete', access: 'public' });
    const v1Site: Site = {
      ...bigSite(),
      'only-in-base.txt': 'base bytes, inherited by the layer',
      'overridden.txt': 'base bytes the layer replaces',
    };
    const v1 = (await publishViaVersions(t, space.id, v1Site)).finalized!.version;
    const v2Site = { ...v1Site, 'index.html': '<h1>v2</h1>', 'overridden.txt': 'layer bytes' };
    const v2 = (await publishViaVersions(t, space.id, v2Site)).finalized!.version;
    expect((await versionRow(v2.id)).base_id).toBe(v1.id);

    const del = await t.api('DELETE', `/v1/spaces/${space.id}/versions/${v1.id}`);
    expect(del.status).toBe(200);
    expect((await versionRow(v1.id)).status).toBe('deleted');
    // The deleted version lists nothing; the layer still lists, serves and downloads everything.
    expect(await listFiles(space.id, v1.id)).toEqual([]);
    expect(await listFiles(space.id, v2.id)).toEqual(expected(v2Site));
    clock.advance(48 * 3600_000);
    await sweepUnreferencedBlobs(t.server.services, clock.now(), 3600_000);
    const inheritedSha = sha('base bytes, inherited by the layer');
    expect(await t.server.services.blobs.has(inheritedSha)).toBe(true);
    // What the layer replaced is garbage: only the deleted base's own row names it.
    expect(await t.server.services.blobs.has(sha('base bytes the layer replaces'))).toBe(false);
    const get = (p: string) => t.api('GET', p, { token: null, host: 'layered-delete.localhost' });
    expect((await get('/only-in-base.txt')).text).toBe('base bytes, inherited by the layer');
    const files = await download(t, space.id, v2.id);
    expect(files.get('only-in-base.txt')!.toString()).toBe('base bytes, inherited by the layer');

    // A new publish cannot layer over a deleted base: it is stored flat.
    const v3Site = { ...v2Site, 'index.html': '<h1>v3</h1>' };
    const v3 = (await publishViaVersions(t, space.id, v3Site)).finalized!.version;
    expect((await versionRow(v3.id)).base_id).toBeNull();
    expect(await listFiles(space.id, v3.id)).toEqual(expected(v3Site));

    // Once the last layer is deleted, the base's rows go too.
    expect((await t.api('DELETE', `/v1/spaces/${space.id}/versions/${v2.id}`)).status).toBe(200);
    expect(await ownRows(v1.id)).toEqual([]);
    expect(await ownRows(v2.id)).toEqual([]);
  });

  it('re-renders an inherited template with the current variables', async () => {
    const space = await createSpace(t, undefined, { slug: 'layered-tpl', access: 'public' });
    const site: Site = {
      ...bigSite(),
      'config.js': 'window.API = "{{ vars.API_URL }}";',
      'spaces.json': JSON.stringify({ templates: ['config.js'] }),
    };
    const put = (value: string) =>
      t.api('PUT', `/v1/spaces/${space.id}/variables/API_URL`, { body: { value } });
    expect((await put('https://one.example')).status).toBeLessThan(300);
    const v1 = (await publishViaVersions(t, space.id, site)).finalized!.version;
    const get = (p: string) => t.api('GET', p, { token: null, host: 'layered-tpl.localhost' });
    expect((await get('/config.js')).text).toBe('window.API = "https://one.example";');

    expect((await put('https://two.example')).status).toBeLessThan(300);
    const v2 = (await publishViaVersions(t, space.id, { ...site, 'pages/p1.html': '<p>1b</p>' })).finalized!
      .version;
    expect((await versionRow(v2.id)).base_id).toBe(v1.id);
    expect((await get('/config.js')).text).toBe('window.API = "https://two.example";');
    // The layer owns the re-rendered row; the base's rendering is untouched.
    const own = await ownRows(v2.id);
    expect(own.map((r) => r.path).sort()).toEqual(['config.js', 'pages/p1.html']);
    const v1Files = await download(t, space.id, v1.id);
    expect(v1Files.get('config.js')!.toString()).toBe('window.API = "https://one.example";');
  });
});
