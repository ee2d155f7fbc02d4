import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import type { Database } from '../../src/store/db.ts';
import type { Store } from '../../src/store/repos/index.ts';
import {
  type SpaceOrder,
  type SpaceRow,
  type SpaceSortKey,
  spaceSortValue,
} from '../../src/store/repos/spaces/spaces.ts';
import { describeEachDb } from '../helpers/server.ts';
import { createSpace, openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the space listing's orders (`GET /v1/spaces?sort=`): by name, by `updated_at` and by
 * creation, each way, resuming after any row (ties included) and the same on SQLite and PostgreSQL.
 */

const T0 = '2026-01-01T00:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const uniq = () => randomBytes(4).toString('hex');

async function seedTenant(database: Database): Promise<string> {
  const id = newId('tnt');
  await database.db.insertInto('tenants').values({ id, name: id, created_at: T0 }).execute();
  return id;
}
async function seedUser(database: Database, tenantId: string): Promise<string> {
  const id = newId('usr');
  await database.db
    .insertInto('users')
    .values({
      id,
      tenant_id: tenantId,
      email: `${id}@example.test`,
      name: id,
      password_hash: null,
      is_admin: 0,
      created_at: T0,
      updated_at: T0,
    })
    .execute();
  return id;
}
async function seedTeam(database: Database, tenantId: string, members: string[] = []): Promise<string> {
  const id = newId('team');
  const slug = `t-${uniq()}`;
  await database.db
    .insertInto('teams')
    .values({
      id,
      tenant_id: tenantId,
      name: slug,
      slug,
      plan: 'free',
      partner_enabled_at: null,
      default_data_location: 'auto',
      default_space_access: 'team',
      logo: null,
      metadata: null,
      billing_customer_id: null,
      system_space_id: null,
      presentation: null,
      created_at: T0,
      updated_at: T0,
    })
    .execute();
  for (const user_id of members)
    await database.db
      .insertInto('team_members')
      .values({ team_id: id, user_id, role: 'member', created_at: T0, updated_at: T0 })
      .execute();
  return id;
}

/** ASCII letters folded, then compared by code unit (= UTF-8 byte order here): what both databases do. */
const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
function expected(rows: SpaceRow[], order: SpaceOrder): string[] {
  const key = (r: SpaceRow) =>
    order.key === 'name' ? fold(r.title) : order.key === 'updated' ? r.updated_at : r.id;
  const sorted = [...rows].sort((a, b) => cmp(key(a), key(b)) || cmp(a.id, b.id));
  if (order.desc) sorted.reverse();
  return sorted.map((r) => r.id);
}

const ORDERS: SpaceOrder[] = (['name', 'updated', 'created'] as SpaceSortKey[]).flatMap((key) => [
  { key, desc: false },
  { key, desc: true },
]);

describeEachDb('store: space listing orders', (kind) => {
  let ts: TestStore;
  let store: Store;
  let database: Database;
  let tenant: string;
  let user: string;
  let team: string;
  let rows: SpaceRow[];

  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
    database = ts.database;
    tenant = await seedTenant(database);
    user = await seedUser(database, tenant);
    team = await seedTeam(database, tenant, [user]);
    // Case, a tie on the name (twice), ties on updated_at, punctuation and a non-ASCII letter.
    const titles: Array<[string, number]> = [
      ['beta', 3],
      ['Alpha', 1],
      ['alpha', 1],
      ['ALPHA', 5],
      ['Gamma', 2],
      ['delta', 3],
      ['_under', 4],
      ['Zed', 0],
      ['Émile', 2],
      ['emile', 6],
    ];
    rows = [];
    for (const [title, minute] of titles)
      rows.push(
        await createSpace(store, tenant, {
          team_id: team,
          principal_type: 'team',
          principal_id: team,
          title,
          updated_at: at(minute),
        }),
      );
    // Not listed: another team's, a deleted one.
    const other = await seedTeam(database, tenant);
    await createSpace(store, tenant, { team_id: other, title: 'aaa other' });
    const gone = await createSpace(store, tenant, { team_id: team, title: 'aaa gone' });
    await store.repos.spaces.softDelete(gone.id, at(9));
  });
  afterAll(async () => {
    await ts?.close();
  });

  const resumeAfter = (row: SpaceRow, order: SpaceOrder) =>
    order.key === 'created' ? row.id : { value: spaceSortValue(row, order.key), id: row.id };

  for (const order of ORDERS) {
    const name = `${order.desc ? '-' : ''}${order.key}`;

    it(`listForTeams in order ${name}: one page and page by page agree, ties by id`, async () => {
      const want = expected(rows, order);
      const all = await store.repos.spaces.listForTeams(
        tenant,
        [team],
        null,
        50,
        undefined,
        undefined,
        order,
      );
      expect(all.map((r) => r.id)).toEqual(want);
      for (const size of [1, 2, 3]) {
        const got: string[] = [];
        let after: SpaceRow | null = null;
        for (;;) {
          const page: SpaceRow[] = await store.repos.spaces.listForTeams(
            tenant,
            [team],
            after ? resumeAfter(after, order) : null,
            size,
            undefined,
            undefined,
            order,
          );
          got.push(...page.map((r) => r.id));
          if (page.length < size) break;
          after = page.at(-1)!;
        }
        expect(got, `pages of ${size}`).toEqual(want);
      }
    });

    it(`listForMember in order ${name} pages the same way`, async () => {
      const want = expected(rows, order);
      const got: string[] = [];
      let after: SpaceRow | null = null;
      for (;;) {
        const page: SpaceRow[] = await store.repos.spaces.listForMember(
          tenant,
          user,
          null,
          after ? resumeAfter(after, order) : null,
          4,
          order,
        );
        got.push(...page.map((r) => r.id));
        if (page.length < 4) break;
        after = page.at(-1)!;
      }
      expect(got).toEqual(want);
    });
  }

  it('name order folds ASCII case only: "Émile" sorts after every ASCII title, beside nothing', async () => {
    const list = await store.repos.spaces.listForTeams(tenant, [team], null, 50, undefined, undefined, {
      key: 'name',
      desc: false,
    });
    expect(list.map((r) => r.title)).toEqual([
      '_under',
      ...list.slice(1, 4).map((r) => r.title),
      'beta',
      'delta',
      'emile',
      'Gamma',
      'Zed',
      'Émile',
    ]);
    expect(
      list
        .slice(1, 4)
        .map((r) => r.title)
        .sort(),
    ).toEqual(['ALPHA', 'Alpha', 'alpha']);
  });

  it('a search and the deleted listing keep their order and filter', async () => {
    const byName: SpaceOrder = { key: 'name', desc: true };
    const found = await store.repos.spaces.listForTeams(tenant, [team], null, 50, 'alp', undefined, byName);
    expect(found.map((r) => r.id)).toEqual(
      expected(
        rows.filter((r) => /alpha/i.test(r.title)),
        byName,
      ),
    );
    const deleted = await store.repos.spaces.listForTeams(tenant, [team], null, 50, undefined, at(0), {
      key: 'updated',
      desc: true,
    });
    expect(deleted.map((r) => r.title)).toEqual(['aaa gone']);
  });
});
