import type { Kysely } from 'kysely';

/**
 * `spaces.primary_domain`: the custom domain a space's `liveUrl` names (its oldest verified, bound
 * standard domain), kept by the domains area whenever a binding or a verification changes; null for
 * none, and then `liveUrl` is the managed hostname.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('spaces').addColumn('primary_domain', 'text').execute();
}
