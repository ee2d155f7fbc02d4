import { type SelectQueryBuilder, sql } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type SpaceRow = DB['spaces'];

/**
 * The orders of a space listing: `created` (the time-sortable id), `name` (the title, ASCII letters
 * ignoring case, the same on both databases) or `updated` (`updated_at`); ties broken by id.
 */
export type SpaceSortKey = 'created' | 'name' | 'updated';
export interface SpaceOrder {
  key: SpaceSortKey;
  desc: boolean;
}
/** Newest first: the listing's default. */
export const NEWEST_FIRST: SpaceOrder = { key: 'created', desc: true };
/**
 * Where a page resumes: the last row's id, and for `name`/`updated` its `title`/`updated_at` (a bare
 * id for `created`).
 */
export type SpaceAfter = string | { value: string; id: string };

/** The value a listing in this order resumes after, for a row. */
export function spaceSortValue(row: SpaceRow, key: SpaceSortKey): string {
  return key === 'name' ? row.title : key === 'updated' ? row.updated_at : row.id;
}

/** What an anonymous claim writes on the space row. */
export interface ClaimChange {
  teamId: string;
  userId: string;
  at: string;
  disabledAt: string | null;
  disabledReason: string | null;
}

/**
 * Spaces: the row of each space (team-owned or anonymous), its soft delete and tombstone. Every
 * lookup a principal makes is scoped by tenant (and by team where the domain asks for it).
 */
