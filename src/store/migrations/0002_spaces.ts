import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('spaces')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.references('teams.id'))
    .addColumn('principal_type', 'text')
    .addColumn('principal_id', 'text')
    .addColumn('anonymous', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('public_name', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('access', 'text', (c) => c.notNull())
    .addColumn('data_location', 'text', (c) => c.notNull())
    .addColumn('noindex', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('config', 'text')
    .addColumn('settings_digest', 'text', (c) => c.notNull())
    .addColumn('disabled_at', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('claim_expires_at', 'text')
    .addColumn('claimed_at', 'text')
    .addColumn('purge_after', 'text')
    .addColumn('expiry_extended_to', 'text')
    .addColumn('git', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('spaces_slug').ifNotExists().unique().on('spaces').column('slug').execute();
  await db.schema.createIndex('spaces_team').ifNotExists().on('spaces').columns(['team_id', 'id']).execute();
  await db.schema
    .createIndex('spaces_tenant')
    .ifNotExists()
    .on('spaces')
    .columns(['tenant_id', 'id'])
    .execute();
  await db.schema
    .createTable('space_hostnames')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('current', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .execute();
  await db.schema
    .createIndex('space_hostnames_space')
    .ifNotExists()
    .on('space_hostnames')
    .column('space_id')
    .execute();
  await db.schema
    .createTable('channels')
    .ifNotExists()
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('channels_pk', ['space_id', 'name'])
    .execute();
  await db.schema
    .createTable('channel_history')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('previous_version_id', 'text')
    .addColumn('actor', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('channel_history_space')
    .ifNotExists()
    .on('channel_history')
    .columns(['space_id', 'channel', 'id'])
    .execute();
  await db.schema
    .createTable('operations')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('space_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('resources', 'text', (c) => c.notNull())
    .addColumn('progress', 'text')
    .addColumn('diagnostics', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createIndex('operations_space')
    .ifNotExists()
    .on('operations')
    .columns(['space_id', 'id'])
    .execute();
}

export async function down(): Promise<void> {}
