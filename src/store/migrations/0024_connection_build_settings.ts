import type { Kysely } from 'kysely';

/**
 * `repository_connections.build_settings`: the build settings saved on the connection (JSON of
 * `frameworkPreset`, `installCommand`, `buildCommand`, `outputDirectory`), written by analyze's
 * "apply best" (the top-ranked candidate of a monorepo) or by PATCH; null when none. They rank
 * below the space's config and the repository's own file, above detection.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('repository_connections').addColumn('build_settings', 'text').execute();
}
