import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { ActivityEvent } from '../../src/domain/events/model.ts';
import { createWebhookFanout } from '../../src/domain/webhooks/delivery.ts';
import { newId } from '../../src/ids.ts';
import type { Store } from '../../src/store/repos/index.ts';
import type { WebhookRow } from '../../src/store/repos/webhooks/webhooks.ts';
import { describeEachDb } from '../helpers/server.ts';
import { openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the webhooks group's repositories (team-scoped reads, receiving webhooks, atomic
 * failure counts, compare-and-swap attempts, delete with deliveries) and the fanout subscriber:
 * deliveries are written in the event's transaction, for matching receiving webhooks of the event's
 * team only, and vanish with it when it rolls back. The same on SQLite and PostgreSQL.
 */

const T0 = '2026-01-01T00:00:00.000Z';

function hookRow(teamId: string, extra: Partial<WebhookRow> = {}): WebhookRow {
  return {
    id: newId('whk'),
    tenant_id: 'ten_1',
    team_id: teamId,
    url: 'https://example.com/hook',
    description: null,
    events: '["*"]',
    status: 'active',
    consecutive_failures: 0,
    secret_sealed: 'v1:x:y:z',
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    disabled_reason: null,
    created_by: null,
    created_at: T0,
    updated_at: T0,
    ...extra,
  };
}

describeEachDb('webhooks repositories', (kind) => {
  let ts: TestStore;
  let store: Store;

  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('reads a webhook only within the teams given, lists newest first with a keyset', async () => {
    const a = hookRow('team_a');
    const b = hookRow('team_a');
    const other = hookRow('team_b');
    for (const r of [a, b, other]) await store.repos.webhooks.insert(r);
    expect(await store.repos.webhooks.byIdInTeams(a.id, ['team_a'])).toMatchObject({ id: a.id });
    expect(await store.repos.webhooks.byIdInTeams(a.id, ['team_b'])).toBeNull();
    expect(await store.repos.webhooks.byIdInTeams(a.id, [])).toBeNull();
    const page1 = await store.repos.webhooks.listInTeams(['team_a'], null, 1);
    expect(page1.map((r) => r.id)).toEqual([b.id]);
    const page2 = await store.repos.webhooks.listInTeams(['team_a'], b.id, 5);
    expect(page2.map((r) => r.id)).toEqual([a.id]);
  });

  it('counts failures atomically, resets them, and lists only receiving webhooks', async () => {
    const h = hookRow('team_c');
    const off = hookRow('team_c', { status: 'disabled' });
    await store.repos.webhooks.insert(h);
    await store.repos.webhooks.insert(off);
    await Promise.all(
      Array.from({ length: 5 }, () => store.transaction((r) => r.webhooks.countFailure(h.id, T0))),
    );
    expect((await store.repos.webhooks.byId(h.id))!.consecutive_failures).toBe(5);
    await store.repos.webhooks.update(h.id, { status: 'failing', updated_at: T0 });
    expect((await store.repos.webhooks.receivingInTeam('team_c')).map((r) => r.id)).toEqual([h.id]);
    await store.repos.webhooks.resetFailures(h.id, T0);
    expect(await store.repos.webhooks.byId(h.id)).toMatchObject({
      consecutive_failures: 0,
      status: 'active',
    });
  });

  it('fans an event out in its transaction: matching receiving webhooks of its team, rolled back with it', async () => {
    const team = `team_${newId('x')}`;
    const all = hookRow(team);
    const versions = hookRow(team, { events: '["version.*"]' });
    const builds = hookRow(team, { events: '["build.failed"]' });
    const disabled = hookRow(team, { status: 'disabled' });
    const elsewhere = hookRow('team_elsewhere');
    for (const r of [all, versions, builds, disabled, elsewhere]) await store.repos.webhooks.insert(r);
    const enqueued: string[] = [];
    const fanout = createWebhookFanout({
      database: ts.database,
      clock: new ManualClock(new Date(T0)),
      enqueue: async (_tx, id) => {
        enqueued.push(id);
      },
    });
    const event: ActivityEvent = {
      id: newId('evt'),
      sequence: 1,
      tenantId: team,
      spaceId: null,
      actor: { type: 'system', id: null },
      code: 'version.ready',
      message: 'Version ready.',
      details: {},
      createdAt: T0,
    };
    await store.transaction((_r, tx) => fanout(tx, event));
    const got = async (id: string) => store.repos.webhookDeliveries.listForWebhook(id, null, 10);
    expect(await got(all.id)).toHaveLength(1);
    expect(await got(versions.id)).toHaveLength(1);
    expect(await got(builds.id)).toHaveLength(0);
    expect(await got(disabled.id)).toHaveLength(0);
    expect(await got(elsewhere.id)).toHaveLength(0);
    const [d] = await got(all.id);
    expect(d).toMatchObject({
      event_id: event.id,
      event_code: 'version.ready',
      state: 'pending',
      attempts: 0,
      team_id: team,
    });
    expect(JSON.parse(d!.event)).toEqual(event);
    expect(enqueued).toHaveLength(2);

    // The event's transaction fails after the fanout: no delivery remains.
    const second = { ...event, id: newId('evt'), sequence: 2 };
    await expect(
      store.transaction(async (_r, tx) => {
        await fanout(tx, second);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await got(all.id)).toHaveLength(1);
  });

  it('records an attempt only once (compare-and-swap on the attempt count) and deletes deliveries with the webhook', async () => {
    const h = hookRow('team_d');
    await store.repos.webhooks.insert(h);
    const id = newId('whd');
    await store.repos.webhookDeliveries.insert({
      id,
      webhook_id: h.id,
      team_id: 'team_d',
      event_id: 'evt_1',
      event_code: 'space.created',
      event: '{}',
      state: 'pending',
      attempts: 0,
      next_attempt_at: T0,
      last_attempt_at: null,
      last_status_code: null,
      last_error: null,
      response_excerpt: null,
      duration_ms: null,
      redelivery_of: null,
      created_at: T0,
      updated_at: T0,
    });
    const update = {
      state: 'succeeded',
      attempts: 1,
      next_attempt_at: null,
      last_attempt_at: T0,
      last_status_code: 200,
      last_error: null,
      response_excerpt: 'ok',
      duration_ms: 3,
      updated_at: T0,
    };
    expect(await store.repos.webhookDeliveries.recordAttempt(id, 0, update)).toBe(true);
    expect(await store.repos.webhookDeliveries.recordAttempt(id, 0, update)).toBe(false);
    expect(await store.repos.webhookDeliveries.byIdInTeams(id, ['team_d'])).toMatchObject({
      state: 'succeeded',
    });
    expect(await store.repos.webhookDeliveries.byIdInTeams(id, ['team_x'])).toBeNull();
    await store.repos.webhooks.delete(h.id);
    expect(await store.repos.webhookDeliveries.byId(id)).toBeNull();
  });
});
