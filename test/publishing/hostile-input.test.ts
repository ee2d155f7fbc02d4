import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { FormData, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ChildServer, startChildServer } from '../helpers/child-server.ts';
import {
  type ApiResponse,
  describeEachDb,
  expectProblem,
  startServer,
  type TestServer,
} from '../helpers/server.ts';
import { manyEntryTarGz, manyEntryZip, rawTar, rawZip } from './archives.ts';
import { manifestOf, tarOf } from './helpers.ts';

/**
 * Client bytes the server must refuse without falling over: damaged archives, cut-off bodies and
 * uploads, multipart without a boundary, archives of 100,000 entries. The crash cases run against a
 * server in its own process (`spaces server`, as `npm start` runs it): a crash there can't take the
 * test runner down, and `/readyz` proves after each case that the process still answers.
 */

interface Reply {
  status: number;
  body: any;
  text: string;
}

async function parse(res: Awaited<ReturnType<typeof request>>): Promise<Reply> {
  const text = await res.body.text();
  return { status: res.statusCode, text, body: text.startsWith('{') ? JSON.parse(text) : null };
}

function archiveForm(buf: Buffer, name: string): FormData {
  const fd = new FormData();
  fd.append('archive', new Blob([new Uint8Array(buf)]), name);
  return fd;
}

/** The 400 every damaged archive gets. */
function expectDamaged(r: Reply, label: string) {
  if (r.status !== 400 || r.body?.code !== 'invalid_publish_archive') {
    throw new Error(`${label}: expected 400 invalid_publish_archive, got ${r.status} ${r.text}`);
  }
}

