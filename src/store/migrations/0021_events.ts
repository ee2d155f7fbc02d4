import type { Kysely } from 'kysely';

/**
 * `events`: the event log (outbox). One row per state change of the catalogue, written in the same
 * transaction as the change, numbered per tenant (`sequence`, 1, 2, 3 … without reuse).
 * `event_sequences`: the per-tenant counter behind `sequence`. A writer bumps its tenant's row with
 * `insert … on conflict do update … returning`, which holds the row lock until its transaction ends:
 * concurrent writers of one tenant (in any instance) get distinct numbers, and commit in number order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('event_sequences')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey())
    .addColumn('last_sequence', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('sequence', 'bigint', (c) => c.notNull())
    .addColumn('space_id', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('events_tenant_sequence')
    .unique()
    .on('events')
    .columns(['tenant_id', 'sequence'])
    .execute();
  await db.schema
    .createIndex('events_space_sequence')
    .on('events')
    .columns(['space_id', 'sequence'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('events').execute();
  await db.schema.dropTable('event_sequences').execute();
}
