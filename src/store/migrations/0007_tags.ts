import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tag_versions')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('base_version_id', 'text')
    .addColumn('graph', 'text', (c) => c.notNull())
    .addColumn('graph_revision', 'bigint', (c) => c.notNull())
    .addColumn('tag_count', 'integer', (c) => c.notNull())
    .addColumn('trigger_count', 'integer', (c) => c.notNull())
    .addColumn('variable_count', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('submitted_at', 'text')
    .addColumn('submitted_by', 'text')
    .addColumn('approved_at', 'text')
    .addColumn('approved_by', 'text')
    .addColumn('published_at', 'text')
    .addColumn('published_by', 'text')
    .addColumn('abandoned_at', 'text')
    .execute();
  await db.schema
    .createIndex('tag_versions_team')
    .ifNotExists()
    .on('tag_versions')
    .columns(['team_id', 'id'])
    .execute();
  await db.schema
    .createTable('tag_releases')
    .ifNotExists()
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addPrimaryKeyConstraint('tag_releases_pk', ['team_id', 'environment'])
    .execute();
}

export async function down(): Promise<void> {}
