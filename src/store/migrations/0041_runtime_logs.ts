import type { Kysely } from 'kysely';

/** `runtime_logs`: functions' console lines and uncaught exceptions per request (issue 26). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('runtime_logs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('level', 'text', (c) => c.notNull())
    .addColumn('handler', 'text')
    .addColumn('method', 'text')
    .addColumn('path', 'text')
    .addColumn('status', 'integer')
    .addColumn('outcome', 'text')
    .addColumn('message', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('runtime_logs_space').on('runtime_logs').columns(['space_id', 'id']).execute();
  await db.schema.createIndex('runtime_logs_at').on('runtime_logs').column('at').execute();
}
