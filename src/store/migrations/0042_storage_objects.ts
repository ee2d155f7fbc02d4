import type { Kysely } from 'kysely';

/** `storage_objects` and `space_storage_keys`: `env.STORAGE` of runtime spaces (issue 26). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('storage_objects')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('storage_objects_pk', ['space_id', 'id'])
    .execute();
  await db.schema.createIndex('storage_objects_sha').on('storage_objects').column('sha256').execute();
  await db.schema
    .createTable('space_storage_keys')
    .addColumn('space_id', 'text', (c) => c.primaryKey())
    .addColumn('read_key', 'text', (c) => c.notNull())
    .addColumn('rotated_at', 'text', (c) => c.notNull())
    .execute();
}
