import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * Indexes for the orders of `GET /v1/spaces?sort=`: a team's spaces by `updated_at` and by name
 * (`lower(title)`, in the "C" collation on PostgreSQL, exactly as the listing compares it), each with the id
 * that breaks ties, so a page is a range scan in either direction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createIndex('spaces_team_updated')
    .ifNotExists()
    .on('spaces')
    .columns(['team_id', 'updated_at', 'id'])
    .execute();
  const name = postgres ? sql`lower(title collate "C")` : sql`lower(title)`;
  await sql`create index if not exists spaces_team_name on spaces (team_id, ${name}, id)`.execute(db);
}
