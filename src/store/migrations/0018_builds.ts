import type { Kysely } from 'kysely';

/**
 * `builds`: one build of a space from an uploaded source archive or a git repository at a ref, its
 * state (`waiting_for_source` → `uploading_source` → `queued` → `running` → `succeeded|failed|
 * canceled|skipped`), the settings it ran with (each with where it came from) and the version it
 * published. `build_logs`: its output, one row per line (secrets already redacted), in id order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('builds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('git_url', 'text')
    .addColumn('git_ref', 'text')
    .addColumn('branch', 'text')
    .addColumn('commit_sha', 'text')
    .addColumn('channel', 'text')
    .addColumn('settings', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('version_id', 'text')
    .addColumn('retry_of', 'text')
    .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('log_bytes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('builds_space').on('builds').columns(['space_id', 'id']).execute();
  await db.schema
    .createTable('build_logs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('build_id', 'text', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('line', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('build_logs_build').on('build_logs').columns(['build_id', 'id']).execute();
}