describe('a server in its own process, fed hostile bytes', () => {
  let server: ChildServer;
  let base = '';
  let dataDir = '';

  beforeAll(async () => {
    server = await startChildServer({
      name: 'hostile',
      env: { SPACES_ANON_PUBLISHES_PER_HOUR: '1000' },
    });
    ({ base, dataDir } = server);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  const expectAlive = (label: string) => server.expectAlive(label);

  /** No spool file outlives its request. */
  function expectNoSpool() {
    const tmp = path.join(dataDir, 'tmp');
    const left = fs.existsSync(tmp) ? fs.readdirSync(tmp).filter((n) => /^(archive|ingest)-/.test(n)) : [];
    expect(left).toEqual([]);
  }

  async function publishArchive(buf: Buffer, name: string, token: string | null = null): Promise<Reply> {
    return parse(
      await request(`${base}/v1/publish`, {
        method: 'POST',
        body: archiveForm(buf, name),
        headers: token ? { authorization: `Bearer ${token}` } : {},
      }),
    );
  }

  /** Sends raw bytes and then ends the connection before the promised body is complete. */
  async function cutOff(head: string, body: Buffer): Promise<void> {
    const url = new URL(base);
    await new Promise<void>((resolve, reject) => {
      const s = net.connect(Number(url.port), url.hostname, () => {
        s.write(head);
        s.write(body, () => setTimeout(() => s.destroy(), 50));
      });
      s.on('error', reject);
      s.on('close', () => resolve());
    });
  }

  it('tar.gz: entries shorter or longer than their header says, a cut-off tar or gzip, a bad checksum', async () => {
    const page = Buffer.from('<h1>hi</h1>');
    const text = Buffer.from(randomBytes(40_000).toString('hex'));
    const whole = rawTar([
      ['index.html', page],
      ['big.txt', text],
    ]);
    const badSum = Buffer.from(whole);
    badSum[0] ^= 1;
    const cases: Array<[string, Buffer]> = [
      // The header promises 100,000 bytes; the archive ends after 5.
      [
        'entry shorter than its header',
        zlib.gzipSync(rawTar([['index.html', Buffer.from('short'), 100_000]])),
      ],
      ['tar cut mid-entry inside valid gzip', zlib.gzipSync(whole.subarray(0, 512 + 512 + 512 + 20_000))],
      ['gzip stream cut off', zlib.gzipSync(whole).subarray(0, 30_000)],
      // 3,000 bytes under a header that claims 10: the rest is read as the next header.
      ['entry longer than its header', zlib.gzipSync(rawTar([['index.html', Buffer.alloc(3000, 'a'), 10]]))],
      ['corrupt header checksum', zlib.gzipSync(badSum)],
      ['not gzip after the magic', Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(5000)])],
    ];
    for (const [label, buf] of cases) {
      expectDamaged(await publishArchive(buf, 'site.tar.gz'), label);
      await expectAlive(label);
    }
    expectNoSpool();
    // Still publishing: the intact archive goes through — here with three copies of a file large
    // enough to be spooled (the second and third find their bytes stored already, and their spool
    // is removed while the store may still be opening it).
    const large = Buffer.from(randomBytes(700_000).toString('hex'));
    const copies = rawTar([
      ['index.html', page],
      ['a.txt', large],
      ['b.txt', large],
      ['c.txt', large],
    ]);
    for (const archive of [whole, copies]) {
      const ok = await publishArchive(zlib.gzipSync(archive), 'site.tar.gz');
      expect(ok.status, ok.text).toBe(201);
      await expectAlive('intact archive');
    }
    expectNoSpool();
  });

  it('zip: an entry that inflates past its declared size, falls short of it, fails its CRC-32, or lies about its compressed size', async () => {
    const page = { name: 'index.html', data: Buffer.from('<h1>hi</h1>') };
    const big = Buffer.alloc(200_000, 'z');
    const text = Buffer.from(randomBytes(20_000).toString('hex'));
    const deflated = rawZip([page, { name: 'a.txt', data: text, deflate: true }]);
    const corrupt = Buffer.from(deflated);
    // Inside a.txt's deflate stream: past index.html's local header and bytes, a.txt's header and name.
    const aData = 30 + 10 + page.data.length + 30 + 5;
    for (let i = aData + 100; i < aData + 140; i++) corrupt[i] ^= 0x5a;
    const cases: Array<[string, Buffer]> = [
      [
        'inflates past its declared size',
        rawZip([page, { name: 'z.txt', data: big, deflate: true, uncompressedSize: 10 }]),
      ],
      [
        'shorter than its declared size',
        rawZip([page, { name: 'z.txt', data: big, deflate: true, uncompressedSize: 300_000 }]),
      ],
      [
        'stored entry shorter than declared',
        rawZip([page, { name: 's.txt', data: text, uncompressedSize: text.length + 7 }]),
      ],
      ['CRC-32 mismatch (stored)', rawZip([page, { name: 'c.txt', data: text, crc32: 0x12345678 }])],
      ['CRC-32 mismatch (deflated)', rawZip([page, { name: 'c.txt', data: text, deflate: true, crc32: 1 }])],
      [
        'compressed size larger than the data',
        rawZip([page, { name: 'l.txt', data: text, deflate: true, compressedSize: 900_000 }]),
      ],
      ['corrupt deflate stream', corrupt],
      ['zip cut off (no central directory)', deflated.subarray(0, Math.floor(deflated.length / 2))],
    ];
    for (const [label, buf] of cases) {
      expectDamaged(await publishArchive(buf, 'site.zip'), label);
      await expectAlive(label);
    }
    expectNoSpool();
    const ok = await publishArchive(deflated, 'site.zip');
    expect(ok.status, ok.text).toBe(201);
  });

  it('multipart and uploads: a part cut off, bodies the client abandons, a cut-off tar batch', async () => {
    // A complete request whose multipart body stops inside a file part.
    const boundary = 'x-boundary-1';
    const partial = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="index.html"\r\n` +
        'Content-Type: text/html\r\n\r\n<h1>never ends',
    );
    const cut = await parse(
      await request(`${base}/v1/publish`, {
        method: 'POST',
        body: partial,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      }),
    );
    expect(cut.status, cut.text).toBe(400);
    expect(cut.body.code).toBe('invalid_request');
    await expectAlive('multipart part cut off');

    // The client goes away mid-body: on the one-call publish (inside an archive part) …
    const archive = zlib.gzipSync(rawTar([['index.html', Buffer.from(randomBytes(50_000).toString('hex'))]]));
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="a.tgz"\r\n` +
      'Content-Type: application/gzip\r\n\r\n';
    await cutOff(
      'POST /v1/publish HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n`,
      Buffer.concat([Buffer.from(head), archive.subarray(0, 40_000)]),
    );
    await expectAlive('publish abandoned mid-archive');

    // … and on the versions flow: a signed upload and a tar batch.
    const auth = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
    const space = (
      await parse(await request(`${base}/v1/spaces`, { method: 'POST', headers: auth, body: '{}' }))
    ).body.data.space;
    const site = { 'index.html': '<h1>v</h1>', 'big.txt': randomBytes(30_000).toString('hex') };
    const created = await parse(
      await request(`${base}/v1/spaces/${space.id}/versions`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ files: manifestOf(site) }),
      }),
    );
    expect(created.status, created.text).toBe(201);
    const { version, upload } = created.body.data;
    const target = upload.targets.find((x: { path: string }) => x.path === 'big.txt');
    await cutOff(
      `PUT ${new URL(target.url).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 60000\r\n\r\n`,
      Buffer.from(site['big.txt'].slice(0, 20_000)),
    );
    await expectAlive('signed upload abandoned');

    const batchUrl = `${base}/v1/spaces/${space.id}/versions/${version.id}/uploads`;
    const tar = await tarOf(site);
    const batchCases: Array<[string, Buffer]> = [
      ['tar batch cut mid-entry', tar.subarray(0, 512 + 512 + 512 + 10_000)],
      ['tar batch cut mid-header', tar.subarray(0, 700)],
      ['tar batch entry shorter than its header', rawTar([['big.txt', Buffer.from('short'), 60_000]])],
    ];
    for (const [label, body] of batchCases) {
      const r = await parse(
        await request(batchUrl, {
          method: 'PUT',
          headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/x-tar' },
          body,
        }),
      );
      expect(r.status, `${label}: ${r.text}`).toBe(400);
      await expectAlive(label);
    }
    await cutOff(
      `PUT ${new URL(batchUrl).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n` +
        'Content-Type: application/x-tar\r\nContent-Length: 200000\r\n\r\n',
      tar.subarray(0, 20_000),
    );
    await expectAlive('tar batch abandoned');
    // The version still takes its files.
    const full = await parse(
      await request(batchUrl, {
        method: 'PUT',
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/x-tar' },
        body: tar,
      }),
    );
    expect(full.status, full.text).toBe(200);
    expectNoSpool();
  });

  it('100,000-entry zip and tar.gz: refused at the file cap within seconds', async () => {
    const zip = manyEntryZip(100_000);
    const tgz = manyEntryTarGz(100_000);
    for (const [label, buf, name] of [
      ['zip', zip, 'many.zip'],
      ['tar.gz', tgz, 'many.tar.gz'],
    ] as const) {
      // With a credential: the server's own cap (20,000 files by default) applies.
      const started = performance.now();
      const r = await publishArchive(buf, name, server.token);
      const ms = performance.now() - started;
      console.log(`${label}: ${buf.length} bytes, 100,000 entries refused in ${Math.round(ms)} ms`);
      expect(r.status, r.text).toBe(413);
      expect(r.body.code).toBe('publish_archive_file_count_exceeded');
      expect(r.body.details.limit).toBe(20_000);
      expect(ms).toBeLessThan(5000);
      await expectAlive(label);
    }
    // Without one, the anonymous cap (1,000) trips.
    const anon = await publishArchive(tgz, 'many.tar.gz');
    expect(anon.status, anon.text).toBe(413);
    expect(anon.body.details.limit).toBe(1000);
    expectNoSpool();
  }, 60_000);
});

