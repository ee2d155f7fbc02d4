import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { newId } from '../../src/ids.ts';
import { type Database, migrate, openDatabase } from '../../src/store/db.ts';
import { Store } from '../../src/store/repos/index.ts';
import type { SpaceRow } from '../../src/store/repos/spaces/spaces.ts';
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

const SEED_AT = '2026-01-01T00:00:00.000Z';
const uniq = () => randomBytes(4).toString('hex');

/** A space row for repository tests (public, active, created at 2026-01-01). */
export function spaceRow(tenantId: string, extra: Partial<SpaceRow> = {}): SpaceRow {
  const slug = extra.slug ?? `s-${uniq()}`;
  return {
    id: newId('spc'),
    tenant_id: tenantId,
    team_id: null,
    principal_type: null,
    principal_id: null,
    anonymous: 0,
    slug,
    public_name: slug,
    title: slug,
    status: 'active',
    access: 'public',
    data_location: 'auto',
    noindex: 0,
    config: null,
    settings_digest: 'd0',
    disabled_at: null,
    disabled_reason: null,
    claim_expires_at: null,
    claimed_at: null,
    purge_after: null,
    expiry_extended_to: null,
    git: null,
    created_by: null,
    created_at: SEED_AT,
    updated_at: SEED_AT,
    deleted_at: null,
    ...extra,
  };
}

/** Inserts a space row (and its current hostname) straight through the repositories. */
export async function createSpace(
  store: Store,
  tenantId: string,
  extra: Partial<SpaceRow> = {},
): Promise<SpaceRow> {
  const row = spaceRow(tenantId, extra);
  await store.transaction(async (repos) => {
    await repos.spaceHostnames.addCurrent(row.public_name, row.id, row.created_at);
    await repos.spaces.insert(row);
  });
  return row;
}
