import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { isUniqueViolation } from '../../src/store/db.ts';
import type { ApiKeyRow } from '../../src/store/repos/identity/api-keys.ts';
import type { OAuthAppRow } from '../../src/store/repos/identity/oauth-apps.ts';
import type { OAuthCodeRow } from '../../src/store/repos/identity/oauth-codes.ts';
import type { OAuthDeviceCodeRow } from '../../src/store/repos/identity/oauth-device-codes.ts';
import type { OAuthTokenRow } from '../../src/store/repos/identity/oauth-tokens.ts';
import type { SessionRow } from '../../src/store/repos/identity/sessions.ts';
import type { InvitationRow } from '../../src/store/repos/identity/team-invitations.ts';
import type { TeamRow } from '../../src/store/repos/identity/teams.ts';
import type { UserRow } from '../../src/store/repos/identity/users.ts';
import type { Store } from '../../src/store/repos/index.ts';
import { describeEachDb } from '../helpers/server.ts';
import { openTestStore, type TestStore } from '../helpers/store.ts';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
let seq = 0;
/** Ids in creation order (the repositories page by id). */
const id = (prefix: string) => newId(prefix, T0 + seq++);

async function rejectsUnique(p: Promise<unknown>): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected a unique violation').not.toBeNull();
  expect(isUniqueViolation(err)).toBe(true);
}