describe('multipart/form-data without a boundary', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  const types = [
    'multipart/form-data',
    'multipart/form-data; boundary=',
    'multipart/form-data; charset=utf-8',
  ];

  it('is an RFC 6749 invalid_request on the OAuth token, device, revoke and introspect endpoints', async () => {
    for (const url of ['token', 'device', 'revoke', 'introspect'].map((e) => `/v1/auth/oauth2/${e}`)) {
      for (const type of types) {
        const r = await t.api('POST', url, {
          token: null,
          raw: 'grant_type=x',
          headers: { 'content-type': type },
        });
        expect(r.status, `${url} ${type}: ${r.text}`).toBe(400);
        expect(r.body.error).toBe('invalid_request');
        expect(r.body.error_description).toMatch(/boundary/);
      }
    }
  });

  it('is a 400 invalid_request problem on the API and the form pages', async () => {
    const routes: Array<[string, string | null]> = [
      ['/v1/spaces', t.ownerKey],
      ['/v1/publish', t.ownerKey],
      ['/v1/publish', null],
      ['/v1/auth/oauth2/signin', null],
      ['/v1/auth/oauth2/authorize', null],
      ['/device', null],
    ];
    for (const [url, token] of routes) {
      for (const type of types) {
        const r: ApiResponse = await t.api('POST', url, {
          token,
          raw: 'x',
          headers: { 'content-type': type },
        });
        try {
          const p = expectProblem(r, 400, 'invalid_request');
          expect(p.detail).toMatch(/boundary/);
        } catch (err) {
          throw new Error(`${url} ${type}: ${(err as Error).message}`);
        }
      }
    }
    // No space was made from any of it.
    expect((await t.api('GET', '/v1/spaces')).body.data).toEqual([]);
  });
});

