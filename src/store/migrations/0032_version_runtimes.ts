import type { Kysely } from 'kysely';

/**
 * `version_runtimes`: the functions runtime of a version (issue 26) — entry, bundle blob, compatibility
 * date, capabilities and claimed routes — written in finalize's `ready` transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('version_runtimes')
    .addColumn('version_id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('entry', 'text', (c) => c.notNull())
    .addColumn('entry_kind', 'text', (c) => c.notNull())
    .addColumn('bundle_sha256', 'text', (c) => c.notNull())
    .addColumn('bundle_size', 'integer', (c) => c.notNull())
    .addColumn('compatibility_date', 'text', (c) => c.notNull())
    .addColumn('capabilities', 'text', (c) => c.notNull())
    .addColumn('routes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('version_runtimes_space').on('version_runtimes').column('space_id').execute();
}
