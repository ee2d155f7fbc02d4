import type { Kysely } from 'kysely';

/**
 * `rate_windows`: request counts per rate-limit key and fixed window, shared by every instance on
 * one PostgreSQL database (one atomic upsert per hit). Keys are stored hashed (they hold client
 * addresses and e-mail addresses); rows expire two windows after their own began.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_windows')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('window', 'bigint', (c) => c.notNull())
    .addColumn('hits', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_windows_pk', ['key', 'window'])
    .execute();
  await db.schema.createIndex('rate_windows_expires').on('rate_windows').column('expires_at').execute();
}
