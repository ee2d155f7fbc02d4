import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import type { AccessCredentialRow } from '../../src/store/repos/access/credentials.ts';
import type { GrantRow } from '../../src/store/repos/access/grants.ts';
import type { Store } from '../../src/store/repos/index.ts';
import { describeEachDb } from '../helpers/server.ts';
import { openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the access group's repositories: grants scoped to their space, revocation, the atomic
 * use counter (exactly N of 50 concurrent uses succeed), credentials by hash within one space,
 * rotation generations, epochs, and a failed transaction leaving nothing. SQLite and PostgreSQL.
 */

const T0 = '2026-01-01T00:00:00.000Z';

function grantRow(spaceId: string, extra: Partial<GrantRow> = {}): GrantRow {
  return {
    id: newId('grt'),
    space_id: spaceId,
    audience_type: 'public',
    audience: '{"type":"public"}',
    paths: '["/**"]',
    role: 'viewer',
    target: 'live',
    constraints: '{}',
    max_uses: null,
    uses: 0,
    credential_id: null,
    note: null,
    created_by: null,
    created_at: T0,
    updated_at: T0,
    revoked_at: null,
    ...extra,
  };
}

function credRow(spaceId: string, extra: Partial<AccessCredentialRow> = {}): AccessCredentialRow {
  return {
    id: newId('lnk'),
    space_id: spaceId,
    kind: 'link',
    grant_id: 'grt_x',
    name: null,
    secret_hash: newId('h'),
    token_sealed: null,
    landing: '/',
    generation: 1,
    created_by: null,
    created_at: T0,
    updated_at: T0,
    last_used_at: null,
    revoked_at: null,
    ...extra,
  };
}

describeEachDb('access repositories', (kind) => {
  let ts: TestStore;
  let store: Store;

  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('reads grants within their space only, lists active ones oldest first, revokes once', async () => {
    const a = grantRow('spc_a');
    const b = grantRow('spc_a');
    const other = grantRow('spc_b');
    for (const r of [a, b, other]) await store.repos.grants.insert(r);
    expect(await store.repos.grants.byId('spc_a', a.id)).toMatchObject({ id: a.id });
    expect(await store.repos.grants.byId('spc_b', a.id)).toBeNull();
    expect((await store.repos.grants.activeForSpace('spc_a')).map((r) => r.id)).toEqual([a.id, b.id]);
    expect(await store.repos.grants.update('spc_b', a.id, { role: 'editor', updated_at: T0 })).toBe(false);
    expect(await store.repos.grants.update('spc_a', a.id, { role: 'editor', updated_at: T0 })).toBe(true);
    expect(await store.repos.grants.revoke('spc_b', a.id, T0)).toBe(false);
    expect(await store.repos.grants.revoke('spc_a', a.id, T0)).toBe(true);
    expect(await store.repos.grants.revoke('spc_a', a.id, T0)).toBe(false);
    expect(await store.repos.grants.update('spc_a', a.id, { role: 'viewer', updated_at: T0 })).toBe(false);
    expect((await store.repos.grants.activeForSpace('spc_a')).map((r) => r.id)).toEqual([b.id]);
  });

  it.each([1, 7, 25])(
    'of 50 concurrent uses of a grant with %i left, exactly that many succeed',
    async (n) => {
      const g = grantRow('spc_uses', { max_uses: n });
      await store.repos.grants.insert(g);
      const results = await Promise.all(
        Array.from({ length: 50 }, () => store.transaction((r) => r.grants.consumeUse(g.id))),
      );
      expect(results.filter(Boolean).length).toBe(n);
      expect((await store.repos.grants.byId('spc_uses', g.id))!.uses).toBe(n);
    },
  );

  it('counts uses of an unlimited grant, and none of a revoked one', async () => {
    const g = grantRow('spc_uses2');
    await store.repos.grants.insert(g);
    const ok = await Promise.all(Array.from({ length: 10 }, () => store.repos.grants.consumeUse(g.id)));
    expect(ok.every(Boolean)).toBe(true);
    await store.repos.grants.revoke('spc_uses2', g.id, T0);
    expect(await store.repos.grants.consumeUse(g.id)).toBe(false);
  });

  it('finds credentials by hash within one space and kind, bumps generations, revokes', async () => {
    const c = credRow('spc_c', { secret_hash: 'hash-1' });
    await store.repos.accessCredentials.insert(c);
    expect(await store.repos.accessCredentials.byHash('spc_c', 'link', 'hash-1')).toMatchObject({ id: c.id });
    expect(await store.repos.accessCredentials.byHash('spc_d', 'link', 'hash-1')).toBeNull();
    expect(await store.repos.accessCredentials.byHash('spc_c', 'machine', 'hash-1')).toBeNull();
    await store.repos.accessCredentials.update(c.id, { updated_at: T0, bumpGeneration: true, name: 'n' });
    expect(await store.repos.accessCredentials.byId('spc_c', 'link', c.id)).toMatchObject({
      generation: 2,
      name: 'n',
    });
    expect(await store.repos.accessCredentials.revoke('spc_d', c.id, T0)).toBe(false);
    expect(await store.repos.accessCredentials.revoke('spc_c', c.id, T0)).toBe(true);
    expect(await store.repos.accessCredentials.byHash('spc_c', 'link', 'hash-1')).toBeNull();
    expect(await store.repos.accessCredentials.listForSpace('spc_c', 'link')).toEqual([]);
  });

  it('bumps epochs per space, atomically', async () => {
    expect(await store.repos.accessEpochs.get('spc_e')).toBe(0);
    await Promise.all(
      Array.from({ length: 5 }, () => store.transaction((r) => r.accessEpochs.bump('spc_e', T0))),
    );
    expect(await store.repos.accessEpochs.get('spc_e')).toBe(5);
    expect(await store.repos.accessEpochs.get('spc_f')).toBe(0);
  });

  it('a failed transaction leaves no grant behind', async () => {
    const g = grantRow('spc_tx');
    await expect(
      store.transaction(async (r) => {
        await r.grants.insert(g);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.repos.grants.byId('spc_tx', g.id)).toBeNull();
  });
});