/** Rows of every table a space leaves behind. */
async function footprint(t: TestServer) {
  const db = t.server.services.database.db;
  const count = async (table: 'spaces' | 'versions' | 'version_files' | 'space_hostnames' | 'space_keys') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    spaces: await count('spaces'),
    versions: await count('versions'),
    files: await count('version_files'),
    hostnames: await count('space_hostnames'),
    keys: await count('space_keys'),
  };
}

describeEachDb('a refused first publish leaves nothing behind', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({
      db,
      env: { SPACES_ANON_SPACES_PER_IP: '2', SPACES_ANON_PUBLISHES_PER_HOUR: '1000' },
    });
  });
  afterAll(() => t.close());

  // Finalize refuses these: a settings file that is not JSON.
  const bad = { 'index.html': '<h1>hi</h1>', 'spaces.json': '{ "cleanUrls": ' };
  const good = { 'index.html': '<h1>hi</h1>' };

  const bodies = {
    multipart: async (site: Record<string, string>) => {
      const fd = new FormData();
      for (const [p, c] of Object.entries(site)) fd.append('files', new Blob([c]), p);
      return { body: fd };
    },
    zip: async (site: Record<string, string>) => ({
      body: archiveForm(
        rawZip(Object.entries(site).map(([name, c]) => ({ name, data: Buffer.from(c) }))),
        's.zip',
      ),
    }),
    'tar.gz': async (site: Record<string, string>) => ({
      body: archiveForm(zlib.gzipSync(await tarOf(site)), 's.tgz'),
    }),
    inline: async (site: Record<string, string>) => ({
      body: JSON.stringify({ files: Object.entries(site).map(([p, content]) => ({ path: p, content })) }),
      headers: { 'content-type': 'application/json' },
    }),
  };

  async function publish(kind: keyof typeof bodies, site: Record<string, string>, token: string | null) {
    const { body, headers } = (await bodies[kind](site)) as { body: FormData | string; headers?: object };
    const res = await request(`${t.url}/v1/publish`, {
      method: 'POST',
      body,
      headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    return parse(res);
  }

  it('with a credential: no space, version, file or hostname stays; the error is the refusal', async () => {
    const before = await footprint(t);
    for (const kind of Object.keys(bodies) as Array<keyof typeof bodies>) {
      const r = await publish(kind, bad, t.ownerKey);
      expect(r.status, `${kind}: ${r.text}`).toBe(422);
      expect(r.body.code).toBe('version_failed');
    }
    expect((await t.api('GET', '/v1/spaces')).body.data).toEqual([]);
    expect(await footprint(t)).toEqual(before);
  });

  it('an existing space keeps itself and its live version when a later publish is refused', async () => {
    const first = await publish('multipart', good, t.ownerKey);
    expect(first.status, first.text).toBe(201);
    const spaceId = first.body.data.space.id;
    const fd = new FormData();
    for (const [p, c] of Object.entries(bad)) fd.append('files', new Blob([c]), p);
    fd.append('payload', JSON.stringify({ spaceId }));
    const r = await parse(
      await request(`${t.url}/v1/publish`, {
        method: 'POST',
        body: fd,
        headers: { authorization: `Bearer ${t.ownerKey}` },
      }),
    );
    expect(r.status, r.text).toBe(422);
    expect((await t.api('GET', `/v1/spaces/${spaceId}`)).status).toBe(200);
    const channels = await t.api('GET', `/v1/spaces/${spaceId}/channels`);
    expect(channels.body.data).toEqual([
      expect.objectContaining({ name: 'live', versionId: first.body.data.version.id }),
    ]);
  });

  it('anonymous: refused publishes use none of the per-address quota', async () => {
    const before = await footprint(t);
    // More refusals than the address may hold spaces (2), in every body kind.
    for (const kind of Object.keys(bodies) as Array<keyof typeof bodies>) {
      const r = await publish(kind, bad, null);
      expect(r.status, `${kind}: ${r.text}`).toBe(422);
    }
    expect(await footprint(t)).toEqual(before);
    const ok = await publish('inline', good, null);
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.claim.key).toMatch(/^sfc_/);
    const second = await publish('zip', { 'index.html': 'two' }, null);
    expect(second.status, second.text).toBe(201);
    // The quota itself still holds.
    const third = await publish('inline', { 'index.html': 'three' }, null);
    expect(third.status, third.text).toBe(429);
    expect(third.body.code).toBe('anonymous_space_limit_reached');
  });
});

