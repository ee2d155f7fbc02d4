import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type InvitationRow = Selectable<DB['team_invitations']>;

/** An invitation with the name and slug of its team. */
export type InvitationWithTeam = InvitationRow & { team_name: string; team_slug: string };

/** Invitations to join a team, addressed to an e-mail address. */
export class TeamInvitationRepository {
  constructor(private readonly ctx: RepoContext) {}

  async create(row: InvitationRow): Promise<void> {
    await this.ctx.exec.insertInto('team_invitations').values(row).execute();
  }

  /** Any invitation by id, with the tenant of its team (the caller checks the tenant). */
  async byId(id: string): Promise<(InvitationRow & { tenant_id: string }) | null> {
    const row = await this.ctx.exec
      .selectFrom('team_invitations')
      .innerJoin('teams', 'teams.id', 'team_invitations.team_id')
      .selectAll('team_invitations')
      .select('teams.tenant_id as tenant_id')
      .where('team_invitations.id', '=', id)
      .executeTakeFirst();
    return row ?? null;
  }

  async byIdInTeam(id: string, teamId: string): Promise<InvitationRow | null> {
    const row = await this.ctx.exec
      .selectFrom('team_invitations')
      .selectAll()
      .where('id', '=', id)
      .where('team_id', '=', teamId)
      .executeTakeFirst();
    return row ?? null;
  }

  /** The team's pending, unexpired invitation for this e-mail address, if any. */
  async pendingFor(teamId: string, email: string, now: string): Promise<InvitationRow | null> {
    const row = await this.ctx.exec
      .selectFrom('team_invitations')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('email', '=', email)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ?? null;
  }

  /** A team's invitations (every status), newest first, after the cursor id. */
  listForTeam(teamId: string, after: string | null, limit: number): Promise<InvitationRow[]> {
    let q = this.ctx.exec.selectFrom('team_invitations').selectAll().where('team_id', '=', teamId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  /** Pending, unexpired invitations to an e-mail address from teams of a tenant, newest first. */
  pendingForEmail(email: string, tenantId: string, now: string): Promise<InvitationWithTeam[]> {
    return this.ctx.exec
      .selectFrom('team_invitations')
      .innerJoin('teams', 'teams.id', 'team_invitations.team_id')
      .selectAll('team_invitations')
      .select(['teams.name as team_name', 'teams.slug as team_slug'])
      .where('team_invitations.email', '=', email)
      .where('team_invitations.status', '=', 'pending')
      .where('team_invitations.expires_at', '>', now)
      .where('teams.tenant_id', '=', tenantId)
      .orderBy('team_invitations.id', 'desc')
      .execute();
  }

  async setStatus(id: string, status: string, respondedAt: string): Promise<void> {
    await this.ctx.exec
      .updateTable('team_invitations')
      .set({ status, responded_at: respondedAt })
      .where('id', '=', id)
      .execute();
  }

  /** A pending invitation's new expiry (a resend); false when it is not pending any more. */
  async renew(id: string, expiresAt: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('team_invitations')
      .set({ expires_at: expiresAt })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
