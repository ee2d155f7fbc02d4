import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, type HashStats, hashAll, type SourceFile } from '../../src/cli/files.ts';
import { HashCache } from '../../src/cli/hash-cache.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { cli, cliEnv } from './helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const KiB = 1024;
const MiB = 1024 * KiB;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function tmp(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Writes `files` (path → bytes) under a new directory; returns it. */
function site(files: Record<string, Buffer>): string {
  const dir = tmp('spaces-hash-');
  for (const [p, b] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), b);
  }
  return dir;
}

/** Every size the hashing treats differently, and enough small files for many units. */
function mixedSite(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {
    'empty.txt': Buffer.alloc(0),
    'one.txt': Buffer.from('x'),
    'at-sync-limit.bin': randomBytes(64 * KiB),
    'past-sync-limit.bin': randomBytes(64 * KiB + 1),
    'medium.bin': randomBytes(300 * KiB),
    'unit-size.bin': randomBytes(MiB),
    'past-unit-size.bin': randomBytes(MiB + 1),
    'big/a.bin': randomBytes(3 * MiB + 17),
    'big/b.bin': randomBytes(5 * MiB),
  };
  for (let i = 0; i < 300; i++)
    files[`d${i % 7}/f${String(i).padStart(3, '0')}.txt`] = randomBytes(1 + ((i * 37) % 4000));
  return files;
}

/** Threads forced on (no threshold), the main thread taking a share or not. */
const forced = (mainShare: boolean, stats: HashStats) => ({
  threads: 3,
  threadsFrom: { files: 0, bytes: 0 },
  mainShare,
  stats,
});

