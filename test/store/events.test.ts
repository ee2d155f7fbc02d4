import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { EventLog } from '../../src/domain/events/log.ts';
import type { ActivityEvent } from '../../src/domain/events/model.ts';
import { newId } from '../../src/ids.ts';
import { type Database, openDatabase } from '../../src/store/db.ts';
import { Store } from '../../src/store/repos/index.ts';
import { describeEachDb, PG_URL } from '../helpers/server.ts';
import { openTestStore, spaceRow, type TestStore } from '../helpers/store.ts';

/**
 * The event log's repository and `EventLog.record`, on SQLite and PostgreSQL: per-tenant sequences
 * (race-free across instances), the outbox rule (an event commits with its change or not at all),
 * and the reads the feeds and streams use.
 */
describeEachDb('event log (store)', (db) => {
  let ts: TestStore;
  let store: Store;
  const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
  beforeAll(async () => {
    ts = await openTestStore(db);
    store = ts.store;
  });
  afterAll(() => ts.close());

  const input = (tenantId: string, code = 'space.created', spaceId: string | null = null) => ({
    tenantId,
    spaceId,
    actor: { type: 'system' as const, id: null },
    code,
    message: 'm',
    details: { n: 1 },
  });

  it('numbers events per tenant from 1, in the transaction that writes them', async () => {
    const log = new EventLog(clock);
    const [a, b] = [newId('team'), newId('team')];
    const seen: number[] = [];
    for (const t of [a, a, b, a]) {
      const e = await store.transaction((repos) => log.record(repos, input(t)));
      seen.push(e.sequence);
    }
    expect(seen).toEqual([1, 2, 1, 3]);
    expect(await store.repos.events.lastSequence(a)).toBe(3);
    expect(await store.repos.events.lastSequence(newId('team'))).toBe(0);
    const rows = await store.repos.events.after(a, null, 1, 10);
    expect(rows.map((r) => r.sequence)).toEqual([2, 3]);
    expect(JSON.parse(rows[0]!.details)).toEqual({ n: 1 });
  });

  it('records in a transaction opened elsewhere (Store.on), committing and rolling back with it', async () => {
    const log = new EventLog(clock);
    const tenantId = newId('team');
    await ts.database.db.transaction().execute((trx) => log.record(store.on(trx), input(tenantId)));
    await expect(
      ts.database.db.transaction().execute(async (trx) => {
        await log.record(store.on(trx), input(tenantId));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await store.repos.events.countFor(tenantId)).toBe(1);
  });

  it('refuses to record outside a transaction, and codes outside the catalogue', async () => {
    const log = new EventLog(clock);
    await expect(log.record(store.repos, input(newId('team')))).rejects.toThrow(/transaction/);
    await expect(
      store.transaction((repos) => log.record(repos, input(newId('team'), 'space.exploded'))),
    ).rejects.toThrow(/catalogue/);
  });

  it('no event without its change, no change without its event: a failing subscriber rolls back both', async () => {
    const log = new EventLog(clock);
    const tenantId = newId('team');
    const delivered: ActivityEvent[] = [];
    const stop = log.subscribe(async (tx, event) => {
      delivered.push(event);
      // The subscriber writes in the same transaction: it sees the event row.
      const row = await tx.selectFrom('events').select('id').where('id', '=', event.id).executeTakeFirst();
      expect(row?.id).toBe(event.id);
      throw new Error('webhook fan-out failed');
    });
    const space = spaceRow(tenantId);
    await expect(
      store.transaction(async (repos) => {
        await repos.spaces.insert(space);
        await log.record(repos, input(tenantId, 'space.created', space.id));
      }),
    ).rejects.toThrow('webhook fan-out failed');
    stop();
    expect(delivered).toHaveLength(1);
    expect(await store.repos.spaces.byId(space.id)).toBeNull();
    expect(await store.repos.events.countFor(tenantId)).toBe(0);
    // The counter rolled back too: the next event is number 1.
    const next = await store.transaction(async (repos) => {
      await repos.spaces.insert(space);
      return log.record(repos, input(tenantId, 'space.created', space.id));
    });
    expect(next.sequence).toBe(1);
    expect(await store.repos.spaces.byId(space.id)).not.toBeNull();
  });

  it('gives concurrent writers of one tenant distinct, gapless sequences (two instances on PostgreSQL)', async () => {
    const tenantId = newId('team');
    const others: Database[] = [];
    const stores = [store];
    if (db === 'postgres') {
      // A second instance: its own pool on the same schema.
      const other = await openDatabase(PG_URL, { schema: ts.database.schema, poolSize: 4 });
      others.push(other);
      stores.push(new Store(other));
    }
    const log = new EventLog(clock);
    const writes = Array.from({ length: 40 }, (_, i) =>
      stores[i % stores.length]!.transaction(async (repos) => {
        const e = await log.record(repos, input(tenantId, 'variable.updated'));
        // Keep the transaction open a moment so writers overlap.
        await new Promise((r) => setTimeout(r, i % 3));
        return e.sequence;
      }),
    );
    const seqs = (await Promise.all(writes)).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const stored = await store.repos.events.after(tenantId, null, 0, 100);
    expect(stored.map((r) => r.sequence)).toEqual(seqs);
    for (const o of others) await o.close();
  });

  it('lists newest first with tenant, space, code, prefix and time filters', async () => {
    const log = new EventLog(clock);
    const [a, b] = [newId('team'), newId('team')];
    const spaceId = newId('spc');
    const codes = ['space.created', 'team.member_added', 'team.updated', 'api_key.created'];
    for (const code of codes) {
      clock.advance(1000);
      await store.transaction((repos) =>
        log.record(repos, input(a, code, code === 'space.created' ? spaceId : null)),
      );
    }
    await store.transaction((repos) => log.record(repos, input(b)));
    const all = await store.repos.events.list({ tenantIds: [a] }, null, 10);
    expect(all.map((r) => r.code)).toEqual([...codes].reverse());
    const both = await store.repos.events.list({ tenantIds: [a, b] }, null, 10);
    expect(both).toHaveLength(5);
    expect(await store.repos.events.list({ tenantIds: [] }, null, 10)).toEqual([]);
    const space = await store.repos.events.list({ tenantIds: [a], spaceId }, null, 10);
    expect(space.map((r) => r.code)).toEqual(['space.created']);
    // `team.member_` is a prefix with an underscore: matched literally, not as a wildcard.
    const members = await store.repos.events.list(
      { tenantIds: [a], codePrefixes: ['team.member_'] },
      null,
      10,
    );
    expect(members.map((r) => r.code)).toEqual(['team.member_added']);
    const mixed = await store.repos.events.list(
      { tenantIds: [a], codes: ['space.created'], codePrefixes: ['api_key.'] },
      null,
      10,
    );
    expect(mixed.map((r) => r.code)).toEqual(['api_key.created', 'space.created']);
    const since = all[1]!.created_at;
    const window = await store.repos.events.list(
      { tenantIds: [a], since, until: all[0]!.created_at },
      null,
      10,
    );
    expect(window.map((r) => r.code)).toEqual(['team.updated']);
    const older = await store.repos.events.list({ tenantIds: [a] }, all[1]!.id, 10);
    expect(older.map((r) => r.code)).toEqual(['team.member_added', 'space.created']);
  });
});
