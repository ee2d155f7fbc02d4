import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type DomainRow = DB['domains'];
export type NewDomainRow = Omit<DomainRow, 'last_check' | 'checked_at' | 'check_failures' | 'verified_at'>;

/** The fields a check writes. */
export interface DomainCheckUpdate {
  status: string;
  last_check: string;
  checked_at: string;
  next_check_at: string | null;
  check_failures: number;
  verified_at: string | null;
  updated_at: string;
}

/**
 * A team's custom domains. Every read that a credential drives is scoped to the teams the caller
 * reaches (`teamIds`): a domain of another team is indistinguishable from one that does not exist.
 * `hostname` is unique per team; inserting a second one fails with a unique violation.
 */
export class DomainRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: NewDomainRow): Promise<void> {
    await this.ctx.exec
      .insertInto('domains')
      .values({ ...row, last_check: null, checked_at: null, check_failures: 0, verified_at: null })
      .execute();
  }

  async byIdInTeams(id: string, teamIds: readonly string[]): Promise<DomainRow | null> {
    if (teamIds.length === 0) return null;
    return (
      (await this.ctx.exec
        .selectFrom('domains')
        .selectAll()
        .where('id', '=', id)
        .where('team_id', 'in', teamIds)
        .executeTakeFirst()) ?? null
    );
  }

  async byId(id: string): Promise<DomainRow | null> {
    return (
      (await this.ctx.exec.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst()) ?? null
    );
  }

  async byTeamAndHostname(teamId: string, hostname: string): Promise<DomainRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('domains')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('hostname', '=', hostname)
        .executeTakeFirst()) ?? null
    );
  }

  /** Due for a check now; a domain whose verification failed goes back to pending. */
  async queueCheck(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('domains')
      .set((eb) => ({
        next_check_at: at,
        updated_at: at,
        status: eb
          .case()
          .when('status', '=', 'verification_failed')
          .then('pending')
          .else(eb.ref('status'))
          .end(),
        check_failures: eb
          .case()
          .when('status', '=', 'verification_failed')
          .then(0)
          .else(eb.ref('check_failures'))
          .end(),
      }))
      .where('id', '=', id)
      .execute();
  }

  /** Newest first, ids below `after`; limited to `teamIds`. */
  listInTeams(teamIds: readonly string[], after: string | null, n: number): Promise<DomainRow[]> {
    if (teamIds.length === 0) return Promise.resolve([]);
    let q = this.ctx.exec.selectFrom('domains').selectAll().where('team_id', 'in', teamIds);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /** The domains bound to a space, hostname order. */
  listForSpace(spaceId: string): Promise<DomainRow[]> {
    return this.ctx.exec
      .selectFrom('domains')
      .selectAll()
      .where('space_id', '=', spaceId)
      .orderBy('hostname')
      .execute();
  }

  /** Other teams' rows of the hostname that are verified now. */
  verifiedElsewhere(hostname: string, teamId: string): Promise<DomainRow[]> {
    return this.ctx.exec
      .selectFrom('domains')
      .selectAll()
      .where('hostname', '=', hostname)
      .where('status', '=', 'verified')
      .where('team_id', '!=', teamId)
      .execute();
  }

  /** The verified row of a hostname, the one the edge may serve. */
  async verifiedByHostname(hostname: string): Promise<DomainRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('domains')
        .selectAll()
        .where('hostname', '=', hostname)
        .where('status', '=', 'verified')
        .executeTakeFirst()) ?? null
    );
  }

  /** The hostname a space's `liveUrl` names: its oldest verified, bound standard domain. */
  async primaryFor(spaceId: string): Promise<string | null> {
    const row = await this.ctx.exec
      .selectFrom('domains')
      .select('hostname')
      .where('space_id', '=', spaceId)
      .where('status', '=', 'verified')
      .where('role', '=', 'standard')
      .where('hostname', 'not like', '*.%')
      .orderBy('verified_at')
      .orderBy('id')
      .executeTakeFirst();
    return row?.hostname ?? null;
  }

  /** Rows whose next check is due at `now`, oldest due first. */
  due(now: string, n: number): Promise<DomainRow[]> {
    return this.ctx.exec
      .selectFrom('domains')
      .selectAll()
      .where('next_check_at', 'is not', null)
      .where('next_check_at', '<=', now)
      .orderBy('next_check_at')
      .limit(n)
      .execute();
  }

  async updateBinding(
    id: string,
    set: Pick<DomainRow, 'space_id' | 'role' | 'redirect_target' | 'redirect_status' | 'updated_at'>,
  ): Promise<void> {
    await this.ctx.exec.updateTable('domains').set(set).where('id', '=', id).execute();
  }

  async recordCheck(id: string, set: DomainCheckUpdate): Promise<void> {
    await this.ctx.exec.updateTable('domains').set(set).where('id', '=', id).execute();
  }

  /** Another team proved control: this row stops being served and is checked again. */
  async markControlLost(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('domains')
      .set({ status: 'control_lost', verified_at: null, next_check_at: at, updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  /** Unbinds every domain of a space (the space is going away). */
  async unbindSpace(spaceId: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('domains')
      .set({ space_id: null, updated_at: at })
      .where('space_id', '=', spaceId)
      .execute();
  }

  /** Deletes an unbound row; false when it is bound (or gone). */
  async deleteUnbound(id: string): Promise<boolean> {
    const r = await this.ctx.exec
      .deleteFrom('domains')
      .where('id', '=', id)
      .where('space_id', 'is', null)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
