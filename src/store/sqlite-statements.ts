import type SQLite from 'better-sqlite3';

/**
 * The connection Kysely's SQLite dialect runs on, with prepared statements kept for reuse.
 *
 * Kysely prepares every query it runs (`db.prepare(sql)`, then `all`/`run`); better-sqlite3 compiles
 * the SQL each time, which was a third of a `GET /v1/spaces` request's CPU (six small queries, each
 * ~50 µs to prepare and a few µs to run). Kysely compiles the same query shape to the same SQL text
 * with `?` parameters, so the text is a good cache key. Statements are kept in insertion order and the
 * oldest is dropped past `max` (a statement holds little: its compiled program). A statement that is
 * busy (an iterator over it is still open) is never handed out twice: a fresh one is prepared for that
 * caller. SQLite re-prepares a cached statement by itself when the schema changes.
 */
export function withStatementCache(
  sqlite: SQLite.Database,
  max = 1000,
): { prepare(sql: string): SQLite.Statement; close(): void } {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string): SQLite.Statement {
      const cached = cache.get(sql);
      if (cached && !cached.busy) return cached;
      const stmt = sqlite.prepare(sql);
      if (!cached) {
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
        cache.set(sql, stmt);
      }
      return stmt;
    },
    close(): void {
      cache.clear();
      sqlite.close();
    },
  };
}
