import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { BLOB_TOUCH_INTERVAL_MS } from '../../src/domain/publishing/service.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, download, publishViaVersions, type Site, sha } from './helpers.ts';

const HOUR = 3600_000;

/** Compressible (HTML over 256 bytes): stored with br/gzip variants. */
const page = (label: string) =>
  `<!doctype html><title>${label}</title>\n${`<p>${label} paragraph</p>\n`.repeat(40)}`;

describeEachDb('publishing: blob sweep against concurrent publishes', (db) => {
  let t: TestServer;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    t = await startServer({ db, clock });
  });
  afterAll(() => t.close());

  const variantsOf = async (digest: string): Promise<string[]> => {
    const row = await t.server.services.database.db
      .selectFrom('blobs')
      .select('variants')
      .where('sha256', '=', digest)
      .executeTakeFirst();
    return row?.variants
      ? Object.values(JSON.parse(row.variants) as Record<string, { sha256: string }>).map((v) => v.sha256)
      : [];
  };
  /** The live site's `/` asked for one encoding: the encoding served and the decoded body. */
  const served = async (slug: string, encoding: 'br' | 'gzip') => {
    const res = await request(`${t.url}/`, {
      headers: { host: `${slug}.localhost`, 'accept-encoding': encoding },
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    const enc = res.headers['content-encoding'];
    const text = (
      enc === 'br' ? brotliDecompressSync(body) : enc === 'gzip' ? gunzipSync(body) : body
    ).toString();
    return { status: res.statusCode, encoding: enc, text };
  };
  const deleteVersion = async (spaceId: string, versionId: string) => {
    const res = await t.api('DELETE', `/v1/spaces/${spaceId}/versions/${versionId}`);
    expect(res.status).toBeLessThan(300);
  };

  it('a version created between the sweep’s scan and its deletions keeps the stored content it relies on', async () => {
    const s = await createSpace(t, undefined, { access: 'public' });
    const reused = page('reused');
    const first = await publishViaVersions(t, s.id, { 'index.html': reused });
    await publishViaVersions(t, s.id, { 'index.html': page('other') });
    await deleteVersion(s.id, first.finalized!.version.id);
    const variants = await variantsOf(sha(reused));
    expect(variants.length).toBe(2);

    // Unreferenced and past the grace period: the scan finds it collectable. Before the sweep deletes
    // anything, a publisher re-publishes that content; the create finds it stored (no upload).
    clock.advance(2 * HOUR);
    let during: Awaited<ReturnType<typeof publishViaVersions>> | null = null;
    const swept = await t.server.services.publishing.blobSweep.run(clock.now(), HOUR, {
      afterScan: async () => {
        during = await publishViaVersions(t, s.id, { 'index.html': reused });
      },
    });
    expect(during!.uploaded).toEqual([]);
    expect(during!.finalized!.version.status).toBe('ready');
    // The re-published content, its row and its variants all survived.
    const files = await download(t, s.id, during!.finalized!.version.id);
    expect(files.get('index.html')!.toString()).toBe(reused);
    for (const d of [sha(reused), ...variants]) expect(await t.server.services.blobs.has(d)).toBe(true);
    expect(await variantsOf(sha(reused))).toEqual(variants);
    expect(await served(s.slug, 'br')).toEqual({ status: 200, encoding: 'br', text: reused });
    // The first version's content was the only candidate, and it stayed.
    expect(swept).toEqual({ deleted: 0, bytes: 0 });
  });

  it('deletes unreferenced content with its variants, and keeps variants while the row listing them stays', async () => {
    const s = await createSpace(t, undefined, { access: 'public' });
    const gone = page('gone');
    const listed = page('listed');
    const a = await publishViaVersions(t, s.id, { 'index.html': gone });
    const b = await publishViaVersions(t, s.id, { 'index.html': listed });
    await publishViaVersions(t, s.id, { 'index.html': page('live') });
    await deleteVersion(s.id, a.finalized!.version.id);
    await deleteVersion(s.id, b.finalized!.version.id);
    const goneVariants = await variantsOf(sha(gone));
    const listedVariants = await variantsOf(sha(listed));
    clock.advance(2 * HOUR);
    // A version declaring `listed` (never finalized, then deleted) touched its row only: the row is
    // recent, its variants are old — and a later version would reuse them from that row.
    const open = await t.api('POST', `/v1/spaces/${s.id}/versions`, {
      body: { files: [{ path: 'index.html', sha256: sha(listed), size: Buffer.byteLength(listed) }] },
    });
    expect(open.body.data.upload.targets).toEqual([]);
    await deleteVersion(s.id, open.body.data.version.id);

    const swept = await t.server.services.publishing.blobSweep.run(clock.now(), HOUR);
    for (const d of [sha(gone), ...goneVariants]) expect(await t.server.services.blobs.has(d)).toBe(false);
    expect(swept.deleted).toBeGreaterThanOrEqual(3);
    for (const d of [sha(listed), ...listedVariants]) expect(await t.server.services.blobs.has(d)).toBe(true);

    // Reused later: the variants from the row are there to serve.
    const reuse = await publishViaVersions(t, s.id, { 'index.html': listed });
    expect(reuse.uploaded).toEqual([]);
    expect(await served(s.slug, 'gzip')).toEqual({ status: 200, encoding: 'gzip', text: listed });

    // Once nothing has relied on it for the grace period, it goes with its variants.
    clock.advance(2 * HOUR);
    await publishViaVersions(t, s.id, { 'index.html': page('newer') });
    await deleteVersion(s.id, reuse.finalized!.version.id);
    clock.advance(2 * HOUR);
    await t.server.services.publishing.blobSweep.run(clock.now(), HOUR);
    for (const d of [sha(listed), ...listedVariants])
      expect(await t.server.services.blobs.has(d)).toBe(false);
  });

  it('an archive whose bytes went missing ends with an error, and the server stays up', async () => {
    const s = await createSpace(t, undefined, { access: 'public' });
    const site = { 'index.html': page('archived'), 'a.txt': 'first file', 'b.txt': 'second file' };
    const v = await publishViaVersions(t, s.id, site);
    await t.server.services.blobs.delete(sha(site['b.txt']));
    await expect(download(t, s.id, v.finalized!.version.id)).rejects.toThrow();
    const again = await t.api('GET', `/v1/spaces/${s.id}/versions/${v.finalized!.version.id}`);
    expect(again.status).toBe(200);
  });

  it('gives the database pages of swept small blobs back to the file system (SQLite)', async () => {
    if (db !== 'sqlite') return;
    const pragma = async (name: string) =>
      Number(
        Object.values(
          (await sql.raw(`pragma ${name}`).execute(t.server.services.database.db)).rows[0] as object,
        )[0],
      );
    const s = await createSpace(t, undefined, { access: 'public' });
    const site: Site = { 'index.html': page('pages') };
    for (let i = 0; i < 200; i++) site[`data/${i}.bin`] = randomBytes(8000); // inline, incompressible
    const v = await publishViaVersions(t, s.id, site, { batch: true });
    await publishViaVersions(t, s.id, { 'index.html': page('after') });
    await deleteVersion(s.id, v.finalized!.version.id);
    clock.advance(2 * HOUR);
    const before = await pragma('page_count');
    // The count is this call's own (see the next test): no other sweep may run beside it. On a
    // loaded machine this sweep's ~600 statements outlast the job worker's poll interval (1 s of
    // real time), so a worker would poll between its scan and its deletions and start the hourly
    // `blobs.sweep` — due by the clock just moved — which then takes its share of the blobs. Made
    // certain here: a poll in that window. The suite's server runs no worker (see `startServer`'s
    // `clock`), so the poll finds nothing to run.
    const swept = await t.server.services.publishing.blobSweep.run(clock.now(), HOUR, {
      afterScan: async () => {
        await t.server.services.jobs.tick();
      },
    });
    expect(swept.deleted).toBeGreaterThanOrEqual(200);
    for (const d of Object.values(site)) expect(await t.server.services.blobs.has(sha(d))).toBe(false);
    expect(await pragma('freelist_count')).toBe(0);
    // 200 × 8,000 bytes: ~98 pages of 16 KiB at least.
    expect(before - (await pragma('page_count'))).toBeGreaterThanOrEqual(95);
  });

  it('sweeps running side by side delete every unreferenced blob once: their counts add up', async () => {
    const s = await createSpace(t, undefined, { access: 'public' });
    const site: Site = { 'index.html': page('side by side') };
    for (let i = 0; i < 40; i++) site[`small/${i}.bin`] = randomBytes(2000); // inline
    for (let i = 0; i < 3; i++) site[`large/${i}.bin`] = randomBytes(40_000); // in the blob store
    const v = await publishViaVersions(t, s.id, site, { batch: true });
    await publishViaVersions(t, s.id, { 'index.html': page('side by side, after') });
    await deleteVersion(s.id, v.finalized!.version.id);
    clock.advance(2 * HOUR);
    const { blobs, publishing } = t.server.services;
    const stored = async () => {
      const all = new Set<string>();
      for await (const d of blobs.list()) all.add(d);
      return all;
    };
    const sizes = new Map<string, number>();
    for (const d of await stored()) sizes.set(d, (await blobs.stat(d))!.size);

    const runs = await Promise.all([1, 2, 3].map(() => publishing.blobSweep.run(clock.now(), HOUR)));
    const after = await stored();
    const removed = [...sizes.keys()].filter((d) => !after.has(d));
    for (const d of Object.values(site)) expect(removed).toContain(sha(d));
    // Each blob is deleted by one of them, and counted by that one only.
    expect(runs.reduce((n, r) => n + r.deleted, 0)).toBe(removed.length);
    expect(runs.reduce((n, r) => n + r.bytes, 0)).toBe(removed.reduce((n, d) => n + sizes.get(d)!, 0));
  });

  it('random publishes, deletions and sweeps running side by side never lose a ready version’s bytes', async () => {
    // A seeded generator: a failure reproduces.
    let seed = 20261123;
    /** mulberry32: an integer in [0, n). */
    const rand = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) % n;
    };
    const pool = Array.from({ length: 24 }, (_, i) =>
      i % 3 === 2 ? randomBytes(600 + i * 50).toString('base64url') : page(`pool-${i}`),
    );
    const s = await createSpace(t, undefined, { access: 'public' });
    /** Ready versions not deleted, with the content each file must have. */
    const kept = new Map<string, Record<string, string>>();
    const publishSome = async () => {
      const site: Record<string, string> = { 'index.html': pool[rand(pool.length)]! };
      for (let f = rand(4); f > 0; f--) site[`p${rand(6)}.html`] = pool[rand(pool.length)]!;
      const r = await publishViaVersions(t, s.id, site, { batch: rand(2) === 0 });
      if (r.finalized) kept.set(r.finalized.version.id, site);
    };
    for (let round = 0; round < 24; round++) {
      clock.advance(rand(90) * 60_000);
      // A sweep with two publishes: run between its scan and its deletions (the narrowest window,
      // made certain), or side by side with it (interleaved at every await).
      const sweep = t.server.services.publishing.blobSweep.run.bind(t.server.services.publishing.blobSweep);
      if (rand(2) === 0) {
        await sweep(clock.now(), HOUR, {
          afterScan: async () => {
            await Promise.all([publishSome(), publishSome()]);
          },
        });
      } else await Promise.all([sweep(clock.now(), HOUR), publishSome(), publishSome()]);
      // Delete some ready versions that no channel points at.
      for (const id of [...kept.keys()]) {
        if (rand(2) === 0) continue;
        const res = await t.api('DELETE', `/v1/spaces/${s.id}/versions/${id}`);
        if (res.status < 300) kept.delete(id);
        else expect(res.body.code).toBe('version_in_use');
      }
    }
    await t.server.services.publishing.blobSweep.run(clock.now(), HOUR);
    expect(kept.size).toBeGreaterThanOrEqual(2);
    for (const [id, site] of kept) {
      const files = await download(t, s.id, id);
      for (const [p, body] of Object.entries(site)) expect(files.get(p)?.toString(), `${id} ${p}`).toBe(body);
      const listed = await t.api('GET', `/v1/spaces/${s.id}/versions/${id}/files`);
      for (const f of listed.body.data) {
        for (const enc of Object.values(f.encodings ?? {}) as Array<{ sha256: string }>) {
          expect(await t.server.services.blobs.has(enc.sha256), `${id} ${f.path} variant`).toBe(true);
        }
      }
    }
  });

  it('refuses a grace period shorter than twice the touch interval', async () => {
    await expect(
      t.server.services.publishing.blobSweep.run(clock.now(), 2 * BLOB_TOUCH_INTERVAL_MS - 1),
    ).rejects.toThrow(/grace period/);
  });
});
