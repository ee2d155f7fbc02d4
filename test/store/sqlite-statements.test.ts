import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { withStatementCache } from '../../src/store/sqlite-statements.ts';

describe('SQLite statement cache (the connection Kysely runs on)', () => {
  const open = (max?: number) => {
    const db = new SQLite(':memory:');
    db.exec('create table t (n integer)');
    db.prepare('insert into t values (1), (2), (3)').run();
    return { db, conn: withStatementCache(db, max) };
  };

  it('hands out the same compiled statement for the same SQL text', () => {
    const { conn } = open();
    const a = conn.prepare('select n from t order by n');
    expect(conn.prepare('select n from t order by n')).toBe(a);
    expect(conn.prepare('select n from t order by n desc')).not.toBe(a);
    expect(a.all()).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('never hands out a statement an open iterator is still using', () => {
    const { conn } = open();
    const sql = 'select n from t order by n';
    const outer = conn.prepare(sql);
    const seen: number[] = [];
    for (const row of outer.iterate() as Iterable<{ n: number }>) {
      // The same query run while the first one is being read: a fresh statement, correct rows.
      const inner = conn.prepare(sql);
      expect(inner).not.toBe(outer);
      expect(inner.all()).toHaveLength(3);
      seen.push(row.n);
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(conn.prepare(sql)).toBe(outer);
  });

  it('keeps at most `max` statements, dropping the oldest', () => {
    const { conn } = open(2);
    const a = conn.prepare('select 1');
    conn.prepare('select 2');
    conn.prepare('select 3');
    expect(conn.prepare('select 1')).not.toBe(a);
  });

  it('sees a schema change made after the statement was cached', () => {
    const { db, conn } = open();
    const s = conn.prepare('select * from t order by n limit 1');
    expect(s.get()).toEqual({ n: 1 });
    db.exec('alter table t add column m integer default 7');
    expect(conn.prepare('select * from t order by n limit 1').get()).toEqual({ n: 1, m: 7 });
  });

  it('closes the database', () => {
    const { db, conn } = open();
    conn.close();
    expect(db.open).toBe(false);
  });
});
