import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import type { Database } from '../../src/store/db.ts';
import type { Store } from '../../src/store/repos/index.ts';
import { describeEachDb } from '../helpers/server.ts';
import { createSpace, openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the serving group's repositories (the read model of the site edge and the access
 * routes): hostnames → spaces, channel pointers, ready versions with their files. The same on SQLite
 * and PostgreSQL.
 */

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:01:00.000Z';
const uniq = () => randomBytes(4).toString('hex');
const SHA = (c: string) => c.repeat(64);
let versionNumber = 0;

interface FileSeed {
  path: string;
  sha: string;
  contentType?: string | null;
  encodings?: string | null;
  removed?: number;
}

async function seedVersion(
  database: Database,
  spaceId: string,
  files: FileSeed[],
  extra: { status?: string; baseId?: string | null; finalizedAt?: string | null; rules?: string | null } = {},
): Promise<string> {
  const id = newId('ver');
  await database.db
    .insertInto('versions')
    .values({
      id,
      space_id: spaceId,
      number: ++versionNumber,
      status: extra.status ?? 'ready',
      target: 'production',
      message: null,
      source: null,
      file_count: files.length,
      total_bytes: files.length,
      manifest_digest: 'x',
      rules: extra.rules ?? null,
      diagnostics: null,
      config: '{"trailingSlash":"never"}',
      created_by: null,
      created_at: T0,
      finalized_at: extra.finalizedAt === undefined ? T1 : extra.finalizedAt,
      expires_at: null,
      deleted_at: null,
      base_id: extra.baseId ?? null,
    })
    .execute();
  for (const f of files) {
    await database.db
      .insertInto('version_files')
      .values({
        version_id: id,
        path: f.path,
        source_sha256: SHA(f.sha),
        source_size: 3,
        sha256: SHA(f.sha),
        size: 3,
        content_type: f.contentType === undefined ? 'text/html' : f.contentType,
        encodings: f.encodings ?? null,
        removed: f.removed ?? 0,
      })
      .execute();
  }
  return id;
}

describeEachDb('store: serving group', (kind) => {
  let ts: TestStore;
  let store: Store;
  let database: Database;
  let tenant: string;

  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
    database = ts.database;
    tenant = newId('tnt');
    await database.db.insertInto('tenants').values({ id: tenant, name: tenant, created_at: T0 }).execute();
  });
  afterAll(() => ts.close());

  it('siteHosts.byName: the space a current label names, as the edge sees it', async () => {
    const s = await createSpace(store, tenant, {
      config: '{"a":1}',
      settings_digest: 'd7',
      noindex: 1,
      created_by: 'usr_x',
    });
    expect(await store.repos.siteHosts.byName(s.public_name)).toEqual({
      current: true,
      space: {
        id: s.id,
        tenantId: tenant,
        teamId: null,
        publicName: s.public_name,
        anonymous: false,
        access: 'public',
        noindex: true,
        disabledReason: null,
        deleted: false,
        createdBy: 'usr_x',
        config: '{"a":1}',
        settingsDigest: 'd7',
      },
    });
    expect(await store.repos.siteHosts.byName(`nobody-${uniq()}`)).toBeNull();
  });

  it('siteHosts.byName: a renamed space’s old label is not current and names the space as it is now', async () => {
    const s = await createSpace(store, tenant);
    const renamed = `r-${uniq()}`;
    await store.repos.spaceHostnames.retireCurrent(s.id, T1);
    await store.repos.spaceHostnames.addCurrent(renamed, s.id, T1);
    await database.db.updateTable('spaces').set({ public_name: renamed }).where('id', '=', s.id).execute();
    const old = await store.repos.siteHosts.byName(s.public_name);
    expect(old?.current).toBe(false);
    expect(old?.space.publicName).toBe(renamed);
    expect((await store.repos.siteHosts.byName(renamed))?.current).toBe(true);
  });

  it('siteHosts.byName: deleted and disabled spaces are still found, and say so', async () => {
    const s = await createSpace(store, tenant, { deleted_at: T1, disabled_reason: 'abuse_takedown' });
    const found = await store.repos.siteHosts.byName(s.public_name);
    expect(found?.space.deleted).toBe(true);
    expect(found?.space.disabledReason).toBe('abuse_takedown');
  });

  it('siteHosts.channelVersions: every channel of the space and nothing of another', async () => {
    const a = await createSpace(store, tenant);
    const b = await createSpace(store, tenant);
    const va = await seedVersion(database, a.id, [{ path: 'index.html', sha: 'a' }]);
    const vb = await seedVersion(database, b.id, [{ path: 'index.html', sha: 'b' }]);
    await database.db
      .insertInto('channels')
      .values([
        { space_id: a.id, name: 'live', version_id: va, updated_at: T0 },
        { space_id: a.id, name: 'staging', version_id: va, updated_at: T0 },
        { space_id: b.id, name: 'live', version_id: vb, updated_at: T0 },
      ])
      .execute();
    expect(await store.repos.siteHosts.channelVersions(a.id)).toEqual({ live: va, staging: va });
    expect(await store.repos.siteHosts.channelVersions(b.id)).toEqual({ live: vb });
    expect(await store.repos.siteHosts.channelVersions('spc_none')).toEqual({});
  });

  it('servableVersions.readyById: a ready version with its files; anything else is null', async () => {
    const s = await createSpace(store, tenant);
    const id = await seedVersion(
      database,
      s.id,
      [
        { path: 'index.html', sha: 'a', encodings: '{"br":{"sha256":"x","size":1}}' },
        { path: 'blob.bin', sha: 'b', contentType: null },
      ],
      { rules: '{"routes":[]}' },
    );
    const v = await store.repos.servableVersions.readyById(id);
    expect(v).toMatchObject({
      id,
      spaceId: s.id,
      servedSince: T1,
      rules: '{"routes":[]}',
      config: '{"trailingSlash":"never"}',
    });
    expect([...v!.files].sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: 'blob.bin', sha256: SHA('b'), size: 3, contentType: null, encodings: null },
      {
        path: 'index.html',
        sha256: SHA('a'),
        size: 3,
        contentType: 'text/html',
        encodings: '{"br":{"sha256":"x","size":1}}',
      },
    ]);
    const unfinished = await seedVersion(database, s.id, [{ path: 'a', sha: 'c' }], {
      status: 'uploading',
      finalizedAt: null,
    });
    expect(await store.repos.servableVersions.readyById(unfinished)).toBeNull();
    expect(await store.repos.servableVersions.readyById('ver_none')).toBeNull();
  });

  it('servableVersions.readyById: a layered version lists its own files and the base’s it keeps', async () => {
    const s = await createSpace(store, tenant);
    const base = await seedVersion(database, s.id, [
      { path: 'a.html', sha: 'a' },
      { path: 'b.html', sha: 'b' },
      { path: 'c.html', sha: 'c' },
    ]);
    const layered = await seedVersion(
      database,
      s.id,
      [
        { path: 'b.html', sha: 'd' },
        { path: 'c.html', sha: 'c', removed: 1 },
        { path: 'e.html', sha: 'e' },
      ],
      { baseId: base, finalizedAt: null },
    );
    const v = await store.repos.servableVersions.readyById(layered);
    // Never finalized: served since its creation.
    expect(v?.servedSince).toBe(T0);
    const files = Object.fromEntries(v!.files.map((f) => [f.path, f.sha256]));
    expect(files).toEqual({ 'a.html': SHA('a'), 'b.html': SHA('d'), 'e.html': SHA('e') });
  });
});
