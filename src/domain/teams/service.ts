import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../../clock.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { DB } from '../../store/schema.ts';
import type { Principal } from '../auth/principal.ts';
import { can, type Permission, type Role } from './roles.ts';

export type TeamRow = DB['teams'];
export type MemberRow = DB['team_members'];
export type InvitationRow = DB['team_invitations'];

export const TEAM_SLUG = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** A team as the caller sees it: the row plus the caller's role (`member` for non-session credentials). */
export interface TeamView {
  team: TeamRow;
  role: Role;
  /** The caller's real membership role, used for permission checks. */
  memberRole: Role;
}

/**
 * Derives a slug from a team name: NFKD, ASCII letters and digits, runs of anything else become one
 * hyphen, trimmed; `team` when nothing is left. Collisions take the lowest free `-2`, `-3`, … suffix.
 */
export function slugBase(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f'’]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 240)
    .replace(/-+$/g, '');
  return s || 'team';
}

export class TeamService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** Picks the lowest available slug for `base` within a tenant. */
  private async freeSlug(db: Kysely<DB>, tenantId: string, base: string): Promise<string> {
    const rows = await db
      .selectFrom('teams')
      .select('slug')
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
      .execute();
    const taken = new Set(rows.map((r) => r.slug));
    if (!taken.has(base)) return base;
    for (let i = 2; ; i++) {
      const candidate = `${base}-${i}`;
      if (!taken.has(candidate)) return candidate;
    }
  }

  /** Creates a team with `userId` as its owner, inside an open transaction. */
  async createTeamTx(
    trx: Transaction<DB> | Kysely<DB>,
    tenantId: string,
    userId: string,
    input: { name: string; slug?: string },
  ): Promise<TeamRow> {
    const now = this.now();
    const slug = input.slug ?? (await this.freeSlug(trx, tenantId, slugBase(input.name)));
    const team: TeamRow = {
      id: newId('team'),
      tenant_id: tenantId,
      name: input.name,
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
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('teams').values(team).execute();
    await trx
      .insertInto('team_members')
      .values({ team_id: team.id, user_id: userId, role: 'owner', created_at: now, updated_at: now })
      .execute();
    return team;
  }

  async createTeam(principal: Principal, input: { name: string; slug?: string }): Promise<TeamRow> {
    if (!principal.userId)
      fail('forbidden', 'Teams are created for a person; this credential acts for none.');
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db
          .transaction()
          .execute((trx) => this.createTeamTx(trx, principal.tenantId, principal.userId!, input));
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        if (input.slug) {
          fail('team_slug_conflict', `The slug "${input.slug}" is taken by another team.`, {
            pointer: '/slug',
            details: { slug: input.slug },
          });
        }
        // A concurrent create took the generated slug: pick again.
        if (attempt > 5) throw err;
      }
    }
  }

  /** Teams the credential can act for, newest first. */
  async listTeams(principal: Principal, after: string | null, n: number): Promise<TeamView[]> {
    if (!principal.userId || principal.spaceId) return [];
    let q = this.db
      .selectFrom('teams')
      .innerJoin('team_members', 'team_members.team_id', 'teams.id')
      .selectAll('teams')
      .select('team_members.role as member_role')
      .where('team_members.user_id', '=', principal.userId)
      .where('teams.tenant_id', '=', principal.tenantId);
    if (principal.teamIds) q = q.where('teams.id', 'in', principal.teamIds as string[]);
    if (after) q = q.where('teams.id', '<', after);
    const rows = await q.orderBy('teams.id', 'desc').limit(n).execute();
    return rows.map(({ member_role, ...team }) => this.view(principal, team, member_role as Role));
  }

  private view(principal: Principal, team: TeamRow, memberRole: Role): TeamView {
    return { team, memberRole, role: principal.kind === 'session' ? memberRole : 'member' };
  }

  /**
   * Resolves a team id or slug within the caller's reach. Anything outside it is a 404, never a 403,
   * so a credential learns nothing about teams it doesn't belong to.
   */
  async resolve(principal: Principal, ref: string): Promise<TeamView> {
    const notFound = new ApiError('not_found', `Team ${ref} was not found.`);
    // A credential bound to one space acts on that space alone, never on a team as a whole.
    if (!principal.userId || principal.spaceId) throw notFound;
    const row = await this.db
      .selectFrom('teams')
      .innerJoin('team_members', 'team_members.team_id', 'teams.id')
      .selectAll('teams')
      .select('team_members.role as member_role')
      .where('team_members.user_id', '=', principal.userId)
      .where('teams.tenant_id', '=', principal.tenantId)
      .where((eb) => eb.or([eb('teams.id', '=', ref), eb('teams.slug', '=', ref)]))
      .executeTakeFirst();
    if (!row) throw notFound;
    const { member_role, ...team } = row;
    if (principal.teamIds && !principal.teamIds.includes(team.id)) {
      throw await this.boundElsewhere(principal, team);
    }
    return this.view(principal, team, member_role as Role);
  }

  /**
   * Of `teamIds`, the first team the credential's person belongs to although the credential itself
   * can't act for it (an API key belongs to one team). Null when there is none: then nothing may be
   * said about those teams, which may be other people's.
   */
  async memberTeamOutsideCredential(principal: Principal, teamIds: string[]): Promise<TeamRow | null> {
    if (!principal.userId || !principal.teamIds || principal.spaceId || teamIds.length === 0) return null;
    const outside = teamIds.filter((id) => !principal.teamIds!.includes(id));
    if (outside.length === 0) return null;
    const row = await this.db
      .selectFrom('teams')
      .innerJoin('team_members', 'team_members.team_id', 'teams.id')
      .selectAll('teams')
      .where('team_members.user_id', '=', principal.userId)
      .where('teams.tenant_id', '=', principal.tenantId)
      .where('teams.id', 'in', outside)
      .orderBy('teams.id')
      .executeTakeFirst();
    return row ?? null;
  }

  /**
   * The 404 for something in `team`, a team of the caller's person that the credential (an API key or
   * a team-bound token) doesn't act for: it names the credential's team and how to get a key that
   * works, so a person who just created a team with their key learns why the key can't use it. Only
   * ever called for teams the person belongs to.
   */
  async boundElsewhere(principal: Principal, team: TeamRow, what?: string): Promise<ApiError> {
    const own = await this.db
      .selectFrom('teams')
      .select(['slug', 'name'])
      .where('id', 'in', principal.teamIds?.length ? (principal.teamIds as string[]) : [''])
      .orderBy('slug')
      .execute();
    const credential = principal.kind === 'api_key' ? 'this API key' : 'this credential';
    const belongs = own.length
      ? `${credential} belongs to team ${own.map((t) => `${t.slug} ("${t.name}")`).join(', ')} and acts for that team only`
      : `${credential} acts for no team`;
    const lead = what
      ? `${what} is in team ${team.slug}, another of your teams`
      : `Team ${team.slug} is another of your teams`;
    return new ApiError('not_found', `${lead}, but ${belongs}.`, {
      details: { teamId: team.id, teamSlug: team.slug, credentialTeams: own.map((t) => t.slug) },
      suggestions: [
        `Create a key for team ${team.slug} with a session (POST /v1/account/sessions, then POST /v1/account/api-keys with {"name":"…","team":"${team.slug}"}), and use that key for ${team.slug}.`,
        'Or use a session (sign in with e-mail and password): it acts for every team you belong to.',
      ],
    });
  }

  /** Resolves and checks a permission from the role matrix (403 when the role is too low). */
  async authorize(principal: Principal, ref: string, permission: Permission): Promise<TeamView> {
    const view = await this.resolve(principal, ref);
    if (!can(view.memberRole, permission)) {
      fail('forbidden', `Your role in team ${view.team.slug} (${view.memberRole}) does not allow this.`, {
        details: { permission, role: view.memberRole },
      });
    }
    return view;
  }

  async updateTeam(
    principal: Principal,
    ref: string,
    patch: {
      name?: string;
      slug?: string;
      logo?: string | null;
      metadata?: string | null;
      defaultDataLocation?: string;
      defaultAccess?: 'private' | 'team' | 'public';
    },
  ): Promise<TeamView> {
    const view = await this.authorize(principal, ref, 'team.update');
    const set: Partial<TeamRow> = { updated_at: this.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.slug !== undefined) set.slug = patch.slug;
    if (patch.logo !== undefined) set.logo = patch.logo;
    if (patch.metadata !== undefined) set.metadata = patch.metadata;
    if (patch.defaultDataLocation !== undefined) set.default_data_location = patch.defaultDataLocation;
    if (patch.defaultAccess !== undefined) set.default_space_access = patch.defaultAccess;
    try {
      await this.db.updateTable('teams').set(set).where('id', '=', view.team.id).execute();
    } catch (err) {
      if (isUniqueViolation(err)) {
        fail('team_slug_conflict', `The slug "${patch.slug}" is taken by another team.`, {
          pointer: '/slug',
        });
      }
      throw err;
    }
    return { ...view, team: { ...view.team, ...set } };
  }

  async listMembers(
    principal: Principal,
    ref: string,
    after: string | null,
    n: number,
  ): Promise<Array<MemberRow & { id: string; email: string; name: string }>> {
    const view = await this.authorize(principal, ref, 'team.read');
    let q = this.db
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
      .where('team_members.team_id', '=', view.team.id);
    if (after) q = q.where('users.id', '<', after);
    return q.orderBy('users.id', 'desc').limit(n).execute();
  }

  private async member(trx: Transaction<DB>, teamId: string, userId: string): Promise<MemberRow> {
    const m = await trx
      .selectFrom('team_members')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (!m) throw new ApiError('not_found', `Member ${userId} was not found in this team.`);
    return m;
  }

  /** Changes a member's role. Only owners touch the owner role; the last owner stays an owner. */
  async setRole(principal: Principal, ref: string, userId: string, role: Role): Promise<MemberRow> {
    const view = await this.authorize(principal, ref, 'members.manage');
    return this.db.transaction().execute(async (trx) => {
      const m = await this.member(trx, view.team.id, userId);
      if ((m.role === 'owner' || role === 'owner') && !can(view.memberRole, 'owners.manage')) {
        fail('forbidden', 'Only an owner can grant or revoke the owner role.', {
          details: { role: view.memberRole },
        });
      }
      if (m.role === 'owner' && role !== 'owner') await this.ensureAnotherOwner(trx, view.team.id);
      const updated = { ...m, role, updated_at: this.now() };
      await trx
        .updateTable('team_members')
        .set({ role, updated_at: updated.updated_at })
        .where('team_id', '=', view.team.id)
        .where('user_id', '=', userId)
        .execute();
      return updated;
    });
  }

  /** Removes a member (or lets a member leave). The last owner can't be removed. */
  async removeMember(principal: Principal, ref: string, userId: string): Promise<void> {
    const self = userId === principal.userId;
    const view = await this.authorize(principal, ref, self ? 'team.read' : 'members.manage');
    await this.db.transaction().execute(async (trx) => {
      const m = await this.member(trx, view.team.id, userId);
      if (m.role === 'owner') {
        if (!self && !can(view.memberRole, 'owners.manage'))
          fail('forbidden', 'Only an owner can remove an owner.');
        await this.ensureAnotherOwner(trx, view.team.id);
      }
      await trx
        .deleteFrom('team_members')
        .where('team_id', '=', view.team.id)
        .where('user_id', '=', userId)
        .execute();
    });
  }

  private async ensureAnotherOwner(trx: Transaction<DB>, teamId: string): Promise<void> {
    const { n } = await trx
      .selectFrom('team_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    if (Number(n) <= 1) {
      fail('last_owner', 'This is the last owner of the team. Make another member an owner first.');
    }
  }

  async invite(
    principal: Principal,
    ref: string,
    input: { email: string; role: Role },
  ): Promise<InvitationRow> {
    const view = await this.authorize(principal, ref, 'members.manage');
    if (input.role === 'owner' && !can(view.memberRole, 'owners.manage')) {
      fail('forbidden', 'Only an owner can invite another owner.', { pointer: '/role' });
    }
    const email = input.email.trim().toLowerCase();
    return this.db.transaction().execute(async (trx) => {
      const existingMember = await trx
        .selectFrom('team_members')
        .innerJoin('users', 'users.id', 'team_members.user_id')
        .select('users.id')
        .where('team_members.team_id', '=', view.team.id)
        .where('users.email', '=', email)
        .executeTakeFirst();
      if (existingMember)
        fail('member_already_exists', `${email} is a member of this team already.`, { pointer: '/email' });
      const now = this.clock.now();
      const pending = await trx
        .selectFrom('team_invitations')
        .select('id')
        .where('team_id', '=', view.team.id)
        .where('email', '=', email)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now.toISOString())
        .executeTakeFirst();
      if (pending) {
        fail('invitation_already_exists', `${email} has a pending invitation already.`, {
          pointer: '/email',
          details: { invitationId: pending.id },
        });
      }
      const inv: InvitationRow = {
        id: newId('inv'),
        team_id: view.team.id,
        email,
        role: input.role,
        invited_by: principal.userId!,
        status: 'pending',
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + INVITATION_TTL_MS).toISOString(),
        responded_at: null,
      };
      await trx.insertInto('team_invitations').values(inv).execute();
      return inv;
    });
  }

  async listInvitations(
    principal: Principal,
    ref: string,
    after: string | null,
    n: number,
  ): Promise<InvitationRow[]> {
    const view = await this.authorize(principal, ref, 'members.manage');
    let q = this.db.selectFrom('team_invitations').selectAll().where('team_id', '=', view.team.id);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  async cancelInvitation(principal: Principal, ref: string, invitationId: string): Promise<InvitationRow> {
    const view = await this.authorize(principal, ref, 'members.manage');
    const inv = await this.db
      .selectFrom('team_invitations')
      .selectAll()
      .where('id', '=', invitationId)
      .where('team_id', '=', view.team.id)
      .executeTakeFirst();
    if (!inv) throw new ApiError('not_found', `Invitation ${invitationId} was not found.`);
    if (inv.status !== 'pending') fail('invitation_not_pending', `The invitation is ${inv.status}.`);
    const now = this.now();
    await this.db
      .updateTable('team_invitations')
      .set({ status: 'canceled', responded_at: now })
      .where('id', '=', inv.id)
      .execute();
    return { ...inv, status: 'canceled', responded_at: now };
  }

  /** Pending invitations addressed to the signed-in person's e-mail. */
  async myInvitations(
    principal: Principal,
    email: string,
  ): Promise<Array<InvitationRow & { team_name: string; team_slug: string }>> {
    return this.db
      .selectFrom('team_invitations')
      .innerJoin('teams', 'teams.id', 'team_invitations.team_id')
      .selectAll('team_invitations')
      .select(['teams.name as team_name', 'teams.slug as team_slug'])
      .where('team_invitations.email', '=', email)
      .where('team_invitations.status', '=', 'pending')
      .where('team_invitations.expires_at', '>', this.now())
      .where('teams.tenant_id', '=', principal.tenantId)
      .orderBy('team_invitations.id', 'desc')
      .execute();
  }

  /** Accepts (or declines) an invitation as the person it was sent to. */
  async respond(
    principal: Principal,
    email: string,
    invitationId: string,
    accept: boolean,
  ): Promise<InvitationRow> {
    if (principal.kind !== 'session' || !principal.userId) {
      fail('forbidden', 'Invitations are accepted by a signed-in person (a session credential).');
    }
    return this.db.transaction().execute(async (trx) => {
      const inv = await trx
        .selectFrom('team_invitations')
        .selectAll()
        .where('id', '=', invitationId)
        .executeTakeFirst();
      const team = inv
        ? await trx.selectFrom('teams').select('tenant_id').where('id', '=', inv.team_id).executeTakeFirst()
        : undefined;
      if (!inv || !team || team.tenant_id !== principal.tenantId) {
        throw new ApiError('not_found', `Invitation ${invitationId} was not found.`);
      }
      if (inv.email !== email) {
        fail('invitation_email_mismatch', 'This invitation was sent to another e-mail address.');
      }
      if (inv.status !== 'pending') fail('invitation_not_pending', `The invitation is ${inv.status}.`);
      const now = this.now();
      if (inv.expires_at <= now) fail('invitation_expired', 'The invitation has expired; ask for a new one.');
      const status = accept ? 'accepted' : 'declined';
      await trx
        .updateTable('team_invitations')
        .set({ status, responded_at: now })
        .where('id', '=', inv.id)
        .execute();
      if (accept) {
        const exists = await trx
          .selectFrom('team_members')
          .select('role')
          .where('team_id', '=', inv.team_id)
          .where('user_id', '=', principal.userId!)
          .executeTakeFirst();
        if (!exists) {
          await trx
            .insertInto('team_members')
            .values({
              team_id: inv.team_id,
              user_id: principal.userId!,
              role: inv.role,
              created_at: now,
              updated_at: now,
            })
            .execute();
        }
      }
      return { ...inv, status, responded_at: now };
    });
  }
}
