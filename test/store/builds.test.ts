import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import type { BuildRow } from '../../src/store/repos/builds/builds.ts';
import type { Store } from '../../src/store/repos/index.ts';
import { describeEachDb } from '../helpers/server.ts';
import { createSpace, openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the builds group's repositories: builds (create, read, newest-first paging per space,
 * compare-and-swap state changes, log byte counts, removal with a space) and their log lines
 * (append in batches, newest first with keyset paging). The same on SQLite and PostgreSQL.
 */

const T0 = '2026-01-01T00:00:00.000Z';

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
    });
  });
});