/** The contract of the identity group's repositories (store/repos/identity/*), on SQLite and PostgreSQL. */
describeEachDb('store: identity', (kind) => {
  let t: TestStore;
  let store: Store;
  let tenant: string;
  let otherTenant: string;

  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
    tenant = id('tnt');
    otherTenant = id('tnt');
    await store.repos.tenants.create({ id: tenant, name: 'Main', created_at: at(0) });
    await store.repos.tenants.create({ id: otherTenant, name: 'Other', created_at: at(0) });
  });
  afterEach(() => t.close());

  async function user(over: Partial<UserRow> = {}): Promise<UserRow> {
    const uid = id('usr');
    const row: UserRow = {
      id: uid,
      tenant_id: tenant,
      email: `${uid}@example.com`,
      name: 'Someone',
      password_hash: null,
      is_admin: 0,
      created_at: at(0),
      updated_at: at(0),
      ...over,
    };
    await store.repos.users.create(row);
    return row;
  }

  async function team(over: Partial<TeamRow> = {}, ownerId?: string): Promise<TeamRow> {
    const tid = id('team');
    const row: TeamRow = {
      id: tid,
      tenant_id: tenant,
      name: `Team ${tid}`,
      slug: tid.replace(/_/g, '-'),
      plan: 'free',
      partner_enabled_at: null,
      default_data_location: 'auto',
      default_space_access: 'team',
      logo: null,
      metadata: null,
      billing_customer_id: null,
      system_space_id: null,
      presentation: null,
      created_at: at(0),
      updated_at: at(0),
      ...over,
    };
    await store.repos.teams.create(row);
    if (ownerId) await member(row.id, ownerId, 'owner');
    return row;
  }

  function member(teamId: string, userId: string, role = 'member') {
    return store.repos.teamMembers.add({
      team_id: teamId,
      user_id: userId,
      role,
      created_at: at(0),
      updated_at: at(0),
    });
  }

  describe('meta and tenants', () => {
    it('reads, adds once, and refuses a second value for a key', async () => {
      expect(await store.repos.meta.get('k')).toBeNull();
      await store.repos.meta.insert('k', 'v');
      expect(await store.repos.meta.get('k')).toBe('v');
      await rejectsUnique(store.repos.meta.insert('k', 'w'));
      expect(await store.repos.meta.get('k')).toBe('v');
      expect(await store.repos.tenants.byId(tenant)).toEqual({ id: tenant, name: 'Main', created_at: at(0) });
      expect(await store.repos.tenants.byId('tnt_nope')).toBeNull();
    });
  });

  describe('users', () => {
    it('creates and reads by id and e-mail; e-mail addresses are unique', async () => {
      expect(await store.repos.users.any()).toBe(false);
      const u = await user({ email: 'a@example.com' });
      expect(await store.repos.users.any()).toBe(true);
      expect(await store.repos.users.byId(u.id)).toEqual(u);
      expect(await store.repos.users.byEmail('a@example.com')).toEqual(u);
      expect(await store.repos.users.byEmail('b@example.com')).toBeNull();
      await rejectsUnique(user({ email: 'a@example.com' }));
      await rejectsUnique(user({ email: 'a@example.com', tenant_id: otherTenant }));
    });

    it('finds the oldest administrator and sets a password hash', async () => {
      expect(await store.repos.users.oldestAdmin()).toBeNull();
      await user({ created_at: at(1) });
      const second = await user({ is_admin: 1, created_at: at(3) });
      const first = await user({ is_admin: 1, created_at: at(2) });
      expect((await store.repos.users.oldestAdmin())!.id).toBe(first.id);
      await store.repos.users.setPasswordHash(second.id, 'hash', at(9));
      expect(await store.repos.users.byId(second.id)).toMatchObject({
        password_hash: 'hash',
        updated_at: at(9),
      });
    });
  });

  describe('sessions', () => {
    function session(userId: string, over: Partial<SessionRow> = {}): SessionRow {
      return {
        id: id('ses'),
        user_id: userId,
        token_hash: id('hash'),
        created_at: at(0),
        expires_at: at(1000),
        last_used_at: null,
        revoked_at: null,
        user_agent: null,
        ...over,
      };
    }

    it('finds a session by token hash with its tenant; token hashes are unique', async () => {
      const u = await user();
      const s = session(u.id);
      await store.repos.sessions.create(s);
      expect(await store.repos.sessions.byTokenHash(s.token_hash)).toEqual({ ...s, tenant_id: tenant });
      expect(await store.repos.sessions.byTokenHash('unknown')).toBeNull();
      await rejectsUnique(store.repos.sessions.create(session(u.id, { token_hash: s.token_hash })));
    });

    it('revokes one session, or every live session of a person, and touches', async () => {
      const u = await user();
      const v = await user();
      const [a, b, old, others] = [
        session(u.id),
        session(u.id),
        session(u.id, { revoked_at: at(1) }),
        session(v.id),
      ];
      for (const s of [a, b, old, others]) await store.repos.sessions.create(s);
      await store.repos.sessions.revoke(a.id, at(5));
      expect((await store.repos.sessions.byTokenHash(a.token_hash))!.revoked_at).toBe(at(5));
      await store.repos.sessions.revokeAllForUser(u.id, at(7));
      expect((await store.repos.sessions.byTokenHash(a.token_hash))!.revoked_at).toBe(at(5));
      expect((await store.repos.sessions.byTokenHash(b.token_hash))!.revoked_at).toBe(at(7));
      expect((await store.repos.sessions.byTokenHash(old.token_hash))!.revoked_at).toBe(at(1));
      expect((await store.repos.sessions.byTokenHash(others.token_hash))!.revoked_at).toBeNull();
      await store.repos.sessions.touch(others.id, at(8));
      expect((await store.repos.sessions.byTokenHash(others.token_hash))!.last_used_at).toBe(at(8));
    });
  });

  describe('API keys', () => {
    function key(u: UserRow, teamId: string, over: Partial<ApiKeyRow> = {}): ApiKeyRow {
      return {
        id: id('key'),
        user_id: u.id,
        team_id: teamId,
        tenant_id: u.tenant_id,
        name: 'k',
        preset: 'publisher',
        scopes: '[]',
        token_hash: id('hash'),
        hint: 'abcd',
        space_id: null,
        created_at: at(0),
        expires_at: null,
        last_used_at: null,
        revoked_at: null,
        ...over,
      };
    }

    it('creates (inside a transaction too) and finds by token hash; token hashes are unique', async () => {
      const u = await user();
      const tm = await team({}, u.id);
      const k = key(u, tm.id);
      expect(await store.transaction((repos) => repos.apiKeys.create(k))).toEqual(k);
      expect(await store.repos.apiKeys.byTokenHash(k.token_hash)).toEqual(k);
      expect(await store.repos.apiKeys.byTokenHash('unknown')).toBeNull();
      await rejectsUnique(store.repos.apiKeys.create(key(u, tm.id, { token_hash: k.token_hash })));
    });

    it('reads a key only for its person in its tenant', async () => {
      const u = await user();
      const v = await user();
      const tm = await team({}, u.id);
      const k = await store.repos.apiKeys.create(key(u, tm.id));
      expect(await store.repos.apiKeys.byIdForUser(k.id, u.id, tenant)).toEqual(k);
      expect(await store.repos.apiKeys.byIdForUser(k.id, v.id, tenant)).toBeNull();
      expect(await store.repos.apiKeys.byIdForUser(k.id, u.id, otherTenant)).toBeNull();
    });

    it('lists a person’s keys newest first, by page, within teams when given', async () => {
      const u = await user();
      const v = await user();
      const t1 = await team({}, u.id);
      const t2 = await team({}, u.id);
      const keys = [];
      for (let i = 0; i < 5; i++) keys.push(await store.repos.apiKeys.create(key(u, i % 2 ? t2.id : t1.id)));
      await store.repos.apiKeys.create(key(v, t1.id));
      const ids = keys.map((k) => k.id).reverse();
      const all = { userId: u.id, tenantId: tenant, teamIds: null, after: null, limit: 10 };
      expect((await store.repos.apiKeys.listForUser(all)).map((k) => k.id)).toEqual(ids);
      const page1 = await store.repos.apiKeys.listForUser({ ...all, limit: 2 });
      const page2 = await store.repos.apiKeys.listForUser({ ...all, limit: 2, after: page1[1]!.id });
      expect([...page1, ...page2].map((k) => k.id)).toEqual(ids.slice(0, 4));
      const inT2 = await store.repos.apiKeys.listForUser({ ...all, teamIds: [t2.id] });
      expect(inT2.map((k) => k.team_id)).toEqual([t2.id, t2.id]);
      expect(await store.repos.apiKeys.listForUser({ ...all, teamIds: [] })).toEqual([]);
      expect(await store.repos.apiKeys.listForUser({ ...all, tenantId: otherTenant })).toEqual([]);
    });

    it('revokes and touches', async () => {
      const u = await user();
      const tm = await team({}, u.id);
      const k = await store.repos.apiKeys.create(key(u, tm.id));
      await store.repos.apiKeys.revoke(k.id, at(3));
      await store.repos.apiKeys.touch(k.id, at(4));
      expect(await store.repos.apiKeys.byTokenHash(k.token_hash)).toMatchObject({
        revoked_at: at(3),
        last_used_at: at(4),
      });
    });
  });

  describe('teams and members', () => {
    it('keeps slugs unique per tenant and lists the slugs a base would collide with', async () => {
      await team({ slug: 'acme' });
      await team({ slug: 'acme-2' });
      await team({ slug: 'acmeish' });
      await team({ slug: 'acme-3', tenant_id: otherTenant });
      await rejectsUnique(team({ slug: 'acme' }));
      await team({ slug: 'acme', tenant_id: otherTenant });
      expect((await store.repos.teams.slugsLike(tenant, 'acme')).sort()).toEqual(['acme', 'acme-2']);
    });

    it('reads teams through membership and tenant only', async () => {
      const u = await user();
      const v = await user();
      const mine = [await team({}, u.id), await team({}, u.id), await team({}, u.id)];
      const theirs = await team({}, v.id);
      const ids = mine.map((x) => x.id).reverse();
      const q = { userId: u.id, tenantId: tenant, teamIds: null, after: null, limit: 10 };
      const listed = await store.repos.teams.listForMember(q);
      expect(listed.map((x) => x.id)).toEqual(ids);
      expect(listed[0]).toEqual({ ...mine[2], member_role: 'owner' });
      const p1 = await store.repos.teams.listForMember({ ...q, limit: 1 });
      expect((await store.repos.teams.listForMember({ ...q, after: p1[0]!.id })).map((x) => x.id)).toEqual(
        ids.slice(1),
      );
      expect(
        (await store.repos.teams.listForMember({ ...q, teamIds: [mine[0]!.id] })).map((x) => x.id),
      ).toEqual([mine[0]!.id]);
      expect(await store.repos.teams.listForMember({ ...q, tenantId: otherTenant })).toEqual([]);

      expect((await store.repos.teams.byRefForMember(u.id, tenant, mine[0]!.id))!.id).toBe(mine[0]!.id);
      expect((await store.repos.teams.byRefForMember(u.id, tenant, mine[0]!.slug))!.id).toBe(mine[0]!.id);
      expect(await store.repos.teams.byRefForMember(u.id, tenant, theirs.id)).toBeNull();
      expect(await store.repos.teams.byRefForMember(u.id, tenant, theirs.slug)).toBeNull();
      expect(await store.repos.teams.byRefForMember(u.id, otherTenant, mine[0]!.id)).toBeNull();

      expect(
        (await store.repos.teams.firstForMember(u.id, tenant, [theirs.id, mine[1]!.id, mine[2]!.id]))!.id,
      ).toBe(mine[1]!.id);
      expect(await store.repos.teams.firstForMember(u.id, tenant, [theirs.id])).toBeNull();
      expect(await store.repos.teams.firstForMember(u.id, tenant, [])).toBeNull();
      expect((await store.repos.teams.oldestOwnedBy(u.id))!.id).toBe(mine[0]!.id);
      expect(await store.repos.teams.byId(theirs.id)).toEqual(theirs);
    });

    it('names teams by slug, and updates a team (a taken slug is a unique violation)', async () => {
      const a = await team({ slug: 'zeta', name: 'Z' });
      const b = await team({ slug: 'alpha', name: 'A' });
      expect(await store.repos.teams.namesByIds([a.id, b.id])).toEqual([
        { id: b.id, slug: 'alpha', name: 'A' },
        { id: a.id, slug: 'zeta', name: 'Z' },
      ]);
      expect(await store.repos.teams.namesByIds([])).toEqual([]);
      await store.repos.teams.update(a.id, { name: 'Zed', updated_at: at(5) });
      expect(await store.repos.teams.byId(a.id)).toMatchObject({
        name: 'Zed',
        slug: 'zeta',
        updated_at: at(5),
      });
      await rejectsUnique(store.repos.teams.update(a.id, { slug: 'alpha' }));
    });

    it('adds a member once, changes roles, counts owners, lists and removes members', async () => {
      const [u, v, w] = [await user(), await user({ email: 'v@example.com' }), await user()];
      const tm = await team({}, u.id);
      await member(tm.id, v.id);
      await member(tm.id, w.id, 'admin');
      await rejectsUnique(member(tm.id, v.id));
      expect(await store.repos.teamMembers.get(tm.id, v.id)).toMatchObject({ role: 'member' });
      expect(await store.repos.teamMembers.byEmail(tm.id, 'v@example.com')).toMatchObject({ user_id: v.id });
      expect(await store.repos.teamMembers.byEmail(tm.id, 'x@example.com')).toBeNull();
      expect(await store.repos.teamMembers.countOwners(tm.id)).toBe(1);
      await store.repos.teamMembers.setRole(tm.id, v.id, 'owner', at(3));
      expect(await store.repos.teamMembers.get(tm.id, v.id)).toMatchObject({
        role: 'owner',
        updated_at: at(3),
      });
      expect(await store.repos.teamMembers.countOwners(tm.id)).toBe(2);

      const ids = [u.id, v.id, w.id].sort().reverse();
      const listed = await store.repos.teamMembers.listWithUsers(tm.id, null, 10);
      expect(listed.map((m) => m.id)).toEqual(ids);
      expect(listed.find((m) => m.id === v.id)).toMatchObject({
        user_id: v.id,
        email: 'v@example.com',
        name: 'Someone',
      });
      expect((await store.repos.teamMembers.listWithUsers(tm.id, ids[0]!, 1)).map((m) => m.id)).toEqual([
        ids[1],
      ]);

      const t2 = await team({}, v.id);
      expect((await store.repos.teamMembers.teamIdsOf(v.id)).sort()).toEqual([tm.id, t2.id].sort());
      expect(await store.repos.teamMembers.teamIdsOf(v.id, [t2.id])).toEqual([t2.id]);
      expect(await store.repos.teamMembers.teamIdsOf(v.id, [])).toEqual([]);
      await store.repos.teamMembers.remove(tm.id, v.id);
      expect(await store.repos.teamMembers.get(tm.id, v.id)).toBeNull();
      expect(await store.repos.teamMembers.countOwners(tm.id)).toBe(1);
    });
  });

  describe('team invitations', () => {
    function invitation(teamId: string, by: string, over: Partial<InvitationRow> = {}): InvitationRow {
      return {
        id: id('inv'),
        team_id: teamId,
        email: 'guest@example.com',
        role: 'member',
        invited_by: by,
        status: 'pending',
        created_at: at(0),
        expires_at: at(1000),
        responded_at: null,
        ...over,
      };
    }

    it('finds invitations by id (with the tenant), within a team, and the pending one for an address', async () => {
      const u = await user();
      const tm = await team({}, u.id);
      const other = await team({}, u.id);
      const inv = invitation(tm.id, u.id);
      await store.repos.teamInvitations.create(inv);
      expect(await store.repos.teamInvitations.byId(inv.id)).toEqual({ ...inv, tenant_id: tenant });
      expect(await store.repos.teamInvitations.byIdInTeam(inv.id, tm.id)).toEqual(inv);
      expect(await store.repos.teamInvitations.byIdInTeam(inv.id, other.id)).toBeNull();
      expect(await store.repos.teamInvitations.pendingFor(tm.id, 'guest@example.com', at(999))).toEqual(inv);
      expect(await store.repos.teamInvitations.pendingFor(tm.id, 'guest@example.com', at(1000))).toBeNull();
      expect(await store.repos.teamInvitations.pendingFor(other.id, 'guest@example.com', at(0))).toBeNull();
      await store.repos.teamInvitations.setStatus(inv.id, 'canceled', at(5));
      expect(await store.repos.teamInvitations.byIdInTeam(inv.id, tm.id)).toMatchObject({
        status: 'canceled',
        responded_at: at(5),
      });
      expect(await store.repos.teamInvitations.pendingFor(tm.id, 'guest@example.com', at(0))).toBeNull();
    });

    it('lists a team’s invitations newest first, and an address’s pending ones in a tenant', async () => {
      const u = await user();
      const tm = await team({ name: 'Acme', slug: 'acme' }, u.id);
      const far = await team({ tenant_id: otherTenant });
      const invs = [];
      for (let i = 0; i < 3; i++) {
        const inv = invitation(tm.id, u.id, { email: `g${i}@example.com` });
        await store.repos.teamInvitations.create(inv);
        invs.push(inv);
      }
      const ids = invs.map((i) => i.id).reverse();
      expect((await store.repos.teamInvitations.listForTeam(tm.id, null, 10)).map((i) => i.id)).toEqual(ids);
      expect((await store.repos.teamInvitations.listForTeam(tm.id, ids[0]!, 1)).map((i) => i.id)).toEqual([
        ids[1],
      ]);

      const mineOld = invitation(tm.id, u.id, { email: 'me@example.com' });
      const mineNew = invitation(tm.id, u.id, { email: 'me@example.com' });
      const expired = invitation(tm.id, u.id, { email: 'me@example.com', expires_at: at(10) });
      const declined = invitation(tm.id, u.id, { email: 'me@example.com', status: 'declined' });
      const elsewhere = invitation(far.id, u.id, { email: 'me@example.com' });
      for (const i of [mineOld, mineNew, expired, declined, elsewhere])
        await store.repos.teamInvitations.create(i);
      const pending = await store.repos.teamInvitations.pendingForEmail('me@example.com', tenant, at(10));
      expect(pending.map((i) => i.id)).toEqual([mineNew.id, mineOld.id]);
      expect(pending[0]).toEqual({ ...mineNew, team_name: 'Acme', team_slug: 'acme' });
    });
  });

  describe('OAuth', () => {
    async function app(teamId: string, over: Partial<OAuthAppRow> = {}): Promise<OAuthAppRow> {
      const row: OAuthAppRow = {
        id: id('oap'),
        tenant_id: tenant,
        team_id: teamId,
        name: 'App',
        client_type: 'confidential',
        redirect_uris: '[]',
        scopes: '[]',
        secret_hash: 'h',
        secret_hint: 'abcd',
        created_by: null,
        created_at: at(0),
        updated_at: at(0),
        ...over,
      };
      await store.repos.oauthApps.create(row);
      return row;
    }

    it('apps: read by id, within a team, listed newest first; updated and deleted', async () => {
      const tm = await team();
      const other = await team();
      const apps = [await app(tm.id), await app(tm.id), await app(tm.id)];
      await app(other.id);
      expect(await store.repos.oauthApps.byId(apps[0]!.id)).toEqual(apps[0]);
      expect(await store.repos.oauthApps.byIdInTeam(apps[0]!.id, tm.id)).toEqual(apps[0]);
      expect(await store.repos.oauthApps.byIdInTeam(apps[0]!.id, other.id)).toBeNull();
      const ids = apps.map((a) => a.id).reverse();
      expect((await store.repos.oauthApps.listForTeam(tm.id, null, 10)).map((a) => a.id)).toEqual(ids);
      expect((await store.repos.oauthApps.listForTeam(tm.id, ids[0]!, 1)).map((a) => a.id)).toEqual([ids[1]]);
      await store.repos.oauthApps.update(apps[0]!.id, {
        name: 'Renamed',
        secret_hash: null,
        updated_at: at(4),
      });
      expect(await store.repos.oauthApps.byId(apps[0]!.id)).toMatchObject({
        name: 'Renamed',
        secret_hash: null,
      });
      await store.repos.oauthApps.delete(apps[0]!.id);
      expect(await store.repos.oauthApps.byId(apps[0]!.id)).toBeNull();
    });

    it('codes: by hash (unique), used once, deleted per client and past a cutoff', async () => {
      const u = await user();
      const code = (over: Partial<OAuthCodeRow> = {}): OAuthCodeRow => ({
        id: id('ocd'),
        code_hash: id('hash'),
        client_id: 'spaces-cli',
        tenant_id: tenant,
        user_id: u.id,
        redirect_uri: 'http://127.0.0.1/callback',
        scopes: '[]',
        code_challenge: 'c',
        grant_id: id('ogr'),
        created_at: at(0),
        expires_at: at(60),
        used_at: null,
        ...over,
      });
      const a = code();
      const b = code({ client_id: 'oap_x' });
      const old = code({ expires_at: at(-10) });
      for (const c of [a, b, old]) await store.repos.oauthCodes.create(c);
      await rejectsUnique(store.repos.oauthCodes.create(code({ code_hash: a.code_hash })));
      expect(await store.repos.oauthCodes.byHash(a.code_hash)).toEqual(a);
      expect(await store.repos.oauthCodes.markUsed(a.id, at(1))).toBe(true);
      expect(await store.repos.oauthCodes.markUsed(a.id, at(2))).toBe(false);
      expect((await store.repos.oauthCodes.byHash(a.code_hash))!.used_at).toBe(at(1));
      await store.repos.oauthCodes.deleteForClient('oap_x');
      expect(await store.repos.oauthCodes.byHash(b.code_hash)).toBeNull();
      await store.repos.oauthCodes.deleteExpiredBefore(at(0));
      expect(await store.repos.oauthCodes.byHash(old.code_hash)).toBeNull();
      expect(await store.repos.oauthCodes.byHash(a.code_hash)).not.toBeNull();
    });

    it('tokens: by hash and kind, revoked by grant, client or id, rotated once, pruned', async () => {
      const u = await user();
      const token = (over: Partial<OAuthTokenRow> = {}): OAuthTokenRow => ({
        id: id('otk'),
        kind: 'access',
        token_hash: id('hash'),
        client_id: 'spaces-cli',
        tenant_id: tenant,
        user_id: u.id,
        team_ids: null,
        scopes: '[]',
        grant_id: 'ogr_1',
        created_at: at(0),
        expires_at: at(3600),
        rotated_at: null,
        revoked_at: null,
        last_used_at: null,
        ...over,
      });
      const access = token();
      const refresh = token({ kind: 'refresh' });
      const otherGrant = token({ grant_id: 'ogr_2' });
      const otherClient = token({ grant_id: 'ogr_3', client_id: 'oap_x' });
      const old = token({ grant_id: 'ogr_4', expires_at: at(-1) });
      await store.repos.oauthTokens.createMany([access, refresh, otherGrant, otherClient, old]);
      await store.repos.oauthTokens.createMany([]);
      await rejectsUnique(store.repos.oauthTokens.createMany([token({ token_hash: access.token_hash })]));

      expect(await store.repos.oauthTokens.byHash(access.token_hash)).toEqual(access);
      expect(await store.repos.oauthTokens.byHash(access.token_hash, 'refresh')).toBeNull();
      expect(await store.repos.oauthTokens.byHash(refresh.token_hash, 'refresh')).toEqual(refresh);

      expect(await store.repos.oauthTokens.markRotated(refresh.id, at(1))).toBe(true);
      expect(await store.repos.oauthTokens.markRotated(refresh.id, at(2))).toBe(false);
      await store.repos.oauthTokens.touch(access.id, at(3));
      expect((await store.repos.oauthTokens.byHash(access.token_hash))!.last_used_at).toBe(at(3));

      await store.repos.oauthTokens.revokeGrant('ogr_1', at(5));
      expect((await store.repos.oauthTokens.byHash(access.token_hash))!.revoked_at).toBe(at(5));
      expect((await store.repos.oauthTokens.byHash(refresh.token_hash))!.revoked_at).toBe(at(5));
      expect((await store.repos.oauthTokens.byHash(otherGrant.token_hash))!.revoked_at).toBeNull();
      // Revocation keeps the first time.
      await store.repos.oauthTokens.revoke(access.id, at(6));
      expect((await store.repos.oauthTokens.byHash(access.token_hash))!.revoked_at).toBe(at(5));
      await store.repos.oauthTokens.revoke(otherGrant.id, at(6));
      expect((await store.repos.oauthTokens.byHash(otherGrant.token_hash))!.revoked_at).toBe(at(6));
      // A revoked refresh token can't be rotated.
      const fresh = token({ kind: 'refresh', grant_id: 'ogr_5', revoked_at: at(0) });
      await store.repos.oauthTokens.createMany([fresh]);
      expect(await store.repos.oauthTokens.markRotated(fresh.id, at(7))).toBe(false);

      await store.repos.oauthTokens.revokeForClient('oap_x', at(8));
      expect((await store.repos.oauthTokens.byHash(otherClient.token_hash))!.revoked_at).toBe(at(8));
      await store.repos.oauthTokens.deleteExpiredBefore(at(0));
      expect(await store.repos.oauthTokens.byHash(old.token_hash)).toBeNull();
      expect(await store.repos.oauthTokens.byHash(access.token_hash)).not.toBeNull();
    });

    it('device codes: unique user codes, polls, decided while pending and unexpired, consumed once', async () => {
      const u = await user();
      const device = (over: Partial<OAuthDeviceCodeRow> = {}): OAuthDeviceCodeRow => ({
        id: id('odc'),
        device_code_hash: id('hash'),
        user_code: 'BCDFGHJK',
        client_id: 'spaces-cli',
        scopes: '[]',
        status: 'pending',
        user_id: null,
        tenant_id: null,
        interval_seconds: 5,
        last_polled_at: null,
        created_at: at(0),
        expires_at: at(600),
        ...over,
      });
      const d = device();
      await store.repos.oauthDeviceCodes.create(d);
      await rejectsUnique(store.repos.oauthDeviceCodes.create(device()));
      expect(await store.repos.oauthDeviceCodes.byHash(d.device_code_hash)).toEqual(d);
      expect(await store.repos.oauthDeviceCodes.byUserCode('BCDFGHJK')).toEqual(d);
      expect(await store.repos.oauthDeviceCodes.byUserCode('ZZZZZZZZ')).toBeNull();

      await store.repos.oauthDeviceCodes.recordPoll(d.id, at(1));
      expect(await store.repos.oauthDeviceCodes.byHash(d.device_code_hash)).toMatchObject({
        last_polled_at: at(1),
        interval_seconds: 5,
      });
      await store.repos.oauthDeviceCodes.recordPoll(d.id, at(2), 10);
      expect(await store.repos.oauthDeviceCodes.byHash(d.device_code_hash)).toMatchObject({
        last_polled_at: at(2),
        interval_seconds: 10,
      });

      expect(await store.repos.oauthDeviceCodes.consume(d.id)).toBe(false);
      const who = { userId: u.id, tenantId: tenant };
      expect(
        await store.repos.oauthDeviceCodes.decide('BCDFGHJK', { status: 'approved', ...who }, at(600)),
      ).toBe(false);
      expect(
        await store.repos.oauthDeviceCodes.decide('BCDFGHJK', { status: 'approved', ...who }, at(3)),
      ).toBe(true);
      expect(await store.repos.oauthDeviceCodes.decide('BCDFGHJK', { status: 'denied', ...who }, at(4))).toBe(
        false,
      );
      expect(await store.repos.oauthDeviceCodes.byHash(d.device_code_hash)).toMatchObject({
        status: 'approved',
        user_id: u.id,
        tenant_id: tenant,
      });
      expect(await store.repos.oauthDeviceCodes.consume(d.id)).toBe(true);
      expect(await store.repos.oauthDeviceCodes.consume(d.id)).toBe(false);
    });

    it('device codes: deleted per client, past a cutoff, and when expired', async () => {
      const device = (code: string, over: Partial<OAuthDeviceCodeRow> = {}): OAuthDeviceCodeRow => ({
        id: id('odc'),
        device_code_hash: id('hash'),
        user_code: code,
        client_id: 'spaces-cli',
        scopes: '[]',
        status: 'pending',
        user_id: null,
        tenant_id: null,
        interval_seconds: 5,
        last_polled_at: null,
        created_at: at(0),
        expires_at: at(600),
        ...over,
      });
      const app = device('AAAAAAAA', { client_id: 'oap_x' });
      const old = device('BBBBBBBB', { expires_at: at(-1) });
      const due = device('CCCCCCCC', { expires_at: at(100) });
      const live = device('DDDDDDDD');
      for (const d of [app, old, due, live]) await store.repos.oauthDeviceCodes.create(d);
      await store.repos.oauthDeviceCodes.deleteForClient('oap_x');
      expect(await store.repos.oauthDeviceCodes.byUserCode('AAAAAAAA')).toBeNull();
      await store.repos.oauthDeviceCodes.deleteExpiredBefore(at(0));
      expect(await store.repos.oauthDeviceCodes.byUserCode('BBBBBBBB')).toBeNull();
      expect(await store.repos.oauthDeviceCodes.byUserCode('CCCCCCCC')).not.toBeNull();
      await store.repos.oauthDeviceCodes.deleteExpiredAt(at(100));
      expect(await store.repos.oauthDeviceCodes.byUserCode('CCCCCCCC')).toBeNull();
      expect(await store.repos.oauthDeviceCodes.byUserCode('DDDDDDDD')).not.toBeNull();
    });
  });

  it('a failed store.transaction leaves nothing', async () => {
    const uid = id('usr');
    const tid = id('team');
    await expect(
      store.transaction(async (repos) => {
        await repos.users.create({
          id: uid,
          tenant_id: tenant,
          email: 'tx@example.com',
          name: 'Tx',
          password_hash: null,
          is_admin: 0,
          created_at: at(0),
          updated_at: at(0),
        });
        await repos.teams.create({
          id: tid,
          tenant_id: tenant,
          name: 'Tx',
          slug: 'tx',
          plan: 'free',
          partner_enabled_at: null,
          default_data_location: 'auto',
          default_space_access: 'team',
          logo: null,
          metadata: null,
          billing_customer_id: null,
          system_space_id: null,
          presentation: null,
          created_at: at(0),
          updated_at: at(0),
        });
        await repos.teamMembers.add({
          team_id: tid,
          user_id: uid,
          role: 'owner',
          created_at: at(0),
          updated_at: at(0),
        });
        await repos.meta.insert('tx', '1');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await store.repos.users.byId(uid)).toBeNull();
    expect(await store.repos.teams.byId(tid)).toBeNull();
    expect(await store.repos.teamMembers.get(tid, uid)).toBeNull();
    expect(await store.repos.meta.get('tx')).toBeNull();

    // A unique violation inside the transaction rolls back what came before it.
    await user({ email: 'taken@example.com' });
    const before = id('usr');
    await expect(
      store.transaction(async (repos) => {
        await repos.meta.insert('tx2', '1');
        await repos.users.create({
          id: before,
          tenant_id: tenant,
          email: 'taken@example.com',
          name: 'Dup',
          password_hash: null,
          is_admin: 0,
          created_at: at(0),
          updated_at: at(0),
        });
      }),
    ).rejects.toSatisfy(isUniqueViolation);
    expect(await store.repos.meta.get('tx2')).toBeNull();
  });
});
