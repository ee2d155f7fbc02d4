import type { Kysely } from 'kysely';

/**
 * `team_domain_settings`: a team's custom-domain settings, kept by the domains area — today whether
 * the team may add wildcard domains (`*.example.com`, spec §8 `wildcardEnabled`). No row: the
 * defaults (wildcards off).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('team_domain_settings')
    .addColumn('team_id', 'text', (c) => c.primaryKey().references('teams.id').onDelete('cascade'))
    .addColumn('wildcard_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
