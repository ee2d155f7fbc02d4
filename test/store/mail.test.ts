import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import type { MailRow } from '../../src/store/repos/mail/outbox.ts';
import { describeEachDb } from '../helpers/server.ts';
import { openTestStore, type TestStore } from '../helpers/store.ts';

/** Contract of the mail outbox repository, the same on SQLite and PostgreSQL. */

const T0 = '2026-01-01T00:00:00.000Z';

function row(extra: Partial<MailRow> = {}): MailRow {
  return {
    id: newId('mail'),
    tenant_id: 'ten_1',
    kind: 'team_invitation',
    to_address: 'a@example.test',
    subject: 'Hello',
    text_body: 'body with a link',
    html_body: null,
    status: 'queued',
    attempts: 0,
    last_error: null,
    message_id: null,
    created_at: T0,
    updated_at: T0,
    sent_at: null,
    ...extra,
  };
}

describeEachDb('mail outbox repository', (kind) => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await openTestStore(kind);
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('marks a queued message sent once, dropping its bodies', async () => {
    const r = row({ html_body: '<p>x</p>' });
    await ts.store.repos.mailOutbox.insert(r);
    expect(await ts.store.repos.mailOutbox.markSent(r.id, '<m@x>', '2026-01-01T00:01:00.000Z')).toBe(true);
    expect(await ts.store.repos.mailOutbox.markSent(r.id, '<m@x>', '2026-01-01T00:02:00.000Z')).toBe(false);
    const got = await ts.store.repos.mailOutbox.byId(r.id);
    expect(got).toMatchObject({
      status: 'sent',
      attempts: 1,
      text_body: null,
      html_body: null,
      message_id: '<m@x>',
    });
    expect(got?.sent_at).toBe('2026-01-01T00:01:00.000Z');
  });

  it('counts failed attempts and fails a message on the last one', async () => {
    const r = row();
    await ts.store.repos.mailOutbox.insert(r);
    await ts.store.repos.mailOutbox.recordFailure(r.id, 'refused', T0, false);
    expect(await ts.store.repos.mailOutbox.byId(r.id)).toMatchObject({
      status: 'queued',
      attempts: 1,
      last_error: 'refused',
      text_body: 'body with a link',
    });
    await ts.store.repos.mailOutbox.recordFailure(r.id, 'refused again', T0, true);
    expect(await ts.store.repos.mailOutbox.byId(r.id)).toMatchObject({
      status: 'failed',
      attempts: 2,
      last_error: 'refused again',
      text_body: null,
    });
    // A failed message is never marked sent by a late run.
    expect(await ts.store.repos.mailOutbox.markSent(r.id, null, T0)).toBe(false);
  });

  it('lists by tenant and address, and purges only finished messages past the cutoff', async () => {
    const to = `p-${newId('x')}@example.test`;
    const old = row({ to_address: to, status: 'sent', updated_at: '2025-01-01T00:00:00.000Z' });
    const queued = row({ to_address: to, updated_at: '2025-01-01T00:00:00.000Z' });
    const recent = row({ to_address: to, status: 'failed', updated_at: '2026-06-01T00:00:00.000Z' });
    const other = row({ to_address: to, tenant_id: 'ten_2' });
    for (const r of [old, queued, recent, other]) await ts.store.repos.mailOutbox.insert(r);
    expect((await ts.store.repos.mailOutbox.listTo('ten_1', to, 10)).map((r) => r.id).sort()).toEqual(
      [old.id, queued.id, recent.id].sort(),
    );
    expect(await ts.store.repos.mailOutbox.purgeFinished('2026-01-01T00:00:00.000Z')).toBeGreaterThanOrEqual(
      1,
    );
    expect(await ts.store.repos.mailOutbox.byId(old.id)).toBeNull();
    expect(await ts.store.repos.mailOutbox.byId(queued.id)).not.toBeNull();
    expect(await ts.store.repos.mailOutbox.byId(recent.id)).not.toBeNull();
  });
});
