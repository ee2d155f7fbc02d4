import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * `changes`: the cross-instance change log. Every write that caches on other instances depend on
 * (a channel moved, a space's settings, hostnames or access, a team's tags) appends one row; on
 * PostgreSQL the append also sends `NOTIFY spaces_changes` with the row's sequence number, so other
 * instances invalidate at once and can tell from a gap in the numbers that they missed one.
 * Rows are pruned after an hour (only a listener that fell behind reads them).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('changes')
    .addColumn('seq', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
