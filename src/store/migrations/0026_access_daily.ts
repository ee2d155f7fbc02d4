import { type Kysely, sql } from 'kysely';

/**
 * `access_daily`: per space and day, the number of distinct visitor hashes — kept up to date by the
 * flush that inserts them (it adds how many of its hashes were new that day), so analytics sums at most
 * 31 rows instead of counting every hash of a month. Backfilled from `access_visitors`.
 * `access_top_kind`: the top lists read one kind of one space over a range of days.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('access_daily')
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('visitors', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('access_daily_pk', ['space_id', 'day'])
    .execute();
  await sql`insert into access_daily (space_id, day, visitors)
    select space_id, day, count(*) from access_visitors group by space_id, day`.execute(db);
  await db.schema
    .createIndex('access_top_kind')
    .on('access_top')
    .columns(['space_id', 'kind', 'day', 'key', 'requests'])
    .execute();
}
