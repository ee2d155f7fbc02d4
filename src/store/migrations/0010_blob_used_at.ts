import { type Kysely, sql } from 'kysely';

/**
 * `blobs.used_at`: when the blob was last stored or relied on by a new version (creating a version
 * that reuses stored content touches its rows). The garbage sweep deletes a row only while it is
 * still older than its cutoff, in the same statement, so content a publisher has just relied on is
 * never taken from under it. Existing rows start from their `created_at`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('blobs')
    .addColumn('used_at', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`update blobs set used_at = created_at`.execute(db);
  // No index: only the hourly sweep filters on it (one scan), while every publish writes it.
}
