/**
 * The owner's operations on a space database (src/store/space-db/admin.ts): keyset export pages
 * that cover every row exactly once (rowid and WITHOUT ROWID tables), values that JSON cannot hold
 * (bytes, big integers, infinities) surviving export → import, an import that fails leaving the
 * database as it was, and migrations with their ledger, destructive flags and all-or-nothing runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  consoleStatement,
  destructiveKind,
  dump,
  type ExportPage,
  exportPage,
  importExport,
  inspect,
  migrate,
} from '../../src/store/space-db/admin.ts';
import { SpaceDatabase, type SpaceDbError } from '../../src/store/space-db/space-db.ts';

const now = '2026-11-29T00:00:00.000Z';
let dir: string;
let db: SpaceDatabase;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spacedb-'));
  db = SpaceDatabase.open(path.join(dir, 'a.sqlite'));
});
afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function seed(d: SpaceDatabase): void {
  d.db.exec(`
    CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, data BLOB, big INTEGER, r REAL);
    CREATE INDEX notes_body ON notes (body);
    CREATE TABLE tags (name TEXT, note INTEGER, PRIMARY KEY (name, note)) WITHOUT ROWID;
    CREATE VIEW long_notes AS SELECT id FROM notes WHERE length(body) > 3;
    CREATE TRIGGER notes_touch AFTER INSERT ON notes BEGIN UPDATE notes SET r = coalesce(r, 0.5) WHERE id = new.id; END;
  `);
  const ins = d.db.prepare('INSERT INTO notes (body, data, big, r) VALUES (?, ?, ?, ?)');
  for (let i = 1; i <= 300; i++)
    ins.run(
      `note ${i} ${'x'.repeat(i % 7)}`,
      i % 3 ? Buffer.from([i % 256, 0, 255]) : null,
      null,
      i % 5 ? i / 4 : null,
    );
  d.db.prepare('UPDATE notes SET big = ? WHERE id = 1').run(9007199254740993n);
  d.db.prepare('UPDATE notes SET r = ? WHERE id = 2').run(Number.POSITIVE_INFINITY);
  const tag = d.db.prepare('INSERT INTO tags VALUES (?, ?)');
  for (let i = 1; i <= 120; i++) tag.run(`t${i % 11}`, i);
}

function allPages(d: SpaceDatabase, table: string | null, maxBytes: number): ExportPage[] {
  const pages: ExportPage[] = [];
  let cursor: string | null = null;
  do {
    const page = exportPage(d, { table, cursor, now, maxBytes });
    pages.push(page);
    cursor = page.next;
    if (pages.length > 10_000) throw new Error('export does not end');
  } while (cursor);
  return pages;
}

function merge(pages: ExportPage[]): ExportPage {
  const out: ExportPage = { ...pages[0]!, tables: [], next: null };
  for (const p of pages)
    for (const t of p.tables) {
      const had = out.tables.find((x) => x.name === t.name);
      if (had) had.rows.push(...t.rows);
      else out.tables.push({ ...t, rows: [...t.rows] });
    }
  return out;
}

describe('export', () => {
  it('walks every row exactly once across small pages, rowid and WITHOUT ROWID tables alike', () => {
    seed(db);
    const whole = exportPage(db, { table: null, cursor: null, now });
    expect(whole.next).toBeNull();
    const pages = allPages(db, null, 2000);
    expect(pages.length).toBeGreaterThan(5);
    expect(pages[0]!.schema?.map((s) => `${s.type}:${s.name}`)).toEqual([
      'table:notes',
      'table:tags',
      'index:notes_body',
      'view:long_notes',
      'trigger:notes_touch',
    ]);
    expect(pages.slice(1).every((p) => p.schema === undefined)).toBe(true);
    for (const p of pages) expect(JSON.stringify(p).length).toBeLessThanOrEqual(2000 + 200);
    expect(merge(pages).tables).toEqual(whole.tables);
    const notes = whole.tables.find((t) => t.name === 'notes')!;
    expect(notes.rows.map((r) => r[0])).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(notes.rows[0]![3]).toEqual({ $int: '9007199254740993' });
    expect(notes.rows[1]![4]).toEqual({ $real: 'Infinity' });
    expect(notes.rows[0]![2]).toEqual({ $blob: Buffer.from([1, 0, 255]).toString('base64') });
    const tags = whole.tables.find((t) => t.name === 'tags')!;
    expect(tags.rows).toHaveLength(120);
    const keys = tags.rows.map((r) => `${r[0]}|${String(r[1]).padStart(4, '0')}`);
    expect(new Set(keys).size).toBe(120);
  });

  it('exports one table with its own schema entries, and refuses an unknown table or cursor', () => {
    seed(db);
    const pages = allPages(db, 'tags', 500);
    expect(pages[0]!.schema?.map((s) => s.name)).toEqual(['tags']);
    expect(merge(pages).tables.map((t) => [t.name, t.rows.length])).toEqual([['tags', 120]]);
    expect(() => exportPage(db, { table: 'nope', cursor: null, now })).toThrow(
      expect.objectContaining({ code: 'db_table_not_found' }),
    );
    expect(() => exportPage(db, { table: null, cursor: 'garbage!', now })).toThrow(
      expect.objectContaining({ code: 'db_export_cursor_invalid' }),
    );
  });
});

describe('import', () => {
  it('round-trips an export into another database: schema, rows and odd values identical', () => {
    seed(db);
    migrate(db, {
      migrations: [{ name: '0001', sql: 'CREATE TABLE extra (x)' }],
      dryRun: false,
      allowDrop: false,
      allowRename: false,
      now,
    });
    const doc = merge(allPages(db, null, 4096));
    const other = SpaceDatabase.open(path.join(dir, 'b.sqlite'));
    try {
      other.db.exec('CREATE TABLE leftover (y); INSERT INTO leftover VALUES (1)');
      expect(importExport(other, JSON.parse(JSON.stringify(doc)))).toEqual({ tables: 4, rows: 421 });
      const again = exportPage(other, { table: null, cursor: null, now });
      const original = exportPage(db, { table: null, cursor: null, now });
      expect(again.tables).toEqual(original.tables);
      expect(again.schema).toEqual(original.schema);
      expect(inspect(other).migrations.map((m) => m.name)).toEqual(['0001']);
      // The trigger came back too, and works.
      other.db.prepare("INSERT INTO notes (body) VALUES ('after')").run();
      expect(other.db.prepare("SELECT r FROM notes WHERE body = 'after'").get()).toEqual({ r: 0.5 });
      expect(other.db.prepare('SELECT big FROM notes WHERE id = 1').safeIntegers(true).get()).toEqual({
        big: 9007199254740993n,
      });
    } finally {
      other.close();
    }
  });

  it('leaves the database as it was when the import fails half-way', () => {
    seed(db);
    const before = exportPage(db, { table: null, cursor: null, now });
    const doc = merge(allPages(db, null, 1_000_000));
    doc.tables[1]!.rows[5] = ['only one value'];
    expect(() => importExport(db, doc)).toThrow(expect.objectContaining({ code: 'db_import_invalid' }));
    const bad = { ...doc, schema: [{ type: 'table', name: 'x', table: 'x', sql: "ATTACH 'other.db' AS o" }] };
    expect(() => importExport(db, bad)).toThrow(expect.objectContaining({ code: 'db_statement_refused' }));
    expect(() => importExport(db, { ...doc, next: 'abc' })).toThrow(
      expect.objectContaining({ code: 'db_import_invalid' }),
    );
    expect(() => importExport(db, { ...doc, version: 2 })).toThrow(
      expect.objectContaining({ code: 'db_import_invalid' }),
    );
    expect(exportPage(db, { table: null, cursor: null, now }).tables).toEqual(before.tables);
  });
});

describe('migrate', () => {
  const run = (
    migrations: { name: string; sql: string }[],
    flags: Partial<{ dryRun: boolean; allowDrop: boolean; allowRename: boolean }> = {},
  ) => migrate(db, { migrations, dryRun: false, allowDrop: false, allowRename: false, now, ...flags });

  it('applies new migrations in order, skips applied ones and refuses an edited one', () => {
    const m1 = { name: '0001_notes', sql: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)' };
    const m2 = {
      name: '0002_index',
      sql: 'CREATE INDEX notes_body ON notes (body); INSERT INTO notes (body) VALUES (1)',
    };
    expect(run([m1, m2]).applied.map((a) => a.name)).toEqual(['0001_notes', '0002_index']);
    const again = run([m1, m2, { name: '0003', sql: 'ALTER TABLE notes ADD COLUMN at TEXT' }]);
    expect(again).toMatchObject({ skipped: ['0001_notes', '0002_index'], applied: [{ name: '0003' }] });
    let err: SpaceDbError | null = null;
    try {
      run([{ ...m1, sql: `${m1.sql} -- edited` }]);
    } catch (e) {
      err = e as SpaceDbError;
    }
    expect(err).toMatchObject({ code: 'db_migration_changed', pointer: '/migrations/0/sql' });
    expect(inspect(db).migrations.map((m) => m.name)).toEqual(['0001_notes', '0002_index', '0003']);
  });

  it('needs the allow flags to drop or rename, and applies nothing when one migration fails', () => {
    run([{ name: 'a', sql: 'CREATE TABLE a (x); CREATE TABLE b (y)' }]);
    expect(() => run([{ name: 'drop', sql: 'DROP TABLE a' }])).toThrow(
      expect.objectContaining({ code: 'db_migration_destructive' }),
    );
    expect(() => run([{ name: 'ren', sql: 'ALTER TABLE b RENAME TO c' }])).toThrow(
      expect.objectContaining({ code: 'db_migration_destructive' }),
    );
    expect(() =>
      run([
        { name: 'ok', sql: 'CREATE TABLE d (z)' },
        { name: 'broken', sql: 'INSERT INTO nowhere VALUES (1)' },
      ]),
    ).toThrow(expect.objectContaining({ code: 'db_migration_failed', pointer: '/migrations/1/sql' }));
    expect(inspect(db).tables.map((t) => t.name)).toEqual(['a', 'b']);
    const dry = run([{ name: 'drop', sql: 'DROP TABLE a' }], { dryRun: true, allowDrop: true });
    expect(dry).toMatchObject({ dryRun: true, applied: [{ name: 'drop' }] });
    expect(inspect(db).tables.map((t) => t.name)).toEqual(['a', 'b']);
    run([{ name: 'drop', sql: 'DROP TABLE a' }], { allowDrop: true });
    expect(inspect(db).tables.map((t) => t.name)).toEqual(['b']);
    expect(destructiveKind("INSERT INTO b VALUES ('DROP TABLE b')")).toBeNull();
    expect(destructiveKind('ALTER TABLE b DROP COLUMN y')).toBe('drop');
  });
});

describe('inspect, dump and the console', () => {
  it('describes tables and dumps their first rows', () => {
    seed(db);
    const i = inspect(db);
    expect(i.tables.map((t) => [t.name, t.rowCount, t.withoutRowid])).toEqual([
      ['notes', 300, false],
      ['tags', 120, true],
    ]);
    expect(i.tables[0]!.columns[0]).toEqual({
      name: 'id',
      type: 'INTEGER',
      notNull: false,
      primaryKey: 1,
      default: null,
    });
    expect(i.tables[0]!.indexes.map((x) => x.name)).toEqual(['notes_body']);
    expect(i.views.map((v) => v.name)).toEqual(['long_notes']);
    expect(i.triggers).toEqual([expect.objectContaining({ name: 'notes_touch', table: 'notes' })]);
    const d = dump(db, 25);
    expect(d.tables[0]).toMatchObject({ name: 'notes', rowCount: 300, truncated: true });
    expect(d.tables[0]!.rows).toHaveLength(25);
    expect(d.tables[0]!.rows[0]).toMatchObject({ id: 1, big: { $int: '9007199254740993' } });
    expect(dump(db, 1000).tables[0]!.rows).toHaveLength(100);
  });

  it('runs one statement: columns and rows of a query, changes of a write, and the same refusals', () => {
    seed(db);
    const q = consoleStatement(db, 'SELECT id, body FROM notes WHERE id <= 2 ORDER BY id');
    expect(q).toMatchObject({
      columns: ['id', 'body'],
      rows: [
        [1, 'note 1 x'],
        [2, 'note 2 xx'],
      ],
      truncated: false,
    });
    expect(consoleStatement(db, 'SELECT * FROM notes, tags').truncated).toBe(true);
    expect(consoleStatement(db, "UPDATE notes SET body = 'z' WHERE id < 4")).toMatchObject({
      columns: [],
      changes: 3,
    });
    expect(() => consoleStatement(db, "ATTACH 'x.db' AS x")).toThrow(
      expect.objectContaining({ code: 'db_statement_refused' }),
    );
    expect(() => consoleStatement(db, 'SELECT * FROM nowhere')).toThrow(
      expect.objectContaining({ code: 'db_query_failed' }),
    );
  });
});
