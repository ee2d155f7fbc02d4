import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { isUniqueViolation } from '../../src/store/db.ts';
import type { Store } from '../../src/store/repos/index.ts';
import type { VersionFileRow } from '../../src/store/repos/publishing/version-files.ts';
import type { VersionRow } from '../../src/store/repos/publishing/versions.ts';
import { describeEachDb } from '../helpers/server.ts';
import { createSpace, openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the publishing group's repositories: versions, version files (flat and layered), the
 * blob index, in-database blob bytes, channels with their history, and idempotency keys. The same on
 * SQLite and PostgreSQL; publishing's collaborators rely on exactly these answers.
 */

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:01:00.000Z';
const T2 = '2026-01-01T00:02:00.000Z';
const SHA = (c: string) => c.repeat(64).slice(0, 64);

function versionRow(spaceId: string, number: number, extra: Partial<VersionRow> = {}): VersionRow {
  return {
    id: newId('ver'),
    space_id: spaceId,
    number,
    status: 'uploading',
    target: 'production',
    message: null,
    source: null,
    file_count: 0,
    total_bytes: 0,
    manifest_digest: 'd',
    rules: null,
    diagnostics: null,
    config: null,
    created_by: 'usr_1',
    created_at: T0,
    finalized_at: null,
    expires_at: T1,
    deleted_at: null,
    base_id: null,
    ...extra,
  };
}

function fileRow(
  versionId: string,
  path: string,
  sha: string,
  extra: Partial<VersionFileRow> = {},
): VersionFileRow {
  return {
    version_id: versionId,
    path,
    source_sha256: SHA(sha),
    source_size: 3,
    sha256: SHA(sha),
    size: 3,
    content_type: 'text/html',
    encodings: null,
    removed: 0,
    ...extra,
  };
}

describeEachDb('store: publishing group', (kind) => {
  let ts: TestStore;
  let store: Store;
  let tenant: string;

  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
    tenant = newId('tnt');
    await ts.database.db.insertInto('tenants').values({ id: tenant, name: tenant, created_at: T0 }).execute();
  });
  afterAll(() => ts.close());

  /** A version with files, inserted in one transaction the way publishing creates them. */
  async function addVersion(
    spaceId: string,
    files: Array<[string, string]> | VersionFileRow[],
    extra: Partial<VersionRow> = {},
  ): Promise<VersionRow> {
    return store.transaction(async (repos) => {
      const row = versionRow(spaceId, await repos.versions.nextNumber(spaceId), extra);
      await repos.versions.insert(row);
      await repos.versionFiles.insert(
        files.map((f) => (Array.isArray(f) ? fileRow(row.id, f[0], f[1]) : { ...f, version_id: row.id })),
      );
      return row;
    });
  }

  describe('versions', () => {
    it('numbers per space, and a taken number is a unique violation', async () => {
      const a = await createSpace(store, tenant);
      const b = await createSpace(store, tenant);
      expect(await store.repos.versions.nextNumber(a.id)).toBe(1);
      await addVersion(a.id, []);
      await addVersion(a.id, []);
      expect(await store.repos.versions.nextNumber(a.id)).toBe(3);
      expect(await store.repos.versions.nextNumber(b.id)).toBe(1);
      const err = await store.repos.versions.insert(versionRow(a.id, 2)).catch((e: unknown) => e);
      expect(isUniqueViolation(err)).toBe(true);
    });

    it('inSpace finds by id, number or latest, and never another space’s version', async () => {
      const a = await createSpace(store, tenant);
      const b = await createSpace(store, tenant);
      const v1 = await addVersion(a.id, []);
      const v2 = await addVersion(a.id, [], { status: 'deleted' });
      const other = await addVersion(b.id, []);
      expect((await store.repos.versions.inSpace(a.id, { id: v1.id }))?.number).toBe(1);
      expect((await store.repos.versions.inSpace(a.id, { number: 2 }))?.id).toBe(v2.id);
      // `latest` skips deleted versions.
      expect((await store.repos.versions.inSpace(a.id, 'latest'))?.id).toBe(v1.id);
      expect(await store.repos.versions.inSpace(a.id, { id: other.id })).toBeNull();
      expect(await store.repos.versions.byId(other.id)).toMatchObject({ space_id: b.id });
    });

    it('finish moves an uploading version once; holdReady answers whether it is ready', async () => {
      const s = await createSpace(store, tenant);
      const v = await addVersion(s.id, []);
      expect(await store.repos.versions.holdReady(v.id)).toBe(false);
      const change = {
        status: 'ready' as const,
        rules: '{"r":1}',
        diagnostics: '[]',
        config: '{}',
        finalizedAt: T2,
      };
      expect(await store.repos.versions.finish(v.id, change)).toBe(true);
      expect(await store.repos.versions.finish(v.id, { ...change, status: 'failed' })).toBe(false);
      expect(await store.repos.versions.byId(v.id)).toMatchObject({
        status: 'ready',
        rules: '{"r":1}',
        config: '{}',
        finalized_at: T2,
        expires_at: null,
      });
      expect(await store.transaction((repos) => repos.versions.holdReady(v.id))).toBe(true);
      const failed = await addVersion(s.id, []);
      await store.repos.versions.finish(failed.id, {
        status: 'failed',
        diagnostics: '[{"code":"x"}]',
        finalizedAt: T2,
      });
      expect(await store.repos.versions.byId(failed.id)).toMatchObject({ status: 'failed', rules: null });
    });

    it('lists newest first by keyset; expires only uploading versions past their window', async () => {
      const s = await createSpace(store, tenant);
      const vs = [
        await addVersion(s.id, [], { expires_at: T0 }),
        await addVersion(s.id, [], { expires_at: T2 }),
        await addVersion(s.id, [], { expires_at: T0, status: 'ready' }),
      ];
      const page1 = await store.repos.versions.list(s.id, null, 2);
      expect(page1.map((v) => v.id)).toEqual([vs[2]!.id, vs[1]!.id]);
      expect((await store.repos.versions.list(s.id, page1[1]!.id, 2)).map((v) => v.id)).toEqual([vs[0]!.id]);
      const due = (await store.repos.versions.expiredUploads(T1)).map((v) => v.id);
      expect(due).toContain(vs[0]!.id);
      expect(due).not.toContain(vs[1]!.id);
      expect(due).not.toContain(vs[2]!.id);
      expect(await store.repos.versions.expire(vs[0]!.id)).toBe(true);
      expect(await store.repos.versions.expire(vs[0]!.id)).toBe(false);
      expect(await store.repos.versions.status(vs[0]!.id)).toBe('expired');
    });

    it('knows live layers, diagnostics since live, and purges a space’s versions with their files', async () => {
      const s = await createSpace(store, tenant);
      const base = await addVersion(s.id, [['a.html', 'a']], { status: 'ready' });
      const layer = await addVersion(s.id, [['b.html', 'b']], { base_id: base.id });
      expect(await store.repos.versions.hasLiveLayer(base.id)).toBe(true);
      await store.repos.versions.markDeleted(layer.id, T1);
      expect(await store.repos.versions.hasLiveLayer(base.id)).toBe(false);
      const failed = await addVersion(s.id, [], { status: 'failed', diagnostics: '[]' });
      expect((await store.repos.versions.diagnosticsSince(s.id, null)).map((v) => v.id)).toEqual([failed.id]);
      expect((await store.repos.versions.diagnosticsSince(s.id, base.id)).map((v) => v.id)).toEqual([
        failed.id,
        base.id,
      ]);
      await store.transaction((repos) => repos.versions.purgeForSpace(s.id, T2));
      expect(await store.repos.versions.byId(base.id)).toMatchObject({ status: 'deleted', deleted_at: T2 });
      expect(await store.repos.versionFiles.own(base.id)).toEqual([]);
    });
  });

  describe('version files', () => {
    it('are written inside a transaction only', async () => {
      const s = await createSpace(store, tenant);
      const v = await addVersion(s.id, []);
      await expect(store.repos.versionFiles.insert([fileRow(v.id, 'x', 'a')])).rejects.toThrow(/transaction/);
    });

    it('list a layered version as its own rows over its base, minus what it removes', async () => {
      const s = await createSpace(store, tenant);
      const base = await addVersion(
        s.id,
        [
          ['a.html', 'a'],
          ['b.html', 'b'],
          ['c.html', 'c'],
        ],
        { status: 'ready' },
      );
      const layer = await store.transaction(async (repos) => {
        const row = versionRow(s.id, await repos.versions.nextNumber(s.id), { base_id: base.id });
        await repos.versions.insert(row);
        await repos.versionFiles.insert([
          fileRow(row.id, 'b.html', 'e'),
          fileRow(row.id, 'c.html', '', { removed: 1, source_sha256: '', sha256: '' }),
          fileRow(row.id, 'd.html', 'd'),
        ]);
        return row;
      });
      const all = (await store.repos.versionFiles.all(layer)).map((f) => `${f.path}:${f.sha256[0]}`).sort();
      expect(all).toEqual(['a.html:a', 'b.html:e', 'd.html:d']);
      expect((await store.repos.versionFiles.page(layer, 'a.html', 1)).map((f) => f.path)).toEqual([
        'b.html',
      ]);
      expect(await store.repos.versionFiles.at(layer, 'a.html')).toMatchObject({ version_id: base.id });
      expect(await store.repos.versionFiles.at(layer, 'c.html')).toBeNull();
      expect(await store.repos.versionFiles.declared(layer.id, 'c.html')).toBeNull();
      expect(await store.repos.versionFiles.declared(layer.id, 'd.html')).toEqual({
        source_sha256: SHA('d'),
        source_size: 3,
      });
    });

    it('join the blob index: which declared bytes are stored, with their variants', async () => {
      const s = await createSpace(store, tenant);
      const v = await addVersion(s.id, [
        ['in.html', '1'],
        ['out.html', '2'],
      ]);
      await store.repos.blobRecords.record([{ sha256: SHA('1'), size: 3, variants: '{}' }], T0);
      const joined = await store.repos.versionFiles.ownWithBlobs(v.id);
      const byPath = Object.fromEntries(joined.map((r) => [r.path, [r.stored_sha256, r.stored_variants]]));
      expect(byPath).toEqual({ 'in.html': [SHA('1'), '{}'], 'out.html': [null, null] });
      expect((await store.repos.versionFiles.withoutBlobs(v.id)).map((r) => r.path)).toEqual(['out.html']);
    });

    it('update changed rows in place, few or many (PostgreSQL rewrites many in bulk), and replace all', async () => {
      const s = await createSpace(store, tenant);
      const paths = Array.from({ length: 260 }, (_, i) => `f${String(i).padStart(3, '0')}.css`);
      const v = await addVersion(
        s.id,
        paths.map((p) => fileRow('', p, 'a')),
      );
      const rows = await store.repos.versionFiles.own(v.id);
      for (const r of rows) r.encodings = '{"br":{"sha256":"x","size":1}}';
      await store.transaction((repos) => repos.versionFiles.updateChanged(v.id, rows, rows));
      const after = await store.repos.versionFiles.own(v.id);
      expect(after).toHaveLength(260);
      expect(after.every((r) => r.encodings === '{"br":{"sha256":"x","size":1}}')).toBe(true);
      const one = after.find((r) => r.path === 'f000.css')!;
      one.content_type = 'text/plain';
      await store.transaction((repos) => repos.versionFiles.updateChanged(v.id, after, [one]));
      expect(
        (await store.repos.versionFiles.own(v.id)).find((r) => r.path === 'f000.css')?.content_type,
      ).toBe('text/plain');
      await store.transaction((repos) => repos.versionFiles.replace(v.id, [fileRow(v.id, 'only.html', 'z')]));
      expect((await store.repos.versionFiles.own(v.id)).map((r) => r.path)).toEqual(['only.html']);
    });

    it('referencing: rows of ready and uploading versions, and the inherited rows of a deleted base', async () => {
      const s = await createSpace(store, tenant);
      const base = await addVersion(
        s.id,
        [
          ['keep.html', '5'],
          ['over.html', '6'],
        ],
        { status: 'ready' },
      );
      const layer = await addVersion(s.id, [['over.html', '7']], { base_id: base.id, status: 'ready' });
      await store.repos.versions.markDeleted(base.id, T1);
      const gone = await addVersion(s.id, [['gone.html', '8']], { status: 'failed' });
      const shas = new Set((await store.repos.versionFiles.referencing()).map((r) => r.sha256));
      expect(shas.has(SHA('5'))).toBe(true); // inherited by the live layer
      expect(shas.has(SHA('7'))).toBe(true); // the layer's own
      expect(shas.has(SHA('6'))).toBe(false); // overridden by the layer, base deleted
      expect(shas.has(SHA('8'))).toBe(false); // failed versions rely on nothing
      expect(layer.id && gone.id).toBeTruthy();
    });
  });

  describe('blob index', () => {
    it('records once, keeps the first variants, freshens used_at on every record', async () => {
      const sha = SHA('9');
      await store.repos.blobRecords.record([{ sha256: sha, size: 3 }], T0);
      await store.repos.blobRecords.record([{ sha256: sha, size: 3, variants: '{"gzip":1}' }], T1);
      await store.repos.blobRecords.record([{ sha256: sha, size: 3, variants: '{"br":2}' }], T2);
      expect(await store.repos.blobRecords.among([sha, SHA('0')])).toEqual([
        { sha256: sha, variants: '{"gzip":1}', used_at: T2 },
      ]);
      expect([...(await store.repos.blobRecords.recorded([sha, SHA('0')]))]).toEqual([sha]);
      expect((await store.repos.blobRecords.withVariants()).some((r) => r.sha256 === sha)).toBe(true);
    });

    it('touches only rows older than asked, and deletes a row only while it is still unused', async () => {
      const a = SHA('ab');
      const b = SHA('ac');
      await store.repos.blobRecords.record([{ sha256: a, size: 1 }], T0);
      await store.repos.blobRecords.record([{ sha256: b, size: 1 }], T2);
      expect(await store.repos.blobRecords.touch([a, b], T2, T1)).toBe(1);
      expect((await store.repos.blobRecords.among([a]))[0]?.used_at).toBe(T2);
      await store.repos.blobRecords.record([{ sha256: a, size: 1 }], T0);
      expect((await store.repos.blobRecords.unusedSince(T1)).map((r) => r.sha256)).toContain(a);
      expect(await store.repos.blobRecords.deleteIfUnusedSince(b, T1)).toBe(false);
      expect(await store.repos.blobRecords.deleteIfUnusedSince(a, T1)).toBe(true);
      expect(await store.repos.blobRecords.recorded([a, b])).toEqual(new Set([b]));
      expect(await store.repos.blobRecords.releaseFreePages()).toBeGreaterThanOrEqual(0);
    });

    it('in-database bytes: written with their records, freshened, listed, deleted only when old', async () => {
      const sha = SHA('cd');
      const repo = store.repos.blobData;
      await repo.insert([[sha, Buffer.from('abc')]], T0, [{ sha256: sha, size: 3 }], T0);
      expect(Buffer.from((await repo.bytes(sha))!).toString()).toBe('abc');
      expect(await repo.has(sha)).toBe(true);
      expect(await repo.page('', 1000)).toContain(sha);
      expect(await repo.freshen(sha, T2)).toBe(true);
      expect(await repo.delete(sha, T1)).toBe(false);
      expect(await repo.delete(sha, '2026-01-02T00:00:00.000Z')).toBe(true);
      // Rows no blob record names are an aborted batch's: removed once old.
      const orphan = SHA('ce');
      await repo.insert([[orphan, Buffer.from('x')]], T0, [], T0);
      expect(await repo.deleteUnrecordedBefore(T1)).toBe(1);
      expect(await repo.has(orphan)).toBe(false);
      expect(await repo.freshen(orphan, T2)).toBe(false);
    });
  });

  describe('channels', () => {
    it('move creates or repoints a channel and records each move; pointers and names by version', async () => {
      const s = await createSpace(store, tenant);
      const v1 = await addVersion(s.id, [], { status: 'ready' });
      const v2 = await addVersion(s.id, [], { status: 'ready' });
      const move = (id: string, versionId: string, previous: string | null, at: string) =>
        store.transaction((repos) =>
          repos.channels.move({
            id,
            spaceId: s.id,
            channel: 'live',
            versionId,
            previousVersionId: previous,
            actor: 'usr_1',
            reason: 'publish',
            at,
          }),
        );
      expect(await store.repos.channels.pointer(s.id, 'live')).toBeNull();
      await move(newId('chh'), v1.id, null, T0);
      await move(newId('chh'), v2.id, v1.id, T1);
      expect(await store.repos.channels.pointer(s.id, 'live')).toBe(v2.id);
      expect(await store.repos.versions.onChannel(s.id, 'live')).toMatchObject({ id: v2.id });
      expect(
        (await store.repos.channels.list(s.id)).map((c) => [c.name, c.version_id, c.updated_at]),
      ).toEqual([['live', v2.id, T1]]);
      const history = await store.repos.channels.history(s.id, 'live', null, 10);
      expect(history.map((h) => [h.version_id, h.previous_version_id])).toEqual([
        [v2.id, v1.id],
        [v1.id, null],
      ]);
      expect(await store.repos.channels.history(s.id, 'live', history[0]!.id, 10)).toHaveLength(1);
      expect(await store.repos.channels.pointingAt([v1.id, v2.id])).toEqual([
        { name: 'live', version_id: v2.id },
      ]);
      // One channel's pointer removed (its history stays); the others are left.
      await store.transaction((repos) =>
        repos.channels.move({
          id: newId('chh'),
          spaceId: s.id,
          channel: 'br-next',
          versionId: v1.id,
          previousVersionId: null,
          actor: null,
          reason: 'publish',
          at: T1,
        }),
      );
      expect(await store.repos.channels.delete(s.id, 'br-next')).toBe(true);
      expect(await store.repos.channels.delete(s.id, 'br-next')).toBe(false);
      expect(await store.repos.channels.pointer(s.id, 'br-next')).toBeNull();
      expect((await store.repos.channels.list(s.id)).map((c) => c.name)).toEqual(['live']);
      expect(await store.repos.channels.history(s.id, 'br-next', null, 10)).toHaveLength(1);
      await store.repos.channels.deleteForSpace(s.id);
      expect(await store.repos.channels.list(s.id)).toEqual([]);
    });
  });

  describe('idempotency keys', () => {
    it('one running claim per scope; completes with its answer; a failed one is removed', async () => {
      const keys = store.repos.idempotencyKeys;
      const scope = newId('idk');
      await keys.insertRunning(scope, 'h1', T0);
      expect(isUniqueViolation(await keys.insertRunning(scope, 'h1', T0).catch((e: unknown) => e))).toBe(
        true,
      );
      await keys.complete(scope, 201, '{"ok":true}');
      // Only a running claim goes with `onlyRunning`.
      await keys.delete(scope, true);
      expect(await keys.byScope(scope)).toMatchObject({
        state: 'done',
        status_code: 201,
        response: '{"ok":true}',
      });
      await keys.delete(scope);
      expect(await keys.byScope(scope)).toBeNull();
    });
  });
});
