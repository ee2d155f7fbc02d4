import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * Small blobs stored inline in the database (see `src/blobs/inline.ts`): one row per blob, written
 * in batches (one transaction, one WAL sync) instead of one file or object each.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('blob_data')
    .ifNotExists()
    .addColumn('sha256', 'text', (c) => c.primaryKey())
    .addColumn('data', postgres ? sql`bytea` : sql`blob`, (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {}
