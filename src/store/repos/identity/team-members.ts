import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type MemberRow = Selectable<DB['team_members']>;

/** A member with their account's id, e-mail address and name. */
export type MemberWithUser = MemberRow & { id: string; email: string; name: string };

/** Who belongs to which team, and with what role. One row per (team, person). */
export class TeamMemberRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** Throws a unique violation when the person is a member already. */
  async add(row: MemberRow): Promise<void> {
    await this.ctx.exec.insertInto('team_members').values(row).execute();
  }

  async get(teamId: string, userId: string): Promise<MemberRow | null> {
    const row = await this.ctx.exec
      .selectFrom('team_members')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row ?? null;
  }

  /** Ids of the teams a person belongs to (only among `within` when given). */
  async teamIdsOf(userId: string, within: readonly string[] | null = null): Promise<string[]> {
    let q = this.ctx.exec.selectFrom('team_members').select('team_id').where('user_id', '=', userId);
    if (within) q = q.where('team_id', 'in', within.length ? (within as string[]) : ['']);
    return (await q.execute()).map((r) => r.team_id);
  }

  /** The member of a team with this (lower-cased) e-mail address, if any. */
  async byEmail(teamId: string, email: string): Promise<MemberRow | null> {
    const row = await this.ctx.exec
      .selectFrom('team_members')
      .innerJoin('users', 'users.id', 'team_members.user_id')
      .selectAll('team_members')
      .where('team_members.team_id', '=', teamId)
      .where('users.email', '=', email)
      .executeTakeFirst();
    return row ?? null;
  }

  /** A team's members with their accounts, by user id descending, after the cursor id. */
  listWithUsers(teamId: string, after: string | null, limit: number): Promise<MemberWithUser[]> {
    let q = this.ctx.exec
      .selectFrom('team_members')
      .innerJoin('users', 'users.id', 'team_members.user_id')
      .select([
        'team_members.team_id',
        'team_members.user_id',
        'team_members.role',
        'team_members.created_at',
        'team_members.updated_at',
        'users.id as id',
        'users.email',
        'users.name',
      ])
      .where('team_members.team_id', '=', teamId);
    if (after) q = q.where('users.id', '<', after);
    return q.orderBy('users.id', 'desc').limit(limit).execute();
  }

  async setRole(teamId: string, userId: string, role: string, now: string): Promise<void> {
    await this.ctx.exec
      .updateTable('team_members')
      .set({ role, updated_at: now })
      .where('team_id', '=', teamId)
      .where('user_id', '=', userId)
      .execute();
  }

  async remove(teamId: string, userId: string): Promise<void> {
    await this.ctx.exec
      .deleteFrom('team_members')
      .where('team_id', '=', teamId)
      .where('user_id', '=', userId)
      .execute();
  }

  async countOwners(teamId: string): Promise<number> {
    const { n } = await this.ctx.exec
      .selectFrom('team_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    return Number(n);
  }
}
