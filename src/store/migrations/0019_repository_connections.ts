import type { Kysely } from 'kysely';

/**
 * `repository_connections`: at most one per space, the repository its builds come from (`provider`
 * `generic` for now: a clone URL with an optional HTTPS token, sealed with the server's secret key;
 * a git-host app later fills `repository`, `installation_id`), its branches and auto-deploy flags.
 * `build_status_changes`: each state a build entered and when (what `GET /v1/builds/{id}/events`
 * lists); written by the builds repository with every status change.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('repository_connections')
    .addColumn('space_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('clone_url', 'text', (c) => c.notNull())
    .addColumn('repository', 'text')
    .addColumn('installation_id', 'text')
    .addColumn('credential_sealed', 'text')
    .addColumn('default_branch', 'text')
    .addColumn('production_branch', 'text')
    .addColumn('app_root', 'text')
    .addColumn('auto_deploy_production', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('auto_deploy_previews', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('build_status_changes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('build_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('build_status_changes_build')
    .on('build_status_changes')
    .columns(['build_id', 'id'])
    .execute();
}
