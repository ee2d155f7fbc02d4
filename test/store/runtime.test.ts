import { afterAll, beforeAll, expect, it } from 'vitest';
import type { VersionRuntimeRow } from '../../src/store/repos/runtime/version-runtimes.ts';
import { describeEachDb } from '../helpers/server.ts';
import { openTestStore, type TestStore } from '../helpers/store.ts';

/** Contract of the version runtimes repository (issue 26), the same on SQLite and PostgreSQL. */

function row(extra: Partial<VersionRuntimeRow> = {}): VersionRuntimeRow {
  return {
    version_id: 'ver_1',
    space_id: 'spc_1',
    kind: 'functions',
    entry: 'functions',
    entry_kind: 'functions',
    bundle_sha256: 'a'.repeat(64),
    bundle_size: 123,
    compatibility_date: '2025-09-01',
    capabilities: '["fetch"]',
    routes: '["/api/hello"]',
    created_at: '2026-01-01T00:00:00.000Z',
    ...extra,
  };
}

describeEachDb('version runtimes repository', (kind) => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await openTestStore(kind);
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('stores one row per version, read only within its space', async () => {
    const repo = ts.store.repos.versionRuntimes;
    await repo.put(row());
    expect(await repo.get('spc_1', 'ver_1')).toEqual(row());
    expect(await repo.get('spc_other', 'ver_1')).toBeNull();
    expect(await repo.get('spc_1', 'ver_none')).toBeNull();
    await repo.put(row({ bundle_size: 456 }));
    expect((await repo.get('spc_1', 'ver_1'))?.bundle_size).toBe(456);
  });

  it('names bundles only of versions that exist (the blob sweep keeps those)', async () => {
    await ts.store.repos.versionRuntimes.put(row({ version_id: 'ver_gone', bundle_sha256: 'b'.repeat(64) }));
    expect(await ts.store.repos.versionRuntimes.allBundles()).not.toContain('b'.repeat(64));
  });

  it('leaves nothing after a failed transaction', async () => {
    await expect(
      ts.store.transaction(async (repos) => {
        await repos.versionRuntimes.put(row({ version_id: 'ver_rolled_back' }));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await ts.store.repos.versionRuntimes.get('spc_1', 'ver_rolled_back')).toBeNull();
  });
});
