import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('versions')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('source', 'text')
    .addColumn('file_count', 'integer', (c) => c.notNull())
    .addColumn('total_bytes', 'bigint', (c) => c.notNull())
    .addColumn('manifest_digest', 'text', (c) => c.notNull())
    .addColumn('rules', 'text')
    .addColumn('diagnostics', 'text')
    .addColumn('config', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finalized_at', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema
    .createIndex('versions_space_number')
    .ifNotExists()
    .unique()
    .on('versions')
    .columns(['space_id', 'number'])
    .execute();
  await db.schema
    .createIndex('versions_space_id')
    .ifNotExists()
    .on('versions')
    .columns(['space_id', 'id'])
    .execute();
  await db.schema
    .createIndex('versions_status')
    .ifNotExists()
    .on('versions')
    .columns(['status', 'expires_at'])
    .execute();
  await db.schema
    .createTable('version_files')
    .ifNotExists()
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('source_sha256', 'text', (c) => c.notNull())
    .addColumn('source_size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('content_type', 'text')
    .addColumn('encodings', 'text')
    .addPrimaryKeyConstraint('version_files_pk', ['version_id', 'path'])
    .execute();
  await db.schema
    .createIndex('version_files_sha')
    .ifNotExists()
    .on('version_files')
    .column('sha256')
    .execute();
  await db.schema
    .createIndex('version_files_source_sha')
    .ifNotExists()
    .on('version_files')
    .column('source_sha256')
    .execute();
  await db.schema
    .createTable('blobs')
    .ifNotExists()
    .addColumn('sha256', 'text', (c) => c.primaryKey())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('variants', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('variables')
    .ifNotExists()
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret', 'integer', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('variables_pk', ['space_id', 'name'])
    .execute();
  await db.schema
    .createTable('idempotency_keys')
    .ifNotExists()
    .addColumn('scope_key', 'text', (c) => c.primaryKey())
    .addColumn('body_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {}
