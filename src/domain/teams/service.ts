import type { Clock } from '../../clock.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { InvitationRow } from '../../store/repos/identity/team-invitations.ts';
import type { MemberRow, MemberWithUser } from '../../store/repos/identity/team-members.ts';
import type { TeamRow } from '../../store/repos/identity/teams.ts';
import type { IdentityRepos } from '../../store/repos/identity.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { actorFromPrincipal, EventLog } from '../events/log.ts';
import type { MailOutbox } from '../mail/outbox.ts';
import { invitationMail } from './invitation-mail.ts';
import { can, PERMISSIONS, type Permission, type Role } from './roles.ts';

export type { InvitationRow, MemberRow, TeamRow };

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
  private readonly eventLog: EventLog;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    eventLog?: EventLog,
    /** Where invitations are e-mailed (none: invitations are only listed, e.g. in `spaces admin`). */
    private readonly mail?: { outbox: MailOutbox; publicUrl: () => string; signupOpen: boolean },
  ) {
    this.eventLog = eventLog ?? new EventLog(clock);
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** Picks the lowest available slug for `base` within a tenant. */
  private async freeSlug(repos: IdentityRepos, tenantId: string, base: string): Promise<string> {
    const taken = new Set(await repos.teams.slugsLike(tenantId, base));
    if (!taken.has(base)) return base;
    for (let i = 2; ; i++) {
      const candidate = `${base}-${i}`;
      if (!taken.has(candidate)) return candidate;
    }
  }

  /** Creates a team with `userId` as its owner, with the repositories of an open `store.transaction`. */
  async createTeamIn(
    repos: IdentityRepos,
    tenantId: string,
    userId: string,
    input: { name: string; slug?: string },
  ): Promise<TeamRow> {
    const now = this.now();
    const slug = input.slug ?? (await this.freeSlug(repos, tenantId, slugBase(input.name)));
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
    await repos.teams.create(team);
    await repos.teamMembers.add({
      team_id: team.id,
      user_id: userId,
      role: 'owner',
      created_at: now,
      updated_at: now,
    });
    return team;
  }

  async createTeam(principal: Principal, input: { name: string; slug?: string }): Promise<TeamRow> {
    if (!principal.userId)
      fail('forbidden', 'Teams are created for a person; this credential acts for none.');
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.store.transaction((repos) =>
          this.createTeamIn(repos, principal.tenantId, principal.userId!, input),
        );
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

  /**
   * The one team a team-bound machine credential (an OAuth client-credentials token: no person, not
   * bound to a space) acts for, or null. Such a credential acts in its team with a member's
   * permissions (read the team, manage its spaces, publish, tags): never more, since no person with
   * a role stands behind it (docs/guides/oauth.md, "Machine tokens").
   */
  private async machineTeam(principal: Principal): Promise<TeamRow | null> {
    if (principal.userId || principal.spaceId || principal.teamIds?.length !== 1) return null;
    const team = await this.store.repos.teams.byId(principal.teamIds[0]!);
    return team && team.tenant_id === principal.tenantId ? team : null;
  }

  /** Teams the credential can act for, newest first. */
  async listTeams(principal: Principal, after: string | null, n: number): Promise<TeamView[]> {
    if (principal.spaceId) return [];
    if (!principal.userId) {
      const team = await this.machineTeam(principal);
      return team && n > 0 && (!after || team.id < after)
        ? [{ team, memberRole: 'member', role: 'member' }]
        : [];
    }
    const rows = await this.store.repos.teams.listForMember({
      userId: principal.userId,
      tenantId: principal.tenantId,
      teamIds: principal.teamIds,
      after,
      limit: n,
    });
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
    if (principal.spaceId) throw notFound;
    if (!principal.userId) {
      const team = await this.machineTeam(principal);
      if (!team || (ref !== team.id && ref !== team.slug)) throw notFound;
      return { team, memberRole: 'member', role: 'member' };
    }
    const row = await this.store.repos.teams.byRefForMember(principal.userId, principal.tenantId, ref);
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
    return this.store.repos.teams.firstForMember(principal.userId, principal.tenantId, outside);
  }

  /**
   * The 404 for something in `team`, a team of the caller's person that the credential (an API key or
   * a team-bound token) doesn't act for: it names the credential's team and how to get a key that
   * works, so a person who just created a team with their key learns why the key can't use it. Only
   * ever called for teams the person belongs to.
   */
  async boundElsewhere(principal: Principal, team: TeamRow, what?: string): Promise<ApiError> {
    const own = await this.store.repos.teams.namesByIds(principal.teamIds ?? []);
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
    if (!principal.userId && !can(view.memberRole, permission)) {
      fail(
        'forbidden',
        `A machine credential acts for team ${view.team.slug} with a member’s permissions; this needs a person with the ${PERMISSIONS[permission]} role.`,
        { details: { permission, role: view.memberRole, credentialKind: principal.kind } },
      );
    }
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
    const set: Partial<Omit<TeamRow, 'id' | 'tenant_id'>> = { updated_at: this.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.slug !== undefined) set.slug = patch.slug;
    if (patch.logo !== undefined) set.logo = patch.logo;
    if (patch.metadata !== undefined) set.metadata = patch.metadata;
    if (patch.defaultDataLocation !== undefined) set.default_data_location = patch.defaultDataLocation;
    if (patch.defaultAccess !== undefined) set.default_space_access = patch.defaultAccess;
    const actor = actorFromPrincipal(principal);
    const team = view.team;
    try {
      await this.store.transaction(async (repos) => {
        await repos.teams.update(team.id, set);
        const record = (code: string, message: string, details: Record<string, unknown>) =>
          this.eventLog.record(repos, { tenantId: team.id, actor, code, message, details });
        if (set.slug !== undefined && set.slug !== team.slug) {
          await record('team.slug_updated', `Team slug changed from ${team.slug} to ${set.slug}.`, {
            teamId: team.id,
            from: team.slug,
            to: set.slug,
          });
        }
        const accessDefaults: Record<string, unknown> = {};
        if (set.default_space_access !== undefined && set.default_space_access !== team.default_space_access)
          accessDefaults.defaultAccess = set.default_space_access;
        if (
          set.default_data_location !== undefined &&
          set.default_data_location !== team.default_data_location
        )
          accessDefaults.defaultDataLocation = set.default_data_location;
        if (Object.keys(accessDefaults).length > 0) {
          await record(
            'team.access_defaults_updated',
            `Team ${team.slug}'s defaults for new spaces changed.`,
            {
              teamId: team.id,
              ...accessDefaults,
            },
          );
        }
        const fields = (['name', 'logo', 'metadata'] as const).filter(
          (f) => set[f] !== undefined && set[f] !== team[f],
        );
        if (fields.length > 0) {
          await record('team.updated', `Team ${team.slug} was updated (${fields.join(', ')}).`, {
            teamId: team.id,
            fields,
          });
        }
      });
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
  ): Promise<MemberWithUser[]> {
    const view = await this.authorize(principal, ref, 'team.read');
    // People's names and addresses are for people: a machine credential sees the team, not who is in it.
    if (!principal.userId) {
      fail('forbidden', 'The member list is for people; a machine credential cannot read it.', {
        details: { credentialKind: principal.kind },
      });
    }
    return this.store.repos.teamMembers.listWithUsers(view.team.id, after, n);
  }

  private async member(repos: IdentityRepos, teamId: string, userId: string): Promise<MemberRow> {
    const m = await repos.teamMembers.get(teamId, userId);
    if (!m) throw new ApiError('not_found', `Member ${userId} was not found in this team.`);
    return m;
  }

  /** Changes a member's role. Only owners touch the owner role; the last owner stays an owner. */
  async setRole(principal: Principal, ref: string, userId: string, role: Role): Promise<MemberRow> {
    const view = await this.authorize(principal, ref, 'members.manage');
    return this.store.transaction(async (repos) => {
      const m = await this.member(repos, view.team.id, userId);
      if ((m.role === 'owner' || role === 'owner') && !can(view.memberRole, 'owners.manage')) {
        fail('forbidden', 'Only an owner can grant or revoke the owner role.', {
          details: { role: view.memberRole },
        });
      }
      if (m.role === 'owner' && role !== 'owner') await this.ensureAnotherOwner(repos, view.team.id);
      const updated = { ...m, role, updated_at: this.now() };
      await repos.teamMembers.setRole(view.team.id, userId, role, updated.updated_at);
      if (m.role !== role) {
        await this.eventLog.record(repos, {
          tenantId: view.team.id,
          actor: actorFromPrincipal(principal),
          code: 'team.member_role_updated',
          message: `Member ${userId}'s role changed from ${m.role} to ${role}.`,
          details: { teamId: view.team.id, userId, from: m.role, to: role },
        });
      }
      return updated;
    });
  }

  /** Removes a member (or lets a member leave). The last owner can't be removed. */
  async removeMember(principal: Principal, ref: string, userId: string): Promise<void> {
    const self = userId === principal.userId;
    const view = await this.authorize(principal, ref, self ? 'team.read' : 'members.manage');
    await this.store.transaction(async (repos) => {
      const m = await this.member(repos, view.team.id, userId);
      if (m.role === 'owner') {
        if (!self && !can(view.memberRole, 'owners.manage'))
          fail('forbidden', 'Only an owner can remove an owner.');
        await this.ensureAnotherOwner(repos, view.team.id);
      }
      await repos.teamMembers.remove(view.team.id, userId);
      await this.eventLog.record(repos, {
        tenantId: view.team.id,
        actor: actorFromPrincipal(principal),
        code: 'team.member_removed',
        message: self ? `Member ${userId} left the team.` : `Member ${userId} was removed from the team.`,
        details: { teamId: view.team.id, userId, role: m.role, left: self },
      });
    });
  }

  private async ensureAnotherOwner(repos: IdentityRepos, teamId: string): Promise<void> {
    if ((await repos.teamMembers.countOwners(teamId)) <= 1) {
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
    return this.store.transaction(async (repos) => {
      const existingMember = await repos.teamMembers.byEmail(view.team.id, email);
      if (existingMember)
        fail('member_already_exists', `${email} is a member of this team already.`, { pointer: '/email' });
      const now = this.clock.now();
      const pending = await repos.teamInvitations.pendingFor(view.team.id, email, now.toISOString());
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
      await repos.teamInvitations.create(inv);
      await this.mailInvitation(repos, view.team, inv, principal);
      return inv;
    });
  }

  /**
   * Sends a pending invitation's e-mail again and gives it a fresh week. Refused when the server
   * sends no mail (nothing would happen) or the invitation was answered or canceled.
   */
  async resendInvitation(principal: Principal, ref: string, invitationId: string): Promise<InvitationRow> {
    const view = await this.authorize(principal, ref, 'members.manage');
    if (!this.mail) fail('service_unavailable', 'This server sends no e-mail.');
    return this.store.transaction(async (repos) => {
      const inv = await repos.teamInvitations.byIdInTeam(invitationId, view.team.id);
      if (!inv) throw new ApiError('not_found', `Invitation ${invitationId} was not found.`);
      const expiresAt = new Date(this.clock.now().getTime() + INVITATION_TTL_MS).toISOString();
      if (inv.status !== 'pending' || !(await repos.teamInvitations.renew(inv.id, expiresAt))) {
        fail('invitation_not_pending', `The invitation is ${inv.status}.`);
      }
      const renewed = { ...inv, expires_at: expiresAt };
      await this.mailInvitation(repos, view.team, renewed, principal);
      return renewed;
    });
  }

  /** Writes the invitation's e-mail into the outbox, in the caller's transaction. */
  private async mailInvitation(
    repos: Repositories,
    team: TeamRow,
    inv: InvitationRow,
    principal: Principal,
  ): Promise<void> {
    if (!this.mail) return;
    const inviter = principal.userId ? await repos.users.byId(principal.userId) : null;
    await this.mail.outbox.queue(
      repos,
      invitationMail({
        tenantId: team.tenant_id,
        to: inv.email,
        teamName: team.name,
        role: inv.role,
        inviterName: inviter?.name ?? null,
        expiresAt: inv.expires_at,
        publicUrl: this.mail.publicUrl(),
        signupOpen: this.mail.signupOpen,
      }),
    );
  }

  async listInvitations(
    principal: Principal,
    ref: string,
    after: string | null,
    n: number,
  ): Promise<InvitationRow[]> {
    const view = await this.authorize(principal, ref, 'members.manage');
    return this.store.repos.teamInvitations.listForTeam(view.team.id, after, n);
  }

  async cancelInvitation(principal: Principal, ref: string, invitationId: string): Promise<InvitationRow> {
    const view = await this.authorize(principal, ref, 'members.manage');
    const inv = await this.store.repos.teamInvitations.byIdInTeam(invitationId, view.team.id);
    if (!inv) throw new ApiError('not_found', `Invitation ${invitationId} was not found.`);
    if (inv.status !== 'pending') fail('invitation_not_pending', `The invitation is ${inv.status}.`);
    const now = this.now();
    await this.store.repos.teamInvitations.setStatus(inv.id, 'canceled', now);
    return { ...inv, status: 'canceled', responded_at: now };
  }

  /** Pending invitations addressed to the signed-in person's e-mail. */
  async myInvitations(
    principal: Principal,
    email: string,
  ): Promise<Array<InvitationRow & { team_name: string; team_slug: string }>> {
    return this.store.repos.teamInvitations.pendingForEmail(email, principal.tenantId, this.now());
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
    return this.store.transaction(async (repos) => {
      const found = await repos.teamInvitations.byId(invitationId);
      if (!found || found.tenant_id !== principal.tenantId) {
        throw new ApiError('not_found', `Invitation ${invitationId} was not found.`);
      }
      const { tenant_id: _tenant, ...inv } = found;
      if (inv.email !== email) {
        fail('invitation_email_mismatch', 'This invitation was sent to another e-mail address.');
      }
      if (inv.status !== 'pending') fail('invitation_not_pending', `The invitation is ${inv.status}.`);
      const now = this.now();
      if (inv.expires_at <= now) fail('invitation_expired', 'The invitation has expired; ask for a new one.');
      const status = accept ? 'accepted' : 'declined';
      await repos.teamInvitations.setStatus(inv.id, status, now);
      if (accept) {
        const exists = await repos.teamMembers.get(inv.team_id, principal.userId!);
        if (!exists) {
          await repos.teamMembers.add({
            team_id: inv.team_id,
            user_id: principal.userId!,
            role: inv.role,
            created_at: now,
            updated_at: now,
          });
          await this.eventLog.record(repos, {
            tenantId: inv.team_id,
            actor: actorFromPrincipal(principal),
            code: 'team.member_added',
            message: `${inv.email} joined the team as ${inv.role}.`,
            details: { teamId: inv.team_id, userId: principal.userId, role: inv.role, invitationId: inv.id },
          });
        }
      }
      return { ...inv, status, responded_at: now };
    });
  }
}
