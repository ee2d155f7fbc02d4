import { type Kysely, sql } from 'kysely';

// The durable job queue. Portable types only; partial indexes work on SQLite and PostgreSQL alike.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text')
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('every_ms', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  // One pending job per (kind, key): enqueue dedupes against it with ON CONFLICT.
  await db.schema
    .createIndex('jobs_pending_key')
    .ifNotExists()
    .on('jobs')
    .columns(['kind', 'dedupe_key'])
    .unique()
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // Claiming: due pending jobs of a kind in run_at order.
  await db.schema
    .createIndex('jobs_claim')
    .ifNotExists()
    .on('jobs')
    .columns(['kind', 'status', 'run_at'])
    .execute();
  // Lease expiry scan and pruning.
  await db.schema
    .createIndex('jobs_status_locked')
    .ifNotExists()
    .on('jobs')
    .columns(['status', 'locked_until'])
    .execute();
  await db.schema
    .createIndex('jobs_status_finished')
    .ifNotExists()
    .on('jobs')
    .columns(['status', 'finished_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('jobs').ifExists().execute();
}