describe('hashAll on worker threads', () => {
  let content: Record<string, Buffer>;
  let dir: string;
  beforeAll(() => {
    content = mixedSite();
    dir = site(content);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['workers only', false],
    ['workers and the main thread', true],
  ])('gives the same digests, in the same order, as hashing each file (%s)', async (_, mainShare) => {
    const { files } = await collect(dir);
    const order = files.map((f) => f.path);
    const stats: HashStats = { workers: 0, filesOnWorkers: 0 };
    const out = await hashAll(files, undefined, 16, undefined, forced(mainShare, stats));
    expect(stats.workers).toBe(mainShare ? 2 : 3);
    if (!mainShare) expect(stats.filesOnWorkers).toBe(files.length);
    expect(out).toBe(files);
    expect(out.map((f) => f.path)).toEqual(order);
    for (const f of out) expect(f.sha256, f.path).toBe(sha(content[f.path]!));
    // Small files keep their bytes for the upload; larger ones are read again from disk.
    for (const f of out) {
      if (f.size <= 64 * KiB) expect(f.bytes?.equals(content[f.path]!), f.path).toBe(true);
      else expect(f.bytes, f.path).toBeUndefined();
    }
  });

  it('agrees with hashing on the main thread alone, file by file (digests and kept bytes)', async () => {
    const threaded = (await collect(dir)).files;
    await hashAll(threaded, undefined, 16, undefined, forced(true, { workers: 0, filesOnWorkers: 0 }));
    const here = (await collect(dir)).files;
    const stats: HashStats = { workers: 0, filesOnWorkers: 0 };
    await hashAll(here, undefined, 16, undefined, { threads: 1, stats });
    expect(stats.workers).toBe(0);
    expect(threaded.map((f) => [f.path, f.sha256, f.bytes?.length])).toEqual(
      here.map((f) => [f.path, f.sha256, f.bytes?.length]),
    );
  });

  it('reports progress up to the totals', async () => {
    const { files } = await collect(dir);
    const calls: [number, number][] = [];
    await hashAll(
      files,
      (n, b) => calls.push([n, b]),
      16,
      undefined,
      forced(true, { workers: 0, filesOnWorkers: 0 }),
    );
    const total = files.reduce((s, f) => s + f.size, 0);
    expect(calls.at(-1)).toEqual([files.length, total]);
    for (let i = 1; i < calls.length; i++) expect(calls[i]![0]).toBeGreaterThan(calls[i - 1]![0]);
  });

  it('hashes bytes in memory (from an archive) without reading the disk', async () => {
    const bytes = Buffer.from('in memory');
    const files: SourceFile[] = [
      { path: 'mem.txt', size: bytes.length, bytes, abs: '/nonexistent/mem.txt' },
      ...(await collect(dir)).files,
    ];
    await hashAll(files, undefined, 16, undefined, forced(false, { workers: 0, filesOnWorkers: 0 }));
    expect(files[0]!.sha256).toBe(sha(bytes));
    expect(files[0]!.bytes).toBe(bytes);
  });

  it('keeps at most 64 MiB of small files, the first ones in file order', async () => {
    const n = 1100; // 1100 × 64 KiB = 68.75 MiB
    const many: Record<string, Buffer> = {};
    const block = randomBytes(64 * KiB);
    for (let i = 0; i < n; i++) {
      const b = Buffer.from(block);
      b.writeUInt32BE(i);
      many[`f${String(i).padStart(4, '0')}.bin`] = b;
    }
    const big = site(many);
    try {
      const { files } = await collect(big);
      await hashAll(files, undefined, 16, undefined, forced(true, { workers: 0, filesOnWorkers: 0 }));
      const kept = files.filter((f) => f.bytes);
      expect(kept.length).toBe(1024);
      expect(kept.map((f) => f.path)).toEqual(files.slice(0, 1024).map((f) => f.path));
      expect(kept.reduce((s, f) => s + f.bytes!.length, 0)).toBeLessThanOrEqual(64 * MiB);
      for (const f of files) expect(f.sha256).toBe(sha(many[f.path]!));
      for (const f of kept) expect(f.bytes!.equals(many[f.path]!)).toBe(true);
    } finally {
      fs.rmSync(big, { recursive: true, force: true });
    }
  });

  it('still uses and fills the hash cache: the second run reads nothing and starts no worker', async () => {
    const cfg = tmp('spaces-cfg-');
    const later = () => Date.now() + 10_000; // every file "settled"
    const run = async () => {
      const cache = new HashCache(cfg, dir, later);
      const stats: HashStats = { workers: 0, filesOnWorkers: 0 };
      const files = await hashAll((await collect(dir)).files, undefined, 16, cache, {
        threads: 2,
        threadsFrom: { files: 0, bytes: 0 },
        stats,
      });
      cache.save();
      return { hits: cache.hits, workers: stats.workers, sums: files.map((f) => f.sha256) };
    };
    const first = await run();
    expect(first.hits).toBe(0);
    expect(first.workers).toBe(1);
    const second = await run();
    expect(second.hits).toBe(Object.keys(content).length);
    expect(second.workers).toBe(0);
    expect(second.sums).toEqual(first.sums);
    fs.rmSync(cfg, { recursive: true, force: true });
  });

  it.each([
    // A small file in the middle: some worker's unit.
    ['on a worker', 'd3/f150.txt', false],
    // The largest file is the first unit, which the main thread claims before a worker is up.
    ['on the main thread', 'big/b.bin', true],
    ['read here, below the threshold', 'd3/f150.txt', undefined],
  ])('fails with an error naming a file that cannot be read (%s)', async (_, name, mainShare) => {
    const { files } = await collect(dir);
    const gone = files.find((f) => f.path === name)!;
    fs.renameSync(gone.abs!, `${gone.abs}.moved`);
    try {
      const o =
        mainShare === undefined
          ? { threads: 1 }
          : {
              threads: 2,
              threadsFrom: { files: 0, bytes: 0 },
              mainShare,
              stats: { workers: 0, filesOnWorkers: 0 },
            };
      const err = await hashAll(files, undefined, 16, undefined, o).catch((e: NodeJS.ErrnoException) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(gone.abs);
      expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
    } finally {
      fs.renameSync(`${gone.abs}.moved`, gone.abs!);
    }
  });

  it('starts no worker for a small publish, and workers from 32 MiB of files to read', async () => {
    const small = site({ 'index.html': Buffer.from('<h1>hi</h1>'), 'a.css': Buffer.from('a{}') });
    const large = site({ 'a.bin': randomBytes(16 * MiB), 'b.bin': randomBytes(16 * MiB) });
    try {
      const run = async (dir: string) => {
        const stats: HashStats = { workers: 0, filesOnWorkers: 0 };
        const files = await hashAll((await collect(dir)).files, undefined, 16, undefined, {
          threads: 2,
          stats,
        });
        return { files, workers: stats.workers };
      };
      const few = await run(small);
      expect(few.workers).toBe(0);
      expect(few.files[1]!.sha256).toBe(sha(Buffer.from('<h1>hi</h1>')));
      expect((await run(large)).workers).toBe(1);
      fs.truncateSync(path.join(large, 'b.bin'), 16 * MiB - 1);
      expect((await run(large)).workers).toBe(0);
    } finally {
      fs.rmSync(small, { recursive: true, force: true });
      fs.rmSync(large, { recursive: true, force: true });
    }
  });

  it('lets the process exit once hashing is done (no worker left running)', () => {
    const script = `
      import { collect, hashAll } from ${JSON.stringify(path.join(ROOT, 'src/cli/files.ts'))};
      const stats = {};
      await hashAll((await collect(${JSON.stringify(dir)})).files, undefined, 16, undefined, { threads: 2, threadsFrom: { files: 0, bytes: 0 }, stats });
      console.log(stats.workers);
    `;
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('1');
    expect(r.status).toBe(0);
    expect(Date.now() - t0).toBeLessThan(15_000);
  });
});

describe('spaces publish with threaded hashing', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  // Enough bytes that hashing goes to workers (see THREADS_FROM in files.ts).
  it.each([
    ['from the bundle', {}],
    ['from the sources', { SPACES_CLI_BUNDLE: '0' }],
  ])('publishes the same digests as hashed here (%s)', async (_, env: Record<string, string>) => {
    const e = cliEnv(t.url);
    const files: Record<string, Buffer> = { 'index.html': Buffer.from('<!doctype html><h1>threads</h1>') };
    for (let i = 0; i < 5000; i++) files[`d${i % 50}/f${i}.txt`] = randomBytes(200);
    for (const n of ['a', 'b', 'c']) files[`big/${n}.bin`] = randomBytes(12 * MiB + 1);
    const dir = path.join(e.cwd, 'site');
    for (const [p, b] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
      fs.writeFileSync(path.join(dir, p), b);
    }
    const stats: HashStats = { workers: 0, filesOnWorkers: 0 };
    await hashAll((await collect(dir)).files, undefined, 16, undefined, { threads: 2, stats });
    expect(stats.workers).toBe(1);

    const login = await cli(e, ['login', '--token', t.ownerKey, '--json'], { env });
    expect(login.code, login.stderr).toBe(0);
    const r = await cli(
      e,
      ['publish', 'site', '--json', '--slug', `threads-${env.SPACES_CLI_BUNDLE ?? 'b'}`],
      {
        env,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().files.total).toBe(Object.keys(files).length);
    // From the server's API (the list is long: fetched here, page by page).
    const served: Record<string, string> = {};
    const { space, version } = r.json();
    let cursor: string | null = null;
    do {
      const q: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await t.api('GET', `/v1/spaces/${space.id}/versions/${version.id}/files?${q}`);
      expect(page.status).toBe(200);
      for (const f of page.body.data as { path: string; sha256: string }[]) served[f.path] = f.sha256;
      cursor = page.body.pagination?.nextCursor ?? null;
    } while (cursor);
    expect(served).toEqual(Object.fromEntries(Object.entries(files).map(([p, b]) => [p, sha(b)])));
  });
});