export class SpaceRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: SpaceRow): Promise<void> {
    await this.ctx.exec.insertInto('spaces').values(row).execute();
  }

  /** Sets the custom domain the space's `liveUrl` names (null: its managed hostname). */
  async setPrimaryDomain(id: string, hostname: string | null): Promise<void> {
    await this.ctx.exec
      .updateTable('spaces')
      .set({ primary_domain: hostname })
      .where('id', '=', id)
      .execute();
  }

  async byId(id: string): Promise<SpaceRow | null> {
    return (
      (await this.ctx.exec.selectFrom('spaces').selectAll().where('id', '=', id).executeTakeFirst()) ?? null
    );
  }

  /** Spaces of a tenant whose id or slug is `ref` (several when a slug equals another's id); deleted ones only when asked. */
  byRef(tenantId: string, ref: string, options: { includeDeleted?: boolean } = {}): Promise<SpaceRow[]> {
    let q = this.ctx.exec
      .selectFrom('spaces')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref)]));
    if (!options.includeDeleted) q = q.where('deleted_at', 'is', null);
    return q.execute();
  }

  /**
   * Live spaces of these teams in a tenant, `n` after `after`, in `order` (newest first unless told);
   * `search` keeps spaces whose title or slug contains it, ignoring case. Live spaces,
   * or with `deletedSince` the ones deleted since then (and not failed): those that can be restored.
   */
  listForTeams(
    tenantId: string,
    teamIds: readonly string[],
    after: SpaceAfter | null,
    n: number,
    search?: string,
    deletedSince?: string,
    order: SpaceOrder = NEWEST_FIRST,
  ): Promise<SpaceRow[]> {
    if (teamIds.length === 0) return Promise.resolve([]);
    let q = this.ctx.exec
      .selectFrom('spaces')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('team_id', 'in', teamIds);
    q = deletedSince
      ? q.where('deleted_at', '>', deletedSince).where('status', '!=', 'failed')
      : q.where('deleted_at', 'is', null);
    if (search) {
      // A substring, not a pattern: LIKE's own characters are escaped. lower() on both sides is the
      // same on SQLite (whose LIKE ignores ASCII case only) and PostgreSQL (whose LIKE minds case).
      const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where((eb) =>
        eb.or([
          sql<boolean>`lower(${eb.ref('title')}) like ${pattern} escape '\\'`,
          sql<boolean>`lower(${eb.ref('slug')}) like ${pattern} escape '\\'`,
        ]),
      );
    }
    return this.keyset(q, order, after).limit(n).execute();
  }

  /**
   * Orders a listing and resumes it after a row: `(key, id)` compared as a pair, both in the order's
   * direction, so every page continues exactly where the last one stopped, ties included. The name is
   * `lower(title)` on both sides, folding ASCII letters only and comparing bytes on both databases
   * (SQLite's lower() and BINARY collation; PostgreSQL's lower() in the "C" collation), so they sort
   * alike.
   */
  private keyset(
    q: SelectQueryBuilder<DB, 'spaces', SpaceRow>,
    order: SpaceOrder,
    after: SpaceAfter | null,
  ): SelectQueryBuilder<DB, 'spaces', SpaceRow> {
    const dir = order.desc ? 'desc' : 'asc';
    const cmp = order.desc ? '<' : '>';
    if (order.key === 'created') {
      const id = typeof after === 'string' ? after : after?.id;
      if (id) q = q.where('id', cmp, id);
      return q.orderBy('id', dir);
    }
    const pg = this.ctx.database.dialect === 'postgres';
    const keyOf = (v: ReturnType<typeof sql>) =>
      order.key === 'name' ? (pg ? sql`lower(${v} collate "C")` : sql`lower(${v})`) : v;
    const column = keyOf(sql.ref(order.key === 'name' ? 'title' : 'updated_at'));
    if (after) {
      const at = typeof after === 'string' ? { value: '', id: after } : after;
      const value = keyOf(pg ? sql`cast(${at.value} as text)` : sql`${at.value}`);
      q = q.where((eb) =>
        eb.or([
          sql<boolean>`${column} ${sql.raw(cmp)} ${value}`,
          eb.and([sql<boolean>`${column} = ${value}`, eb('id', cmp, at.id)]),
        ]),
      );
    }
    return q.orderBy(column, dir).orderBy('id', dir);
  }

  /**
   * Like `listForTeams` over the teams `userId` belongs to (only among `within` when given), in one
   * query: the listing's membership lookup was a round trip of its own.
   */
  listForMember(
    tenantId: string,
    userId: string,
    within: readonly string[] | null,
    after: SpaceAfter | null,
    n: number,
    order: SpaceOrder = NEWEST_FIRST,
  ): Promise<SpaceRow[]> {
    if (within && within.length === 0) return Promise.resolve([]);
    const q = this.ctx.exec
      .selectFrom('spaces')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('team_id', 'in', (eb) => {
        let m = eb.selectFrom('team_members').select('team_id').where('user_id', '=', userId);
        if (within) m = m.where('team_id', 'in', within as string[]);
        return m;
      })
      .where('deleted_at', 'is', null);
    return this.keyset(q, order, after).limit(n).execute();
  }

  /**
   * Writes settings fields. With `expectedDigest` it is a compare-and-swap on the stored settings
   * digest: false when the digest moved on (or the space is gone).
   */
  async updateSettings(
    id: string,
    set: Partial<
      Pick<SpaceRow, 'title' | 'config' | 'settings_digest' | 'noindex' | 'access' | 'updated_at'>
    >,
    expectedDigest?: string,
  ): Promise<boolean> {
    let q = this.ctx.exec.updateTable('spaces').set(set).where('id', '=', id);
    if (expectedDigest !== undefined) q = q.where('settings_digest', '=', expectedDigest);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async settingsDigestOf(id: string): Promise<string | null> {
    const row = await this.ctx.exec
      .selectFrom('spaces')
      .select('settings_digest')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.settings_digest ?? null;
  }

  /** Sets the slug and public name (the hostnames are the caller's, in the same transaction). */
  async rename(id: string, slug: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('spaces')
      .set({ slug, public_name: slug, updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  /** Starts a delete: the space stops serving and waits out the restore window. */
  async softDelete(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('spaces')
      .set({ status: 'deleting', deleted_at: at, updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  /** Undoes `softDelete`. */
  async restore(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('spaces')
      .set({ status: 'active', deleted_at: null, updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  /** Ids of spaces deleting since `cutoff` or earlier (their restore window is over). */
  async deletedBefore(cutoff: string): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('spaces')
      .select('id')
      .where('status', '=', 'deleting')
      .where('deleted_at', '<=', cutoff)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Marks a purged space: the row stays as a tombstone so its hostnames are never re-issued. */
  async markPurged(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('spaces')
      .set({ status: 'failed', updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  // Anonymous spaces

  /** A new claim deadline after a publish (clears any claim-page extension). */
  async setClaimDeadline(id: string, deadline: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('spaces')
      .set({ claim_expires_at: deadline, expiry_extended_to: null, updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  /** A claim-page visit's extension of the deadline. */
  async extendExpiry(id: string, to: string): Promise<void> {
    await this.ctx.exec.updateTable('spaces').set({ expiry_extended_to: to }).where('id', '=', id).execute();
  }

  /**
   * Moves an anonymous space into a team. Conditional on the space still being anonymous: of two
   * concurrent claims exactly one gets true.
   */
  async claim(id: string, c: ClaimChange): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('spaces')
      .set({
        anonymous: 0,
        team_id: c.teamId,
        principal_type: 'team',
        principal_id: c.teamId,
        claimed_at: c.at,
        access: 'private',
        disabled_at: c.disabledAt,
        disabled_reason: c.disabledReason,
        purge_after: null,
        created_by: c.userId,
        updated_at: c.at,
      })
      .where('id', '=', id)
      .where('anonymous', '=', 1)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Live anonymous spaces whose publish deadline is at or before `at` (extensions are the caller's to weigh). */
  anonymousPastDeadline(
    at: string,
  ): Promise<Array<Pick<SpaceRow, 'id' | 'claim_expires_at' | 'expiry_extended_to'>>> {
    return this.ctx.exec
      .selectFrom('spaces')
      .select(['id', 'claim_expires_at', 'expiry_extended_to'])
      .where('anonymous', '=', 1)
      .where('disabled_at', 'is', null)
      .where('claim_expires_at', '<=', at)
      .execute();
  }

  /** Disables a still-live anonymous space whose window passed; false if it was claimed or disabled meanwhile. */
  async expireAnonymous(id: string, at: string, purgeAfter: string): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('spaces')
      .set({ disabled_at: at, disabled_reason: 'anonymous_expired', purge_after: purgeAfter, updated_at: at })
      .where('id', '=', id)
      .where('anonymous', '=', 1)
      .where('disabled_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Ids of expired anonymous spaces whose recovery window ended at or before `at`, not purged yet. */
  async anonymousDueForPurge(at: string): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('spaces')
      .select('id')
      .where('anonymous', '=', 1)
      .where('disabled_reason', '=', 'anonymous_expired')
      .where('purge_after', '<=', at)
      .where('deleted_at', 'is', null)
      .execute();
    return rows.map((r) => r.id);
  }

  /** The tombstone of a purged anonymous space. */
  async tombstone(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('spaces')
      .set({ deleted_at: at, status: 'failed', updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Removes every row of a space that never published: made by a first publish that was then
   * refused, it must leave nothing behind (no space, no version, no hostname, no anonymous key
   * counting against the address's quota). Only while no channel points at any of its versions and
   * none is ready — so a space something did publish to meanwhile is kept. True when it went.
   * Blobs are shared by content and left to the blob sweep. Run it inside `Store.transaction`: it
   * reads then deletes across the space's tables.
   */
  async deleteIfUnpublished(spaceId: string): Promise<boolean> {
    const x = this.ctx.exec;
    const ready = await x
      .selectFrom('versions')
      .select('id')
      .where('space_id', '=', spaceId)
      .where('status', '=', 'ready')
      .executeTakeFirst();
    const channel = await x
      .selectFrom('channels')
      .select('name')
      .where('space_id', '=', spaceId)
      .executeTakeFirst();
    if (ready || channel) return false;
    const versions = x.selectFrom('versions').select('id').where('space_id', '=', spaceId);
    await x.deleteFrom('version_files').where('version_id', 'in', versions).execute();
    await x.deleteFrom('versions').where('space_id', '=', spaceId).execute();
    await x.deleteFrom('channel_history').where('space_id', '=', spaceId).execute();
    await x.deleteFrom('operations').where('space_id', '=', spaceId).execute();
    await x.deleteFrom('variables').where('space_id', '=', spaceId).execute();
    await x.deleteFrom('space_keys').where('space_id', '=', spaceId).execute();
    await x.deleteFrom('space_hostnames').where('space_id', '=', spaceId).execute();
    const r = await x.deleteFrom('spaces').where('id', '=', spaceId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
