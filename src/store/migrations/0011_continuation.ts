import type { Kysely } from 'kysely';

/**
 * Agent continuation after a claim (behaviour §2) and the space binding of API keys it needs:
 * - `api_keys.space_id`: a key bound to one space acts on that space only (null: the whole team);
 * - `space_keys.continuation`: null (the owner did not allow it), `available` (the key may be
 *   exchanged once for a publish key) or `used`; `continuation_user_id` is who allowed it (the new
 *   key is theirs) and `continuation_key_id` the key it was exchanged for.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('space_id', 'text').execute();
  await db.schema.alterTable('space_keys').addColumn('continuation', 'text').execute();
  await db.schema.alterTable('space_keys').addColumn('continuation_user_id', 'text').execute();
  await db.schema.alterTable('space_keys').addColumn('continuation_key_id', 'text').execute();
}

export async function down(): Promise<void> {
  // Forward-only: migrations are never rolled back in place.
}
