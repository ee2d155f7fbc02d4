import type { Kysely } from 'kysely';

/**
 * `space_db_consoles` (single-use console URLs of a space database) and `space_db_owners` (which
 * instance owns each space database, and its latest snapshot in the blob store) — issue 26.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('space_db_consoles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('session_hash', 'text', (c) => c.unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('open_until', 'text', (c) => c.notNull())
    .addColumn('session_until', 'text')
    .execute();
  await db.schema
    .createTable('space_db_owners')
    .addColumn('space_id', 'text', (c) => c.primaryKey())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('lease_until', 'text', (c) => c.notNull())
    .addColumn('snapshot_sha256', 'text')
    .addColumn('snapshot_size', 'integer')
    .addColumn('snapshot_generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('snapshot_at', 'text')
    .execute();
}
