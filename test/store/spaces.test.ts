import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { SecretBox } from '../../src/domain/publishing/secrets.ts';
import { VariableService } from '../../src/domain/publishing/variables.ts';
import { newId } from '../../src/ids.ts';
import type { Database } from '../../src/store/db.ts';
import { isUniqueViolation } from '../../src/store/db.ts';
import type { Store } from '../../src/store/repos/index.ts';
import type { OperationRow } from '../../src/store/repos/spaces/operations.ts';
import type { SpaceRow } from '../../src/store/repos/spaces/spaces.ts';
import type { TagVersionRow } from '../../src/store/repos/spaces/tag-versions.ts';
import { describeEachDb } from '../helpers/server.ts';
import { openTestStore, type TestStore } from '../helpers/store.ts';

/**
 * Contract of the spaces group's repositories (spaces, hostnames, operations, space keys, tags,
 * variables, the team read model), the same on SQLite and PostgreSQL.
 */

const T0 = '2026-01-01T00:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const uniq = () => randomBytes(4).toString('hex');

/** Fixture rows the repositories under test only read: tenants, users, teams, memberships, versions. */
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

async function seedTeam(
  database: Database,
  tenantId: string,
  members: string[] = [],
  defaults: { access?: string; location?: string } = {},
): Promise<{ id: string; slug: string }> {
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
      default_data_location: defaults.location ?? 'auto',
      default_space_access: defaults.access ?? 'team',
      logo: null,
      metadata: null,
      billing_customer_id: null,
      system_space_id: null,
      presentation: null,
      created_at: T0,
      updated_at: T0,
    })
    .execute();
  for (const user_id of members) {
    await database.db
      .insertInto('team_members')
      .values({ team_id: id, user_id, role: 'member', created_at: T0, updated_at: T0 })
      .execute();
  }
  return { id, slug };
}

function spaceRow(tenantId: string, teamId: string | null, extra: Partial<SpaceRow> = {}): SpaceRow {
  const slug = extra.slug ?? `s-${uniq()}`;
  return {
    id: newId('spc'),
    tenant_id: tenantId,
    team_id: teamId,
    principal_type: teamId ? 'team' : null,
    principal_id: teamId,
    anonymous: teamId ? 0 : 1,
    slug,
    public_name: slug,
    title: slug,
    status: 'active',
    access: 'team',
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
    created_at: T0,
    updated_at: T0,
    deleted_at: null,
    primary_domain: null,
    ...extra,
  };
}

/** A space with its current hostname, as SpaceService.create writes it. */
async function createSpace(
  store: Store,
  tenantId: string,
  teamId: string | null,
  extra: Partial<SpaceRow> = {},
): Promise<SpaceRow> {
  const row = spaceRow(tenantId, teamId, extra);
  await store.transaction(async (repos) => {
    await repos.spaceHostnames.addCurrent(row.slug, row.id, row.created_at);
    await repos.spaces.insert(row);
  });
  return row;
}

function operationRow(space: SpaceRow, kind: string, status: string, id = newId('op')): OperationRow {
  return {
    id,
    tenant_id: space.tenant_id,
    space_id: space.id,
    kind,
    status,
    resources: JSON.stringify([{ type: 'space', id: space.id }]),
    progress: null,
    diagnostics: null,
    created_at: T0,
    updated_at: T0,
    finished_at: null,
  };
}

async function seedVersion(database: Database, spaceId: string, status: string): Promise<string> {
  const id = newId('ver');
  await database.db
    .insertInto('versions')
    .values({
      id,
      space_id: spaceId,
      number: 1,
      status,
      target: 'production',
      message: null,
      source: null,
      file_count: 1,
      total_bytes: 1,
      manifest_digest: 'x',
      rules: null,
      diagnostics: null,
      config: null,
      created_by: null,
      created_at: T0,
      finalized_at: null,
      expires_at: null,
      deleted_at: null,
      base_id: null,
    })
    .execute();
  await database.db
    .insertInto('version_files')
    .values({
      version_id: id,
      path: 'index.html',
      source_sha256: 'a'.repeat(64),
      source_size: 1,
      sha256: 'a'.repeat(64),
      size: 1,
      content_type: null,
      encodings: null,
      removed: 0,
    })
    .execute();
  return id;
}

