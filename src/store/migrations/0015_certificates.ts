import type { Kysely } from 'kysely';

/** Certificates of custom domains (ACME) and the HTTP-01 answers of open orders. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('certificates')
    .addColumn('hostname', 'text', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('cert_pem', 'text')
    .addColumn('key_sealed', 'text')
    .addColumn('not_before', 'text')
    .addColumn('not_after', 'text')
    .addColumn('renew_after', 'text')
    .addColumn('last_error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('acme_challenges')
    .addColumn('token', 'text', (c) => c.primaryKey())
    .addColumn('key_authorization', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}
