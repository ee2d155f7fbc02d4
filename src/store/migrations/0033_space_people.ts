import type { Kysely } from 'kysely';

/**
 * People of a space (behaviour §3.4): `space_people`, someone invited by e-mail to one space (no
 * account needed), signed in by the link the invitation mails (its token hashed, replaced on resend);
 * what they may see are person grants (`access_grants`, audience `{type:"person", email}`).
 * `access_requests`: a visitor asks for access, proves the inbox by a mailed link, and the space's
 * team approves (a person and grant) or denies.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('space_people')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text')
    .addColumn('token_expires_at', 'text')
    .addColumn('invited_by', 'text')
    .addColumn('last_sent_at', 'text')
    .addColumn('accepted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('space_people_space').on('space_people').columns(['space_id', 'id']).execute();
  await db.schema.createIndex('space_people_token').on('space_people').column('token_hash').execute();
  await db.schema
    .createTable('access_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('message', 'text')
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('verify_token_hash', 'text')
    .addColumn('verify_expires_at', 'text')
    .addColumn('person_id', 'text')
    .addColumn('resolved_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'text')
    .addColumn('resolved_at', 'text')
    .execute();
  await db.schema
    .createIndex('access_requests_space')
    .on('access_requests')
    .columns(['space_id', 'status', 'id'])
    .execute();
  await db.schema
    .createIndex('access_requests_token')
    .on('access_requests')
    .column('verify_token_hash')
    .execute();
}