async function insertKey(store: Store, spaceId: string, ip: string | null = null) {
  const row = {
    id: newId('sk'),
    space_id: spaceId,
    token_hash: randomBytes(32).toString('hex'),
    created_ip: ip,
    created_at: T0,
    last_used_at: null,
    revoked_at: null,
  };
  await store.repos.spaceKeys.insert(row);
  return row;
}

function tagVersion(teamId: string, extra: Partial<TagVersionRow> = {}): TagVersionRow {
  return {
    id: newId('tver'),
    team_id: teamId,
    status: 'draft',
    base_version_id: null,
    graph: JSON.stringify({ tags: [], triggers: [], variables: [] }),
    graph_revision: 1,
    tag_count: 0,
    trigger_count: 0,
    variable_count: 0,
    created_by: null,
    created_at: T0,
    updated_at: T0,
    submitted_at: null,
    submitted_by: null,
    approved_at: null,
    approved_by: null,
    published_at: null,
    published_by: null,
    abandoned_at: null,
    ...extra,
  };
}

describeEachDb('store: spaces group', (kind) => {
  let ts: TestStore;
  let store: Store;
  let database: Database;
  let tenant: string;
  let otherTenant: string;

  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
    database = ts.database;
    tenant = await seedTenant(database);
    otherTenant = await seedTenant(database);
  });
  afterAll(async () => {
    await ts?.close();
  });

  // ---- spaces -----------------------------------------------------------------------------------

  it('spaces: insert, byId, and byRef by id or slug within the tenant only', async () => {
    const team = await seedTeam(database, tenant);
    const s = await createSpace(store, tenant, team.id);
    expect(await store.repos.spaces.byId(s.id)).toEqual(s);
    expect(await store.repos.spaces.byId('spc_missing')).toBeNull();
    expect((await store.repos.spaces.byRef(tenant, s.id)).map((r) => r.id)).toEqual([s.id]);
    expect((await store.repos.spaces.byRef(tenant, s.slug)).map((r) => r.id)).toEqual([s.id]);
    expect(await store.repos.spaces.byRef(otherTenant, s.slug)).toEqual([]);
    expect(await store.repos.spaces.byRef(otherTenant, s.id)).toEqual([]);
  });

  it('spaces: byRef leaves deleted spaces out unless asked', async () => {
    const team = await seedTeam(database, tenant);
    const s = await createSpace(store, tenant, team.id);
    await store.repos.spaces.softDelete(s.id, at(1));
    expect(await store.repos.spaces.byRef(tenant, s.slug)).toEqual([]);
    const [row] = await store.repos.spaces.byRef(tenant, s.slug, { includeDeleted: true });
    expect(row).toMatchObject({ id: s.id, status: 'deleting', deleted_at: at(1), updated_at: at(1) });
  });

  it('spaces: listForTeams pages newest first, only live spaces of those teams in the tenant', async () => {
    const team = await seedTeam(database, tenant);
    const other = await seedTeam(database, tenant);
    const foreign = await seedTeam(database, otherTenant);
    const mine: SpaceRow[] = [];
    for (let i = 0; i < 5; i++) mine.push(await createSpace(store, tenant, team.id));
    await createSpace(store, tenant, other.id);
    await createSpace(store, otherTenant, team.id);
    await createSpace(store, otherTenant, foreign.id);
    const gone = await createSpace(store, tenant, team.id);
    await store.repos.spaces.softDelete(gone.id, at(1));

    const ids = mine
      .map((s) => s.id)
      .sort()
      .reverse();
    const page1 = await store.repos.spaces.listForTeams(tenant, [team.id], null, 3);
    expect(page1.map((s) => s.id)).toEqual(ids.slice(0, 3));
    const page2 = await store.repos.spaces.listForTeams(tenant, [team.id], page1.at(-1)!.id, 3);
    expect(page2.map((s) => s.id)).toEqual(ids.slice(3));
    expect(await store.repos.spaces.listForTeams(tenant, [], null, 10)).toEqual([]);
    const both = await store.repos.spaces.listForTeams(tenant, [team.id, other.id], null, 10);
    expect(both).toHaveLength(6);
  });

  it('spaces: listForMember lists the spaces of the teams a person belongs to, narrowed to `within`', async () => {
    const user = await seedUser(database, tenant);
    const a = await seedTeam(database, tenant, [user]);
    const b = await seedTeam(database, tenant, [user]);
    const notMine = await seedTeam(database, tenant);
    const inA = [await createSpace(store, tenant, a.id), await createSpace(store, tenant, a.id)];
    const inB = await createSpace(store, tenant, b.id);
    await createSpace(store, tenant, notMine.id);
    await createSpace(store, otherTenant, a.id);
    const gone = await createSpace(store, tenant, a.id);
    await store.repos.spaces.softDelete(gone.id, at(1));

    const all = [...inA, inB]
      .map((s) => s.id)
      .sort()
      .reverse();
    const list = (within: string[] | null, after: string | null, n: number) =>
      store.repos.spaces.listForMember(tenant, user, within, after, n).then((r) => r.map((s) => s.id));
    expect(await list(null, null, 10)).toEqual(all);
    expect(await list(null, null, 2)).toEqual(all.slice(0, 2));
    expect(await list(null, all[1]!, 10)).toEqual(all.slice(2));
    expect(await list([a.id], null, 10)).toEqual(
      inA
        .map((s) => s.id)
        .sort()
        .reverse(),
    );
    // A credential narrowed to a team the person is not in sees nothing, and so does an empty narrowing.
    expect(await list([notMine.id], null, 10)).toEqual([]);
    expect(await list([], null, 10)).toEqual([]);
    expect(await store.repos.spaces.listForMember(tenant, 'usr_nobody', null, null, 10)).toEqual([]);
  });

  it('spaces: updateSettings is a compare-and-swap on the settings digest when one is given', async () => {
    const team = await seedTeam(database, tenant);
    const s = await createSpace(store, tenant, team.id, { settings_digest: 'd1' });
    expect(await store.repos.spaces.updateSettings(s.id, { title: 'A', settings_digest: 'd2' }, 'd0')).toBe(
      false,
    );
    expect(await store.repos.spaces.settingsDigestOf(s.id)).toBe('d1');
    expect(await store.repos.spaces.updateSettings(s.id, { title: 'A', settings_digest: 'd2' }, 'd1')).toBe(
      true,
    );
    // Of two writers from the same base, the second loses.
    expect(await store.repos.spaces.updateSettings(s.id, { title: 'B', settings_digest: 'd3' }, 'd1')).toBe(
      false,
    );
    expect(await store.repos.spaces.updateSettings(s.id, { noindex: 1, access: 'public' })).toBe(true);
    expect(await store.repos.spaces.byId(s.id)).toMatchObject({
      title: 'A',
      settings_digest: 'd2',
      noindex: 1,
      access: 'public',
    });
    expect(await store.repos.spaces.updateSettings('spc_missing', { title: 'x' })).toBe(false);
    expect(await store.repos.spaces.settingsDigestOf('spc_missing')).toBeNull();
  });

  it('spaces: rename sets slug and public name; soft delete, restore, and the purge window by cutoff', async () => {
    const team = await seedTeam(database, tenant);
    const s = await createSpace(store, tenant, team.id);
    const slug = `r-${uniq()}`;
    await store.repos.spaces.rename(s.id, slug, at(1));
    expect(await store.repos.spaces.byId(s.id)).toMatchObject({ slug, public_name: slug, updated_at: at(1) });

    await store.repos.spaces.softDelete(s.id, at(10));
    expect(await store.repos.spaces.deletedBefore(at(9))).not.toContain(s.id);
    expect(await store.repos.spaces.deletedBefore(at(10))).toContain(s.id);
    await store.repos.spaces.restore(s.id, at(11));
    expect(await store.repos.spaces.byId(s.id)).toMatchObject({ status: 'active', deleted_at: null });
    expect(await store.repos.spaces.deletedBefore(at(100))).not.toContain(s.id);

    await store.repos.spaces.softDelete(s.id, at(20));
    await store.repos.spaces.markPurged(s.id, at(30));
    expect(await store.repos.spaces.byId(s.id)).toMatchObject({ status: 'failed', deleted_at: at(20) });
    // A purged space is no longer due.
    expect(await store.repos.spaces.deletedBefore(at(100))).not.toContain(s.id);
  });

  it('spaces: anonymous deadlines, one winning claim, expiry and purge', async () => {
    const team = await seedTeam(database, tenant);
    const user = await seedUser(database, tenant);
    const s = await createSpace(store, tenant, null, { claim_expires_at: at(60) });
    await store.repos.spaces.extendExpiry(s.id, at(90));
    expect(await store.repos.spaces.byId(s.id)).toMatchObject({ expiry_extended_to: at(90) });
    await store.repos.spaces.setClaimDeadline(s.id, at(120), at(5));
    expect(await store.repos.spaces.byId(s.id)).toMatchObject({
      claim_expires_at: at(120),
      expiry_extended_to: null,
      updated_at: at(5),
    });

    expect((await store.repos.spaces.anonymousPastDeadline(at(119))).map((r) => r.id)).not.toContain(s.id);
    const due = await store.repos.spaces.anonymousPastDeadline(at(120));
    expect(due.find((r) => r.id === s.id)).toEqual({
      id: s.id,
      claim_expires_at: at(120),
      expiry_extended_to: null,
    });

    expect(await store.repos.spaces.expireAnonymous(s.id, at(121), at(200))).toBe(true);
    expect(await store.repos.spaces.expireAnonymous(s.id, at(122), at(201))).toBe(false);
    expect(await store.repos.spaces.byId(s.id)).toMatchObject({
      disabled_at: at(121),
      disabled_reason: 'anonymous_expired',
      purge_after: at(200),
    });
    expect((await store.repos.spaces.anonymousPastDeadline(at(300))).map((r) => r.id)).not.toContain(s.id);
    expect(await store.repos.spaces.anonymousDueForPurge(at(199))).not.toContain(s.id);
    expect(await store.repos.spaces.anonymousDueForPurge(at(200))).toContain(s.id);

    const claim = { teamId: team.id, userId: user, at: at(150), disabledAt: null, disabledReason: null };
    const results = await Promise.all([
      store.repos.spaces.claim(s.id, claim),
      store.repos.spaces.claim(s.id, claim),
    ]);
    expect(results.sort()).toEqual([false, true]);
    expect(await store.repos.spaces.byId(s.id)).toMatchObject({
      anonymous: 0,
      team_id: team.id,
      principal_type: 'team',
      principal_id: team.id,
      claimed_at: at(150),
      access: 'private',
      disabled_at: null,
      disabled_reason: null,
      purge_after: null,
      created_by: user,
    });
    expect(await store.repos.spaces.anonymousDueForPurge(at(1000))).not.toContain(s.id);

    const t = await createSpace(store, tenant, null, { claim_expires_at: at(1) });
    await store.repos.spaces.expireAnonymous(t.id, at(2), at(3));
    await store.repos.spaces.tombstone(t.id, at(4));
    expect(await store.repos.spaces.byId(t.id)).toMatchObject({ status: 'failed', deleted_at: at(4) });
    expect(await store.repos.spaces.anonymousDueForPurge(at(1000))).not.toContain(t.id);
  });

  it('spaces: deleteIfUnpublished removes every row of a space that never published, and keeps others', async () => {
    const team = await seedTeam(database, tenant);
    const s = await createSpace(store, tenant, team.id);
    await seedVersion(database, s.id, 'uploading');
    await store.repos.operations.insert(operationRow(s, 'rename', 'succeeded'));
    await store.repos.variables.upsert({
      space_id: s.id,
      name: 'A',
      secret: 0,
      value: '1',
      created_at: T0,
      updated_at: T0,
    });
    await insertKey(store, s.id, '192.0.2.1');
    expect(await store.transaction((repos) => repos.spaces.deleteIfUnpublished(s.id))).toBe(true);
    expect(await store.repos.spaces.byId(s.id)).toBeNull();
    expect(await store.repos.spaceHostnames.isTaken(s.slug)).toBe(false);
    expect(await store.repos.variables.listForSpace(s.id)).toEqual([]);
    expect(await store.repos.operations.listForSpace(s.id, null, 10)).toEqual([]);
    const left = await database.db.selectFrom('versions').select('id').where('space_id', '=', s.id).execute();
    expect(left).toEqual([]);
    const keys = await database.db
      .selectFrom('space_keys')
      .select('id')
      .where('space_id', '=', s.id)
      .execute();
    expect(keys).toEqual([]);
    expect(await store.transaction((repos) => repos.spaces.deleteIfUnpublished(s.id))).toBe(false);

    const ready = await createSpace(store, tenant, team.id);
    await seedVersion(database, ready.id, 'ready');
    expect(await store.transaction((repos) => repos.spaces.deleteIfUnpublished(ready.id))).toBe(false);
    expect(await store.repos.spaces.byId(ready.id)).not.toBeNull();

    const pointed = await createSpace(store, tenant, team.id);
    const v = await seedVersion(database, pointed.id, 'uploading');
    await database.db
      .insertInto('channels')
      .values({ space_id: pointed.id, name: 'live', version_id: v, updated_at: T0 })
      .execute();
    expect(await store.transaction((repos) => repos.spaces.deleteIfUnpublished(pointed.id))).toBe(false);
    expect(await store.repos.spaces.byId(pointed.id)).not.toBeNull();
  });

  // ---- hostnames --------------------------------------------------------------------------------

  it('hostnames: a name is unique forever; retire, reinstate and list', async () => {
    const team = await seedTeam(database, tenant);
    const a = await createSpace(store, tenant, team.id);
    const b = await createSpace(store, tenant, team.id);
    expect(await store.repos.spaceHostnames.isTaken(a.slug)).toBe(true);
    expect(await store.repos.spaceHostnames.isTaken(`free-${uniq()}`)).toBe(false);
    const err = await store.repos.spaceHostnames.addCurrent(a.slug, b.id, at(1)).catch((e) => e);
    expect(isUniqueViolation(err)).toBe(true);

    const next = `n-${uniq()}`;
    await store.transaction(async (repos) => {
      await repos.spaceHostnames.retireCurrent(a.id, at(2));
      await repos.spaceHostnames.addCurrent(next, a.id, at(2));
    });
    expect(await store.repos.spaceHostnames.byName(a.slug)).toEqual({
      name: a.slug,
      space_id: a.id,
      current: 0,
      created_at: T0,
      retired_at: at(2),
    });
    // Renaming back reinstates the old name rather than adding it again.
    await store.repos.spaceHostnames.retireCurrent(a.id, at(3));
    await store.repos.spaceHostnames.reinstate(a.slug, a.id);
    const names = await store.repos.spaceHostnames.listForSpace(a.id);
    expect(names.map((n) => [n.name, n.current, n.retired_at])).toEqual([
      [a.slug, 1, null],
      [next, 0, at(3)],
    ]);
    // Another space cannot take it over.
    await store.repos.spaceHostnames.reinstate(a.slug, b.id);
    expect((await store.repos.spaceHostnames.byName(a.slug))?.space_id).toBe(a.id);
    expect(await store.repos.spaceHostnames.byName(`none-${uniq()}`)).toBeNull();
  });

  // ---- operations -------------------------------------------------------------------------------

  it('operations: tenant-scoped byId, paging newest first, pending ones, delete completion', async () => {
    const team = await seedTeam(database, tenant);
    const s = await createSpace(store, tenant, team.id);
    const t = await createSpace(store, tenant, team.id);
    const ops = [
      operationRow(s, 'rename', 'succeeded'),
      operationRow(s, 'delete', 'queued'),
      operationRow(s, 'restore', 'running'),
      operationRow(t, 'delete', 'running'),
    ];
    for (const op of ops) await store.repos.operations.insert(op);
    expect(await store.repos.operations.byId(tenant, ops[0]!.id)).toEqual(ops[0]);
    expect(await store.repos.operations.byId(otherTenant, ops[0]!.id)).toBeNull();

    const sIds = ops
      .slice(0, 3)
      .map((o) => o.id)
      .sort()
      .reverse();
    const p1 = await store.repos.operations.listForSpace(s.id, null, 2);
    expect(p1.map((o) => o.id)).toEqual(sIds.slice(0, 2));
    const p2 = await store.repos.operations.listForSpace(s.id, p1.at(-1)!.id, 2);
    expect(p2.map((o) => o.id)).toEqual(sIds.slice(2));

    const pending = await store.repos.operations.pendingForSpaces([s.id, t.id]);
    expect(pending.map((o) => o.id)).toEqual([ops[1]!.id, ops[2]!.id, ops[3]!.id].sort().reverse());
    expect(await store.repos.operations.pendingForSpaces([])).toEqual([]);

    await store.repos.operations.cancelPendingDeletes(s.id, at(5));
    expect(await store.repos.operations.byId(tenant, ops[1]!.id)).toMatchObject({
      status: 'canceled',
      finished_at: at(5),
    });
    // Only deletes, only this space.
    expect((await store.repos.operations.byId(tenant, ops[2]!.id))?.status).toBe('running');
    expect((await store.repos.operations.byId(tenant, ops[3]!.id))?.status).toBe('running');

    await store.repos.operations.succeedPendingDeletes(t.id, at(6), '{"total":1}');
    expect(await store.repos.operations.byId(tenant, ops[3]!.id)).toMatchObject({
      status: 'succeeded',
      finished_at: at(6),
      progress: '{"total":1}',
    });
    // A canceled delete is not completed later.
    await store.repos.operations.succeedPendingDeletes(s.id, at(7), '{}');
    expect((await store.repos.operations.byId(tenant, ops[1]!.id))?.status).toBe('canceled');
  });

  // ---- space keys -------------------------------------------------------------------------------

  it('space keys: lookups by hash and by id (tenant-scoped), live count per address', async () => {
    const ip = `ip-${uniq()}`;
    const live = await createSpace(store, tenant, null);
    const disabled = await createSpace(store, tenant, null, { disabled_at: T0 });
    const deleted = await createSpace(store, tenant, null, { deleted_at: T0 });
    const k1 = await insertKey(store, live.id, ip);
    await insertKey(store, disabled.id, ip);
    await insertKey(store, deleted.id, ip);
    await insertKey(store, live.id, 'other');
    expect(await store.repos.spaceKeys.countLiveAnonymousForIp(ip)).toBe(1);

    expect(await store.repos.spaceKeys.byHash(k1.token_hash)).toEqual({
      key_id: k1.id,
      token_hash: k1.token_hash,
      revoked_at: null,
      last_used_at: null,
      continuation: null,
      space_id: live.id,
      tenant_id: tenant,
      anonymous: 1,
    });
    expect(await store.repos.spaceKeys.byHash('nope')).toBeNull();
    expect(await store.repos.spaceKeys.withSpaceByHash(k1.token_hash)).toMatchObject({
      ...live,
      key_id: k1.id,
      revoked_at: null,
    });
    expect(await store.repos.spaceKeys.withSpaceById(tenant, k1.id)).toMatchObject({
      id: live.id,
      key_revoked_at: null,
      continuation: null,
    });
    expect(await store.repos.spaceKeys.withSpaceById(otherTenant, k1.id)).toBeNull();

    await store.repos.spaceKeys.touchLastUsed(k1.id, at(1));
    expect((await store.repos.spaceKeys.byId(k1.id))?.last_used_at).toBe(at(1));
    // A claimed space no longer counts against the address.
    const team = await seedTeam(database, tenant);
    await store.repos.spaces.claim(live.id, {
      teamId: team.id,
      userId: await seedUser(database, tenant),
      at: at(2),
      disabledAt: null,
      disabledReason: null,
    });
    expect(await store.repos.spaceKeys.countLiveAnonymousForIp(ip)).toBe(0);
  });

  it('space keys: continuation is spent once; revocation per key and per space', async () => {
    const s = await createSpace(store, tenant, null);
    const user = await seedUser(database, tenant);
    const k1 = await insertKey(store, s.id);
    const k2 = await insertKey(store, s.id);
    const k3 = await insertKey(store, s.id);
    expect(await store.repos.spaceKeys.spendContinuation(k1.id)).toBe(false);
    await store.repos.spaceKeys.allowContinuation(k1.id, user);
    expect(await store.repos.spaceKeys.byId(k1.id)).toMatchObject({
      continuation: 'available',
      continuation_user_id: user,
    });
    const spent = await Promise.all([
      store.repos.spaceKeys.spendContinuation(k1.id),
      store.repos.spaceKeys.spendContinuation(k1.id),
    ]);
    expect(spent.sort()).toEqual([false, true]);
    await store.repos.spaceKeys.setContinuationKey(k1.id, 'key_x');
    expect(await store.repos.spaceKeys.byId(k1.id)).toMatchObject({
      continuation: 'used',
      continuation_key_id: 'key_x',
    });

    await store.repos.spaceKeys.revoke(k2.id, at(1));
    await store.repos.spaceKeys.revokeForSpace(s.id, at(2));
    expect((await store.repos.spaceKeys.byId(k2.id))?.revoked_at).toBe(at(1));
    expect((await store.repos.spaceKeys.byId(k3.id))?.revoked_at).toBe(at(2));
    expect(await store.repos.spaceKeys.byId('sk_missing')).toBeNull();
  });

  // ---- tags -------------------------------------------------------------------------------------

  it('tag versions: team-scoped reads, paging newest first, revision compare-and-set, transitions', async () => {
    const team = await seedTeam(database, tenant);
    const other = await seedTeam(database, tenant);
    const rows = [tagVersion(team.id), tagVersion(team.id), tagVersion(team.id)];
    for (const r of rows) await store.repos.tagVersions.insert(r);
    await store.repos.tagVersions.insert(tagVersion(other.id));
    const v = rows[0]!;
    expect(await store.repos.tagVersions.byId(team.id, v.id)).toMatchObject({ id: v.id, status: 'draft' });
    expect(await store.repos.tagVersions.byId(other.id, v.id)).toBeNull();

    const ids = rows
      .map((r) => r.id)
      .sort()
      .reverse();
    const p1 = await store.repos.tagVersions.listForTeam(team.id, null, 2);
    expect(p1.map((r) => r.id)).toEqual(ids.slice(0, 2));
    const p2 = await store.repos.tagVersions.listForTeam(team.id, p1.at(-1)!.id, 2);
    expect(p2.map((r) => r.id)).toEqual(ids.slice(2));

    const write = { graph: '{"tags":[1]}', tag_count: 1, trigger_count: 0, variable_count: 0 };
    const raced = await Promise.all([
      store.repos.tagVersions.replaceGraph(v.id, 1, write, at(1)),
      store.repos.tagVersions.replaceGraph(v.id, 1, write, at(1)),
    ]);
    expect(raced.sort()).toEqual([false, true]);
    const after = (await store.repos.tagVersions.byId(team.id, v.id))!;
    expect(Number(after.graph_revision)).toBe(2);
    expect(after).toMatchObject({ graph: '{"tags":[1]}', tag_count: 1, updated_at: at(1) });

    expect(await store.repos.tagVersions.transition(other.id, v.id, ['draft'], { status: 'submitted' })).toBe(
      false,
    );
    expect(
      await store.repos.tagVersions.transition(team.id, v.id, ['submitted'], { status: 'approved' }),
    ).toBe(false);
    expect(
      await store.repos.tagVersions.transition(team.id, v.id, ['draft'], {
        status: 'submitted',
        submitted_at: at(2),
        submitted_by: 'usr_x',
      }),
    ).toBe(true);
    expect(await store.repos.tagVersions.byId(team.id, v.id)).toMatchObject({
      status: 'submitted',
      submitted_at: at(2),
      submitted_by: 'usr_x',
    });
    // Only drafts take a new graph.
    expect(await store.repos.tagVersions.replaceGraph(v.id, 2, write, at(3))).toBe(false);
  });

  it('tag releases: one pointer per team and environment, moved in place; released graph of the same team', async () => {
    const team = await seedTeam(database, tenant);
    const other = await seedTeam(database, tenant);
    const v1 = tagVersion(team.id, { status: 'published', graph: '{"v":1}' });
    const v2 = tagVersion(team.id, { status: 'published', graph: '{"v":2}' });
    const foreign = tagVersion(other.id, { status: 'published', graph: '{"foreign":true}' });
    for (const r of [v1, v2, foreign]) await store.repos.tagVersions.insert(r);

    expect(await store.repos.tagReleases.releasedGraph(team.id, 'production')).toBeNull();
    await store.repos.tagReleases.point(team.id, 'production', v1.id, at(1), 'usr_a');
    await store.repos.tagReleases.point(team.id, 'preview', v2.id, at(1), null);
    expect(await store.repos.tagReleases.releasedGraph(team.id, 'production')).toBe('{"v":1}');
    await store.repos.tagReleases.point(team.id, 'production', v2.id, at(2), 'usr_b');
    expect(await store.repos.tagReleases.byEnvironment(team.id, 'production')).toEqual({
      team_id: team.id,
      environment: 'production',
      version_id: v2.id,
      updated_at: at(2),
      updated_by: 'usr_b',
    });
    expect(await store.repos.tagReleases.listForTeam(team.id)).toHaveLength(2);
    expect(await store.repos.tagReleases.listForTeam(other.id)).toEqual([]);
    expect(await store.repos.tagReleases.byEnvironment(other.id, 'production')).toBeNull();
    expect(await store.repos.tagReleases.releasedGraph(team.id, 'production')).toBe('{"v":2}');

    // A pointer at another team's version yields no graph.
    await store.repos.tagReleases.point(other.id, 'production', v1.id, at(3), null);
    expect(await store.repos.tagReleases.releasedGraph(other.id, 'production')).toBeNull();
  });

  // ---- variables --------------------------------------------------------------------------------

  it('variables: upsert keeps created_at, list by name, delete per name and per space', async () => {
    const team = await seedTeam(database, tenant);
    const s = await createSpace(store, tenant, team.id);
    const t = await createSpace(store, tenant, team.id);
    const v = (name: string, value: string, time: string, space = s.id) => ({
      space_id: space,
      name,
      secret: 0,
      value,
      created_at: time,
      updated_at: time,
    });
    await store.repos.variables.upsert(v('B', '1', at(1)));
    await store.repos.variables.upsert(v('A', '2', at(1)));
    await store.repos.variables.upsert(v('A', 'sealed', at(2)));
    await store.repos.variables.upsert(v('A', '9', at(1), t.id));
    await store.repos.variables.upsert({ ...v('B', 'x', at(3)), secret: 1 });
    const list = await store.repos.variables.listForSpace(s.id);
    expect(list.map((r) => [r.name, r.value, r.secret, r.created_at, r.updated_at])).toEqual([
      ['A', 'sealed', 0, at(1), at(2)],
      ['B', 'x', 1, at(1), at(3)],
    ]);
    expect(await store.repos.variables.byName(s.id, 'A')).toMatchObject({ value: 'sealed' });
    expect(await store.repos.variables.byName(s.id, 'Z')).toBeNull();
    expect(await store.repos.variables.delete(s.id, 'A')).toBe(true);
    expect(await store.repos.variables.delete(s.id, 'A')).toBe(false);
    await store.repos.variables.deleteForSpace(s.id);
    expect(await store.repos.variables.listForSpace(s.id)).toEqual([]);
    expect(await store.repos.variables.listForSpace(t.id)).toHaveLength(1);
  });

  it('variables: secrets are sealed by the domain before they reach the store', async () => {
    const team = await seedTeam(database, tenant);
    const s = await createSpace(store, tenant, team.id);
    const service = new VariableService(
      store,
      new ManualClock(Date.parse(T0)),
      new SecretBox('k'.repeat(32), '/nonexistent'),
    );
    await service.put(s.id, 'TOKEN', 'hunter2', true);
    const stored = await store.repos.variables.byName(s.id, 'TOKEN');
    expect(stored?.secret).toBe(1);
    expect(stored?.value).not.toContain('hunter2');
    expect(await service.reveal(s.id, 'TOKEN')).toBe('hunter2');
    expect((await service.list(s.id))[0]).toMatchObject({ name: 'TOKEN', value: null, secret: true });
  });

  // ---- transactions -----------------------------------------------------------------------------

  it('a failed store.transaction leaves nothing', async () => {
    const team = await seedTeam(database, tenant);
    const row = spaceRow(tenant, team.id);
    await expect(
      store.transaction(async (repos) => {
        await repos.spaceHostnames.addCurrent(row.slug, row.id, T0);
        await repos.spaces.insert(row);
        await repos.operations.insert(operationRow(row, 'rename', 'succeeded'));
        await repos.variables.upsert({
          space_id: row.id,
          name: 'A',
          secret: 0,
          value: '1',
          created_at: T0,
          updated_at: T0,
        });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.repos.spaces.byId(row.id)).toBeNull();
    expect(await store.repos.spaceHostnames.isTaken(row.slug)).toBe(false);
    expect(await store.repos.operations.listForSpace(row.id, null, 10)).toEqual([]);
    expect(await store.repos.variables.listForSpace(row.id)).toEqual([]);

    // A unique violation half-way (the slug is taken) undoes the hostname written before it.
    const taken = await createSpace(store, tenant, team.id);
    const clash = spaceRow(tenant, team.id, { slug: `c-${uniq()}` });
    const err = await store
      .transaction(async (repos) => {
        await repos.spaceHostnames.addCurrent(clash.slug, clash.id, T0);
        await repos.spaceHostnames.addCurrent(taken.slug, clash.id, T0);
      })
      .catch((e) => e);
    expect(isUniqueViolation(err)).toBe(true);
    expect(await store.repos.spaceHostnames.isTaken(clash.slug)).toBe(false);
  });
});
