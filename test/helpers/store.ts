import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type Database, migrate, openDatabase } from '../../src/store/db.ts';
import { Store } from '../../src/store/repos/index.ts';
import { type DbKind, PG_URL } from './server.ts';

export interface TestStore {
  store: Store;
  database: Database;
  close(): Promise<void>;
}

/**
 * A migrated, empty metadata store for repository contract tests: a fresh SQLite file, or a fresh
 * schema in the PostgreSQL of `SPACES_TEST_DATABASE_URL`. Use with `describeEachDb`.
 */
export async function openTestStore(kind: DbKind): Promise<TestStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-store-'));
  const schema = kind === 'postgres' ? `s_${randomBytes(6).toString('hex')}` : undefined;
  const url = kind === 'postgres' ? PG_URL : `sqlite:${path.join(dir, 'spaces.db')}`;
  const database = await openDatabase(url, { schema, poolSize: 4 });
  await migrate(database);
  return {
    store: new Store(database),
    database,
    async close() {
      await database.close();
      if (schema) {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
