import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, expectProblem, startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, sha } from './helpers.ts';

const file = (path: string, size = 1) => ({ path, sha256: sha(`${path}:${size}`), size });

describeEachDb('publishing: manifest rules and limits, each at its bound', (db) => {
  let t: TestServer;
  let spaceId: string;
  const post = (files: unknown[], extra: object = {}) =>
    t.api('POST', `/v1/spaces/${spaceId}/versions`, { body: { files, ...extra } });

  beforeAll(async () => {
    t = await startServer({
      db,
      env: {
        SPACES_MAX_FILES: '3',
        SPACES_MAX_FILE_BYTES: '100',
        SPACES_MAX_VERSION_BYTES: '250',
        SPACES_MAX_MANIFEST_BYTES: '2048',
      },
    });
    spaceId = (await createSpace(t)).id;
  });
  afterAll(() => t.close());

  const versionCount = async () =>
    (await t.api('GET', `/v1/spaces/${spaceId}/versions?limit=100`)).body.data.length;

  it('files per version: 3 ok, 4 refused', async () => {
    const before = await versionCount();
    expect((await post([file('a'), file('b'), file('c')])).status).toBe(201);
    const p = expectProblem(
      await post([file('a'), file('b'), file('c'), file('d')]),
      413,
      'manifest_too_many_files',
    );
    expect(p.pointer).toBe('/files');
    expect(await versionCount()).toBe(before + 1);
  });

  it('bytes per file: 100 ok, 101 refused; bytes per version: 250 ok, 251 refused', async () => {
    expect((await post([file('a', 100)])).status).toBe(201);
    const big = expectProblem(await post([file('a', 1), file('b', 101)]), 413, 'version_file_too_large');
    expect(big.pointer).toBe('/files/1/size');
    expect((await post([file('a', 100), file('b', 100), file('c', 50)])).status).toBe(201);
    const total = expectProblem(
      await post([file('a', 100), file('b', 100), file('c', 51)]),
      413,
      'version_total_bytes_exceeded',
    );
    expect(total.pointer).toBe('/files/2/size');
  });

  it('manifest body: at the limit ok, one byte over refused', async () => {
    const base = JSON.stringify({ files: [file('a')], message: '' });
    const ok = JSON.stringify({ files: [file('a')], message: 'm'.repeat(2048 - base.length) });
    expect(Buffer.byteLength(ok)).toBe(2048);
    const res = await t.api('POST', `/v1/spaces/${spaceId}/versions`, {
      raw: ok,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    const over = JSON.stringify({ files: [file('a')], message: 'm'.repeat(2049 - base.length) });
    expectProblem(
      await t.api('POST', `/v1/spaces/${spaceId}/versions`, {
        raw: over,
        headers: { 'content-type': 'application/json' },
      }),
      413,
      'manifest_body_too_large',
    );
  });

  it('paths: relative, canonical, ≤1024 bytes, unique, no case-only duplicates', async () => {
    for (const bad of [
      '/abs.html',
      '../up.html',
      'a/../b',
      'a//b',
      'dir/',
      'back\\slash',
      'ctl\u0001.html',
      './',
      'a/./b',
    ]) {
      const p = expectProblem(await post([file('ok.html'), file(bad)]), 400, 'invalid_version_path');
      expect(p.pointer).toBe('/files/1/path');
    }
    expectProblem(await post([file('a.html'), file('a.html')]), 400, 'manifest_duplicate_path');
    // NFC: "é" precomposed and decomposed are the same path.
    expectProblem(
      await post([file('caf\u00e9.html'), file('cafe\u0301.html')]),
      400,
      'manifest_duplicate_path',
    );
    const c = expectProblem(await post([file('A.html'), file('a.html')]), 400, 'path_case_collision');
    expect(c.details.collidesWith).toBe('A.html');
    expect((await post([file('./x.html')])).body.data.version.fileCount).toBe(1);
  });

  it('bad digests and unknown fields are validation errors with pointers', async () => {
    const p = expectProblem(await post([{ path: 'a', sha256: 'zz', size: 1 }]), 400, 'validation_error');
    expect(p.pointer).toBe('/files/0/sha256');
    expectProblem(await post([file('a')], { target: 'staging' }), 400, 'validation_error');
  });
});

describeEachDb('publishing: path length bound', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t.close());

  it('1,024 bytes ok, 1,025 refused', async () => {
    const s = await createSpace(t);
    const long = `${'a/'.repeat(511)}bc`;
    expect(Buffer.byteLength(long)).toBe(1024);
    const post = (p: string) => t.api('POST', `/v1/spaces/${s.id}/versions`, { body: { files: [file(p)] } });
    expect((await post(long)).status).toBe(201);
    const tooLong = expectProblem(await post(`${long}d`), 400, 'path_too_long');
    expect(tooLong.pointer).toBe('/files/0/path');
    // Multi-byte characters count in bytes: 512 two-byte letters are 1,024 bytes.
    expect((await post('é'.repeat(512))).status).toBe(201);
    expectProblem(await post(`${'é'.repeat(512)}x`), 400, 'path_too_long');
  });
});
