import type { Kysely } from 'kysely';

/**
 * `space_crons`: the crons of each space's live version (issue 26, behaviour §4.8), their next due
 * time, last run and last failure. The tick finds due rows through `space_crons_due`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('space_crons')
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('schedule', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text')
    .addColumn('next_run_at', 'text')
    .addColumn('last_run_at', 'text')
    .addColumn('last_run_status', 'integer')
    .addColumn('last_run_trigger', 'text')
    .addColumn('last_run_ms', 'integer')
    .addColumn('last_failure_at', 'text')
    .addColumn('last_failure_status', 'integer')
    .addColumn('last_failure_message', 'text')
    .addColumn('last_failure_trigger', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('space_crons_pk', ['space_id', 'key'])
    .execute();
  await db.schema.createIndex('space_crons_due').on('space_crons').column('next_run_at').execute();
}
