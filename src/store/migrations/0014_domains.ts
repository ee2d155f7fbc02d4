import type { Kysely } from 'kysely';

/**
 * `domains`: a team's custom domains. A hostname appears once per team; several teams may hold the
 * same one, but only one of them at a time is `verified` (the domain service enforces it when a check
 * succeeds), which is the one the edge may serve.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('space_id', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('redirect_target', 'text')
    .addColumn('redirect_status', 'integer')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('verification_token', 'text', (c) => c.notNull())
    .addColumn('last_check', 'text')
    .addColumn('checked_at', 'text')
    .addColumn('next_check_at', 'text')
    .addColumn('check_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('verified_at', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('domains_team_hostname')
    .unique()
    .on('domains')
    .columns(['team_id', 'hostname'])
    .execute();
  await db.schema.createIndex('domains_hostname').on('domains').columns(['hostname', 'status']).execute();
  await db.schema.createIndex('domains_space').on('domains').column('space_id').execute();
  await db.schema.createIndex('domains_next_check').on('domains').column('next_check_at').execute();
}