describe('spool files a crash left behind', () => {
  let t: TestServer | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  const day = 24 * 3600_000;
  function spoolFile(dir: string, name: string, ageMs: number): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, 'left over');
    const at = new Date(Date.now() - ageMs);
    fs.utimesSync(file, at, at);
    return file;
  }

  it('are swept at start and by the hourly job; fresh ones (an upload in flight) and other files stay', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-spool-'));
    const tmp = path.join(dataDir, 'tmp');
    fs.mkdirSync(tmp);
    const oldArchive = spoolFile(tmp, `archive-${'a1'.repeat(8)}`, day + 60_000);
    const oldIngest = spoolFile(tmp, `ingest-${'b2'.repeat(8)}`, 3 * day);
    const fresh = spoolFile(tmp, `ingest-${'c3'.repeat(8)}`, 60_000);
    // Not ours: a disk blob store rooted at the data directory keeps its trash here.
    const trash = spoolFile(tmp, `del-${'d'.repeat(64)}.0a1b2c`, 3 * day);
    try {
      t = await startServer({ env: { SPACES_DATA_DIR: dataDir } });
      expect(fs.existsSync(oldArchive)).toBe(false);
      expect(fs.existsSync(oldIngest)).toBe(false);
      expect(fs.existsSync(fresh)).toBe(true);
      expect(fs.existsSync(trash)).toBe(true);

      // Left by a crash of another process sharing the directory, after this one started.
      const later = spoolFile(tmp, `archive-${'e4'.repeat(8)}`, 2 * day);
      const jobs = t.server.services.jobs;
      const { id } = await jobs.enqueue('spool.sweep', {});
      for (let i = 0; i < 200 && (await jobs.get(id))?.status !== 'succeeded'; i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      expect((await jobs.get(id))?.status).toBe('succeeded');
      expect(fs.existsSync(later)).toBe(false);
      expect(fs.existsSync(fresh)).toBe(true);
      expect(fs.existsSync(trash)).toBe(true);
    } finally {
      await t?.close();
      t = null;
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
