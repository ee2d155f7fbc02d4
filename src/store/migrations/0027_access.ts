import type { Kysely } from 'kysely';

/**
 * Site access (behaviour §3.4). `access_grants`: a space's additive grants (audience, paths, role,
 * target, constraints as JSON; `uses` counted atomically against `max_uses`). `access_credentials`:
 * share links, password and machine credentials (each backing one grant), with the secret hashed
 * (SHA-256 for tokens, Argon2id for passwords), a share link's token also sealed so its URL can be
 * shown again, and a `generation` that rotation bumps (sessions of an older generation end).
 * `access_epochs`: per space, bumped by logout-all and every access change the edge must see.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('access_grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('audience_type', 'text', (c) => c.notNull())
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('paths', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('constraints', 'text', (c) => c.notNull())
    .addColumn('max_uses', 'integer')
    .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('credential_id', 'text')
    .addColumn('note', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema
    .createIndex('access_grants_space')
    .on('access_grants')
    .columns(['space_id', 'id'])
    .execute();
  await db.schema
    .createTable('access_credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('token_sealed', 'text')
    .addColumn('landing', 'text')
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema
    .createIndex('access_credentials_space')
    .on('access_credentials')
    .columns(['space_id', 'kind', 'id'])
    .execute();
  await db.schema
    .createIndex('access_credentials_hash')
    .on('access_credentials')
    .columns(['secret_hash'])
    .execute();
  await db.schema
    .createTable('access_epochs')
    .addColumn('space_id', 'text', (c) => c.primaryKey())
    .addColumn('epoch', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
