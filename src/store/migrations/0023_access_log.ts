import type { Kysely } from 'kysely';

/**
 * `access_log`: one row per site request the edge answered (no raw IP: only a daily-salted visitor
 * hash), kept for the retention setting. `access_hourly`: per space and hour, requests, bytes and
 * status classes. `access_visitors`: the distinct visitor hashes per space and day (exact unique
 * counts; the hash's salt is gone the day after, so they identify nobody). `access_top`: per space,
 * day and kind (`path`, `referrer`, `country`) the request count of each key, bounded at flush time.
 * The rollups are written when the ring is flushed, so analytics read them, never raw lines.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('access_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('version_id', 'text')
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('referrer', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('country', 'text')
    .addColumn('request_id', 'text')
    .addColumn('visitor', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('access_log_space').on('access_log').columns(['space_id', 'id']).execute();
  await db.schema.createIndex('access_log_at').on('access_log').columns(['at']).execute();
  await db.schema
    .createTable('access_hourly')
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('s2xx', 'bigint', (c) => c.notNull())
    .addColumn('s3xx', 'bigint', (c) => c.notNull())
    .addColumn('s4xx', 'bigint', (c) => c.notNull())
    .addColumn('s5xx', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('access_hourly_pk', ['space_id', 'hour'])
    .execute();
  await db.schema
    .createTable('access_visitors')
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('visitor', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('access_visitors_pk', ['space_id', 'day', 'visitor'])
    .execute();
  await db.schema
    .createTable('access_top')
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('access_top_pk', ['space_id', 'day', 'kind', 'key'])
    .execute();
}
