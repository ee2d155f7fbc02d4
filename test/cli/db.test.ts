import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, publishViaVersions } from '../publishing/helpers.ts';
import { type CliEnv, cli, cliEnv } from './helpers.ts';

// `spaces db …`: the real CLI against a real server with a runtime space — migrations from a folder,
// inspect and dump, an export written to a file in one piece, and that file imported back.

let t: TestServer;
let e: CliEnv;
const HOST = 'cli-db.localhost';

beforeAll(async () => {
  t = await startServer();
  e = { ...cliEnv(t.url), env: { SPACES_TOKEN: t.ownerKey, SPACES_SPACE: 'cli-db' } };
  const space = await createSpace(t, undefined, { slug: 'cli-db', access: 'public' });
  await publishViaVersions(t, space.id, {
    'index.html': 'home',
    'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
    'handler.js': `export default { async fetch(req, env) {
      return Response.json((await env.DB.prepare('SELECT body FROM notes ORDER BY id').all()).results.map((r) => r.body));
    } };`,
  });
}, 60_000);
afterAll(() => t?.close());

const notes = async () => (await t.api('GET', '/api', { token: null, host: HOST })).body;

it('applies a folder of migrations once, in name order, and refuses a drop without --allow-drop', async () => {
  const dir = path.join(e.cwd, 'migrations');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, '0002_rows.sql'), "INSERT INTO notes (body) VALUES ('one'), ('two');");
  fs.writeFileSync(
    path.join(dir, '0001_notes.sql'),
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);',
  );
  fs.writeFileSync(path.join(dir, 'README.md'), 'not a migration');
  const dry = await cli(e, ['db', 'migrate', '--dry-run']);
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.stdout).toContain('Would apply 0001_notes.sql, 0002_rows.sql');
  const first = await cli(e, ['db', 'migrate']);
  expect(first.code, first.stderr).toBe(0);
  expect(first.stdout).toContain('Applied 0001_notes.sql, 0002_rows.sql');
  expect(await notes()).toEqual(['one', 'two']);
  const again = await cli(e, ['db', 'migrate', 'migrations', '--json']);
  expect(again.json()).toMatchObject({ applied: [], skipped: ['0001_notes.sql', '0002_rows.sql'] });
  fs.writeFileSync(path.join(dir, '0003_drop.sql'), 'DROP TABLE notes;');
  const refused = await cli(e, ['db', 'migrate']);
  expect(refused.code).toBe(5);
  expect(refused.stderr).toContain('db_migration_destructive');
  fs.rmSync(path.join(dir, '0003_drop.sql'));
});

it('inspects and dumps', async () => {
  const inspect = await cli(e, ['db', 'inspect']);
  expect(inspect.code, inspect.stderr).toBe(0);
  expect(inspect.stdout).toMatch(/notes\s+2\s+id, body/);
  expect(inspect.stdout).toContain('Migrations applied: 0001_notes.sql, 0002_rows.sql');
  const dump = await cli(e, ['db', 'dump', '--limit', '1', '--json']);
  expect(dump.json().tables[0]).toMatchObject({
    name: 'notes',
    rowCount: 2,
    truncated: true,
    rows: [{ id: 1, body: 'one' }],
  });
  const bad = await cli(e, ['db', 'dump', '--limit', '500']);
  expect(bad.code).toBe(2);
});

it('exports to a file and imports it back over later changes', async () => {
  const out = await cli(e, ['db', 'export', '--out', 'backup.json']);
  expect(out.code, out.stderr).toBe(0);
  expect(out.stdout).toContain('2 table(s), 4 row(s)');
  const file = path.join(e.cwd, 'backup.json');
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  expect(doc).toMatchObject({ format: 'spaces.db-export', version: 1, next: null });
  expect(fs.readdirSync(e.cwd).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  await t.api('POST', `/v1/spaces/cli-db/db/migrate`, {
    body: { migrations: [{ name: '0009_more.sql', sql: "INSERT INTO notes (body) VALUES ('three')" }] },
  });
  expect(await notes()).toEqual(['one', 'two', 'three']);
  const imported = await cli(e, ['db', 'import', 'backup.json']);
  expect(imported.code, imported.stderr).toBe(0);
  expect(imported.stdout).toContain('Replaced the database');
  expect(await notes()).toEqual(['one', 'two']);
  const stdout = await cli(e, ['db', 'export', '--table', 'notes']);
  expect(JSON.parse(stdout.stdout).tables).toEqual([
    {
      name: 'notes',
      columns: ['id', 'body'],
      rows: [
        [1, 'one'],
        [2, 'two'],
      ],
    },
  ]);
  const console = await cli(e, ['db', 'console', '--json']);
  expect(console.json().url).toMatch(/\/v1\/db-console#.{30,}$/);
});
