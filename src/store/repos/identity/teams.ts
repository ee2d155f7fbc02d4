import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type TeamRow = Selectable<DB['teams']>;

/** A team with the role a person holds in it. */
export type TeamWithRole = TeamRow & { member_role: string };

/**
 * Teams. Slugs are unique per tenant. Every read on behalf of a person goes through their
 * membership and their tenant: a team they don't belong to is not found.
 */
export class TeamRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Throws a unique violation when the slug is taken in the tenant. */
  async create(row: TeamRow): Promise<void> {
    await this.ctx.exec.insertInto('teams').values(row).execute();
  }

  async byId(id: string): Promise<TeamRow | null> {
    const row = await this.ctx.exec.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    return row ?? null;
  }

  /** Slugs of the tenant equal to `base` or starting with `base-` (to pick a free one). */
  async slugsLike(tenantId: string, base: string): Promise<string[]> {
    const rows = await this.ctx.exec
      .selectFrom('teams')
      .select('slug')
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
      .execute();
    return rows.map((r) => r.slug);
  }

  /** Teams a person belongs to in a tenant (within `teamIds` when given), newest first. */
  listForMember(q: {
    userId: string;
    tenantId: string;
    teamIds: readonly string[] | null;
    after: string | null;
    limit: number;
  }): Promise<TeamWithRole[]> {
    let sel = this.ctx.exec
      .selectFrom('teams')
      .innerJoin('team_members', 'team_members.team_id', 'teams.id')
      .selectAll('teams')
      .select('team_members.role as member_role')
      .where('team_members.user_id', '=', q.userId)
      .where('teams.tenant_id', '=', q.tenantId);
    if (q.teamIds) sel = sel.where('teams.id', 'in', q.teamIds.length ? (q.teamIds as string[]) : ['']);
    if (q.after) sel = sel.where('teams.id', '<', q.after);
    return sel.orderBy('teams.id', 'desc').limit(q.limit).execute();
  }

  /** The team with this id or slug that the person belongs to in the tenant, with their role. */
  async byRefForMember(userId: string, tenantId: string, ref: string): Promise<TeamWithRole | null> {
    const row = await this.ctx.exec
      .selectFrom('teams')
      .innerJoin('team_members', 'team_members.team_id', 'teams.id')
      .selectAll('teams')
      .select('team_members.role as member_role')
      .where('team_members.user_id', '=', userId)
      .where('teams.tenant_id', '=', tenantId)
      .where((eb) => eb.or([eb('teams.id', '=', ref), eb('teams.slug', '=', ref)]))
      .executeTakeFirst();
    return row ?? null;
  }

  /** Of `teamIds`, the first (by id) that the person belongs to in the tenant. */
  async firstForMember(
    userId: string,
    tenantId: string,
    teamIds: readonly string[],
  ): Promise<TeamRow | null> {
    if (teamIds.length === 0) return null;
    const row = await this.ctx.exec
      .selectFrom('teams')
      .innerJoin('team_members', 'team_members.team_id', 'teams.id')
      .selectAll('teams')
      .where('team_members.user_id', '=', userId)
      .where('teams.tenant_id', '=', tenantId)
      .where('teams.id', 'in', teamIds as string[])
      .orderBy('teams.id')
      .executeTakeFirst();
    return row ?? null;
  }

  /** The oldest team (by id) a person owns. */
  async oldestOwnedBy(userId: string): Promise<TeamRow | null> {
    const row = await this.ctx.exec
      .selectFrom('teams')
      .innerJoin('team_members', 'team_members.team_id', 'teams.id')
      .selectAll('teams')
      .where('team_members.user_id', '=', userId)
      .where('team_members.role', '=', 'owner')
      .orderBy('teams.id')
      .executeTakeFirst();
    return row ?? null;
  }

  /** Slug and name of these teams, by slug (a credential's own teams, named in an error). */
  namesByIds(ids: readonly string[]): Promise<Array<{ id: string; slug: string; name: string }>> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.ctx.exec
      .selectFrom('teams')
      .select(['id', 'slug', 'name'])
      .where('id', 'in', ids as string[])
      .orderBy('slug')
      .execute();
  }

  /** Applies a patch; throws a unique violation when a new slug is taken in the tenant. */
  async update(id: string, set: Partial<Omit<TeamRow, 'id' | 'tenant_id'>>): Promise<void> {
    await this.ctx.exec.updateTable('teams').set(set).where('id', '=', id).execute();
  }
}
