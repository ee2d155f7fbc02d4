import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import type { BuildRow } from '../../src/store/repos/builds/builds.ts';
import type { Store } from '../../src/store/repos/index.ts';
import { describeEachDb } from '../helpers/server.ts';
import { createSpace, openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the builds group's repositories: builds (create, read, newest-first paging per space,
 * compare-and-swap state changes with each state recorded, log byte counts, removal with a space),
 * their log lines (append in batches, newest first with keyset paging, oldest first after an id) and
 * repository connections (one per space). The same on SQLite and PostgreSQL.
 */

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:01:00.000Z';

function buildRow(tenantId: string, spaceId: string, extra: Partial<BuildRow> = {}): BuildRow {
  return {
    id: newId('bld'),
    tenant_id: tenantId,
    space_id: spaceId,
    status: 'queued',
    source_type: 'upload',
    git_url: null,
    git_ref: null,
    branch: null,
    commit_sha: null,
    channel: null,
    settings: null,
    error_code: null,
    error_message: null,
    version_id: null,
    retry_of: null,
    cancel_requested: 0,
    log_bytes: 0,
    created_by: '{}',
    created_at: T0,
    updated_at: T0,
    started_at: null,
    finished_at: null,
    ...extra,
  };
}

describeEachDb('builds repositories', (kind) => {
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

  describe('builds', () => {
    it('creates, reads, and lists a space’s builds newest first with keyset paging', async () => {
      const a = await createSpace(store, tenant);
      const b = await createSpace(store, tenant);
      const rows = [buildRow(tenant, a.id), buildRow(tenant, a.id), buildRow(tenant, a.id)];
      for (const r of rows) await store.repos.builds.create(r);
      await store.repos.builds.create(buildRow(tenant, b.id));
      expect(await store.repos.builds.byId(rows[0]!.id)).toEqual(rows[0]);
      expect(await store.repos.builds.byId('bld_missing')).toBeNull();
      const first = await store.repos.builds.listForSpace(a.id, null, 2);
      expect(first.map((r) => r.id)).toEqual([rows[2]!.id, rows[1]!.id]);
      const next = await store.repos.builds.listForSpace(a.id, first[1]!.id, 2);
      expect(next.map((r) => r.id)).toEqual([rows[0]!.id]);
    });

    it('moves state only from the states named (two writers can’t both win)', async () => {
      const s = await createSpace(store, tenant);
      const r = buildRow(tenant, s.id);
      await store.repos.builds.create(r);
      expect(await store.repos.builds.transition(r.id, ['queued'], { status: 'running' })).toBe(true);
      expect(await store.repos.builds.transition(r.id, ['queued'], { status: 'canceled' })).toBe(false);
      expect(await store.repos.builds.transition(r.id, null, { commit_sha: 'abc' })).toBe(true);
      expect(await store.repos.builds.transition('bld_missing', null, { commit_sha: 'abc' })).toBe(false);
      await store.repos.builds.addLogBytes(r.id, 10);
      await store.repos.builds.addLogBytes(r.id, 5);
      expect(await store.repos.builds.byId(r.id)).toMatchObject({
        status: 'running',
        commit_sha: 'abc',
        log_bytes: 15,
      });
      expect(await store.repos.builds.unfinishedForBranch(s.id, 'next')).toEqual([]);
      const branchBuild = buildRow(tenant, s.id, { branch: 'next' });
      await store.repos.builds.create(branchBuild);
      await store.repos.builds.create(buildRow(tenant, s.id, { branch: 'next', status: 'succeeded' }));
      expect(await store.repos.builds.unfinishedForBranch(s.id, 'next')).toEqual([branchBuild.id]);
      // Each state entered is recorded once, oldest first; a refused move or a non-status patch is not.
      expect(
        await store.repos.builds.transition(r.id, ['running'], { status: 'failed', updated_at: T1 }),
      ).toBe(true);
      const changes = await store.repos.builds.statusChanges(r.id);
      expect(changes.map((c) => c.status)).toEqual(['queued', 'running', 'failed']);
      expect(changes[0]!.created_at).toBe(T0);
      expect(changes[2]!.created_at).toBe(T1);
    });

    it('a failed transaction leaves no build; deleteForSpace removes builds and their lines', async () => {
      const s = await createSpace(store, tenant);
      const r = buildRow(tenant, s.id);
      await expect(
        store.transaction(async (repos) => {
          await repos.builds.create(r);
          throw new Error('rollback');
        }),
      ).rejects.toThrow('rollback');
      expect(await store.repos.builds.byId(r.id)).toBeNull();
      await store.repos.builds.create(r);
      await store.repos.buildLogs.append([
        { id: newId('bl'), build_id: r.id, stream: 'stdout', line: 'x', created_at: T0 },
      ]);
      expect(await store.repos.builds.deleteForSpace(s.id)).toEqual([r.id]);
      expect(await store.repos.builds.byId(r.id)).toBeNull();
      expect(await store.repos.buildLogs.listNewestFirst(r.id, null, 10)).toEqual([]);
      expect(await store.repos.builds.statusChanges(r.id)).toEqual([]);
    });
  });

  describe('repository connections', () => {
    it('one per space: create refuses a second, update patches, delete says whether there was one', async () => {
      const s = await createSpace(store, tenant);
      const other = await createSpace(store, tenant);
      const row = {
        space_id: s.id,
        tenant_id: tenant,
        provider: 'generic',
        clone_url: 'https://git.example/r.git',
        repository: null,
        installation_id: null,
        credential_sealed: 'v1:a:b:c',
        default_branch: 'main',
        production_branch: null,
        app_root: null,
        auto_deploy_production: 1,
        auto_deploy_previews: 1,
        build_settings: null,
        created_at: T0,
        updated_at: T0,
      };
      const repo = store.repos.repositoryConnections;
      expect(await repo.forSpace(s.id)).toBeNull();
      expect(await repo.create(row)).toBe(true);
      expect(await repo.create({ ...row, clone_url: 'https://other.example/x.git' })).toBe(false);
      expect(await repo.forSpace(s.id)).toEqual(row);
      expect(await repo.forSpace(other.id)).toBeNull();
      expect(
        await repo.update(s.id, {
          production_branch: 'prod',
          credential_sealed: null,
          build_settings: '{"buildCommand":"make"}',
          updated_at: T1,
        }),
      ).toBe(true);
      expect(await repo.update(other.id, { app_root: 'x' })).toBe(false);
      expect(await repo.forSpace(s.id)).toEqual({
        ...row,
        production_branch: 'prod',
        credential_sealed: null,
        build_settings: '{"buildCommand":"make"}',
        updated_at: T1,
      });
      expect(await repo.deleteForSpace(s.id)).toBe(true);
      expect(await repo.deleteForSpace(s.id)).toBe(false);
      expect(await repo.forSpace(s.id)).toBeNull();
    });
  });

  describe('build logs', () => {
    it('appends in batches and reads newest first, one build’s lines only', async () => {
      const s = await createSpace(store, tenant);
      const r = buildRow(tenant, s.id);
      const other = buildRow(tenant, s.id);
      await store.repos.builds.create(r);
      await store.repos.builds.create(other);
      const lines = Array.from({ length: 450 }, (_, i) => ({
        id: newId('bl'),
        build_id: r.id,
        stream: i % 2 ? 'stderr' : 'stdout',
        line: `line ${i}`,
        created_at: T0,
      }));
      await store.repos.buildLogs.append(lines);
      await store.repos.buildLogs.append([
        { id: newId('bl'), build_id: other.id, stream: 'stdout', line: 'o', created_at: T0 },
      ]);
      const page = await store.repos.buildLogs.listNewestFirst(r.id, null, 3);
      expect(page.map((l) => l.line)).toEqual(['line 449', 'line 448', 'line 447']);
      const rest = await store.repos.buildLogs.listNewestFirst(r.id, page[2]!.id, 1000);
      expect(rest).toHaveLength(447);
      expect(rest.at(-1)?.line).toBe('line 0');
      // Oldest first after an id (what a follower reads next).
      const from = await store.repos.buildLogs.listAfter(r.id, null, 2);
      expect(from.map((l) => l.line)).toEqual(['line 0', 'line 1']);
      const after = await store.repos.buildLogs.listAfter(r.id, from[1]!.id, 1000);
      expect(after).toHaveLength(448);
      expect(after[0]!.line).toBe('line 2');
    });
  });
});
