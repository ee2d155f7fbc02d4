import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError, fail, validationError } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { CertificateRow } from '../../store/repos/domains/certificates.ts';
import type { DomainRow, NewDomainRow } from '../../store/repos/domains/domains.ts';
import type { Store } from '../../store/repos/index.ts';
import type { SpaceRow } from '../../store/repos/spaces/spaces.ts';
import type { Principal } from '../auth/principal.ts';
import { actorFromPrincipal, SYSTEM_ACTOR } from '../events/log.ts';
import type { DomainEvents } from '../events.ts';
import type { SpaceService } from '../spaces/service.ts';
import type { TeamService } from '../teams/service.ts';
import { type CheckResult, checkRecords, type DomainRecord, nextCheck, requiredRecords } from './checks.ts';
import { diagnose } from './diagnose.ts';
import type { DnsLookups } from './dns.ts';
import { recordBindingChange, recordDomainEvent, statusEvent } from './events.ts';
import { type DomainName, isApex, normaliseHostname, unicodeHostname } from './hostname.ts';

export type DomainRole = 'standard' | 'redirect';
export type DomainStatus = 'pending' | 'verified' | 'verification_failed' | 'control_lost';
export const REDIRECT_STATUSES = [301, 302, 307, 308] as const;

export interface DomainInput {
  hostname: string;
  team?: string;
  spaceId?: string | null;
  role?: DomainRole;
  redirect?: { target: string; status?: number } | null;
}

export interface DomainPatch {
  spaceId?: string | null;
  role?: DomainRole;
  redirect?: { target: string; status?: number } | null;
}

/** A domain as the API shows it. */
export interface DomainView {
  row: DomainRow;
  /** The domain's certificate, once one was asked for. */
  certificate: CertificateRow | null;
  hostname: string;
  wildcard: boolean;
  apex: boolean;
  records: DomainRecord[];
}

/**
 * A team's custom domains: the inventory (add, list, bind to a space, unbind, delete), and DNS
 * verification — an ownership TXT record at `_spaces-challenge.<host>` proves control, and a routing
 * record (a CNAME to the target, or A/AAAA for an apex) sends visitors here. A check job looks again
 * with back-off until a domain verifies, and keeps looking afterwards: a verified domain whose TXT
 * record is gone loses control (`control_lost`) and is no longer served.
 *
 * Reads and writes are scoped to the teams the credential reaches: another team's domain is a 404,
 * never a hint. Several teams may hold the same hostname, but only one at a time is verified; taking
 * it over needs the new team's own TXT record, and the old team's record gone.
 */
export class DomainService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly teams: TeamService,
    private readonly spaces: SpaceService,
    private readonly dns: DnsLookups,
    private readonly events: DomainEvents,
  ) {
    // A purged space's domains stay in the team's inventory, unbound.
    spaces.purgeHooks.push((repos, spaceId) => repos.domains.unbindSpace(spaceId, this.now()));
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  /**
   * After a binding or a verification changed: each space's `liveUrl` names its primary domain
   * again, and the edge (on every instance) forgets what it knew about the spaces' hosts.
   */
  private async announce(...spaceIds: Array<string | null>): Promise<void> {
    for (const id of new Set(spaceIds)) {
      if (!id) continue;
      await this.store.repos.spaces.setPrimaryDomain(id, await this.store.repos.domains.primaryFor(id));
      this.events.spaceChanged(id);
    }
  }

  private async reachable(p: Principal): Promise<string[]> {
    // A space-bound credential acts on its space, never on a team's inventory.
    if (p.spaceId) return [];
    return this.spaces.reachableTeamIds(p);
  }

  private async own(p: Principal, id: string): Promise<DomainRow> {
    const row = await this.store.repos.domains.byIdInTeams(id, await this.reachable(p));
    if (!row) throw new ApiError('not_found', `Domain ${id} was not found.`);
    return row;
  }

  /** A space of the domain's team that the caller reaches, for binding; anonymous spaces can't. */
  private async bindable(p: Principal, ref: string, teamId: string): Promise<SpaceRow> {
    const space = await this.spaces.resolve(p, ref);
    if (space.team_id !== teamId) {
      throw new ApiError('not_found', `Space ${ref} was not found in the domain's team.`, {
        pointer: '/spaceId',
      });
    }
    if (space.anonymous)
      fail('space_unclaimed', 'Custom domains need a claimed space; claim it into a team first.');
    return space;
  }

  private redirectOf(input: DomainPatch, role: DomainRole): { target: string | null; status: number | null } {
    if (role === 'standard') {
      if (input.redirect) {
        throw validationError(
          'A standard domain serves its space; only a redirect domain has a redirect.',
          '/redirect',
        );
      }
      return { target: null, status: null };
    }
    if (!input.redirect) {
      fail('domain_redirect_invalid', 'A redirect domain needs `redirect.target`.', { pointer: '/redirect' });
    }
    const status = input.redirect.status ?? 308;
    if (!(REDIRECT_STATUSES as readonly number[]).includes(status)) {
      fail('domain_redirect_invalid', `The redirect status must be 301, 302, 307 or 308, not ${status}.`, {
        pointer: '/redirect/status',
      });
    }
    // A custom domain may send its visitors to a managed host too.
    const target = normaliseHostname(input.redirect.target, {
      baseDomain: this.config.baseDomain,
      allowBaseDomain: true,
      allowWildcard: false,
      pointer: '/redirect/target',
    }).ascii;
    return { target, status };
  }

  /**
   * Whether this server can serve wildcard domains: it terminates no TLS (a load balancer in front
   * holds the certificates), or it has a DNS-01 provider for their certificates.
   */
  get wildcardsSupported(): boolean {
    return this.config.httpsPort === null || this.config.rfc2136 !== null;
  }

  /** Refuses a wildcard the team does not allow, or this server could not give a certificate. */
  private async allowWildcard(teamId: string, name: DomainName): Promise<void> {
    if (!name.wildcard) return;
    const settings = await this.store.repos.teamDomainSettings.get(teamId);
    if (!settings?.wildcard_enabled) {
      fail(
        'domain_wildcard_not_enabled',
        `The team does not allow wildcard domains: a team admin turns them on with PATCH /v1/teams/{teamId}/domain-settings {"wildcardEnabled": true}.`,
        { pointer: '/hostname', details: { reason: 'team' } },
      );
    }
    if (!this.wildcardsSupported) {
      fail(
        'domain_wildcard_not_enabled',
        'Wildcard certificates need DNS-01, and this server has no DNS provider configured (SPACES_RFC2136_*).',
        { pointer: '/hostname', details: { reason: 'server' } },
      );
    }
  }

  /** A team's custom-domain settings (defaults when never set). */
  async teamSettings(p: Principal, teamRef: string) {
    const team = (await this.teams.authorize(p, teamRef, 'team.read')).team;
    const row = await this.store.repos.teamDomainSettings.get(team.id);
    return {
      teamId: team.id,
      wildcardEnabled: row?.wildcard_enabled === 1,
      wildcardsSupported: this.wildcardsSupported,
      updatedAt: row?.updated_at ?? null,
    };
  }

  /**
   * Turns wildcard domains on or off for a team (owners and admins). Turning them off refuses new
   * wildcards; the team's existing ones stay.
   */
  async updateTeamSettings(p: Principal, teamRef: string, patch: { wildcardEnabled: boolean }) {
    const team = (await this.teams.authorize(p, teamRef, 'team.update')).team;
    await this.store.repos.teamDomainSettings.put({
      team_id: team.id,
      wildcard_enabled: patch.wildcardEnabled ? 1 : 0,
      updated_at: this.now(),
    });
    return this.teamSettings(p, team.id);
  }

  async create(p: Principal, input: DomainInput): Promise<DomainView> {
    const name = normaliseHostname(input.hostname, {
      baseDomain: this.config.baseDomain,
      allowWildcard: true,
    });
    let teamId: string;
    if (input.team) teamId = (await this.teams.authorize(p, input.team, 'space.manage')).team.id;
    else {
      const teams = await this.reachable(p);
      if (teams.length !== 1) {
        throw validationError(
          'Name the team the domain belongs to: this credential reaches several (or none).',
          '/team',
        );
      }
      teamId = teams[0]!;
    }
    await this.allowWildcard(teamId, name);
    const space = input.spaceId ? await this.bindable(p, input.spaceId, teamId) : null;
    const role = input.role ?? 'standard';
    const redirect = this.redirectOf(input, role);
    const now = this.now();
    const row: NewDomainRow = {
      id: newId('dom'),
      tenant_id: p.tenantId,
      team_id: teamId,
      hostname: name.ascii,
      space_id: space?.id ?? null,
      role,
      redirect_target: redirect.target,
      redirect_status: redirect.status,
      status: 'pending',
      verification_token: randomBytes(18).toString('base64url'),
      // The first check runs at once; the job backs off from there.
      next_check_at: now,
      created_by: p.userId,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.store.transaction(async (repos) => {
        await repos.domains.insert(row);
        const actor = actorFromPrincipal(p);
        await recordDomainEvent(this.events.log, repos, row, actor, 'domain.created', 'added to the team.', {
          role,
        });
        await recordBindingChange(this.events.log, repos, row, actor, null, row.space_id);
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        fail('domain_already_exists', `The team already has ${name.unicode} in its inventory.`, {
          pointer: '/hostname',
        });
      }
      throw err;
    }
    return this.view((await this.store.repos.domains.byId(row.id))!);
  }

  async list(p: Principal, team: string | undefined, after: string | null, n: number): Promise<DomainRow[]> {
    const teams = team
      ? [(await this.teams.authorize(p, team, 'team.read')).team.id]
      : await this.reachable(p);
    return this.store.repos.domains.listInTeams(teams, after, n);
  }

  async get(p: Principal, id: string): Promise<DomainView> {
    return this.view(await this.own(p, id));
  }

  async listForSpace(p: Principal, spaceRef: string): Promise<DomainView[]> {
    const space = await this.spaces.resolve(p, spaceRef);
    const rows = await this.store.repos.domains.listForSpace(space.id);
    return Promise.all(rows.map((r) => this.view(r, space)));
  }

  async update(p: Principal, id: string, patch: DomainPatch): Promise<DomainView> {
    const row = await this.own(p, id);
    await this.teams.authorize(p, row.team_id, 'space.manage');
    const role = patch.role ?? (row.role as DomainRole);
    const redirect =
      patch.role === undefined && patch.redirect === undefined
        ? { target: row.redirect_target, status: row.redirect_status }
        : this.redirectOf(
            {
              redirect:
                patch.redirect === undefined && row.redirect_target
                  ? { target: row.redirect_target, status: row.redirect_status ?? 308 }
                  : patch.redirect,
            },
            role,
          );
    let spaceId = row.space_id;
    if (patch.spaceId !== undefined) {
      spaceId = patch.spaceId === null ? null : (await this.bindable(p, patch.spaceId, row.team_id)).id;
    }
    await this.store.transaction(async (repos) => {
      await repos.domains.updateBinding(row.id, {
        space_id: spaceId,
        role,
        redirect_target: redirect.target,
        redirect_status: redirect.status,
        updated_at: this.now(),
      });
      await recordBindingChange(this.events.log, repos, row, actorFromPrincipal(p), row.space_id, spaceId);
    });
    await this.announce(row.space_id, spaceId);
    return this.view((await this.store.repos.domains.byId(row.id))!);
  }

  async delete(p: Principal, id: string): Promise<void> {
    const row = await this.own(p, id);
    await this.teams.authorize(p, row.team_id, 'space.manage');
    const deleted = await this.store.transaction(async (repos) => {
      if (!(await repos.domains.deleteUnbound(row.id))) return false;
      await recordDomainEvent(
        this.events.log,
        repos,
        row,
        actorFromPrincipal(p),
        'domain.deleted',
        'deleted.',
      );
      return true;
    });
    if (!deleted) {
      fail(
        'domain_bound',
        `${unicodeHostname(row.hostname)} is bound to a space; unbind it first (spaceId: null).`,
        {
          details: { spaceId: row.space_id },
        },
      );
    }
  }

  /** Checks the domain's DNS now and records what was seen; answers the domain with its new status. */
  async verify(p: Principal, id: string): Promise<DomainView> {
    const row = await this.own(p, id);
    await this.teams.authorize(p, row.team_id, 'space.manage');
    const result = await this.check(row);
    if (result.conflict) {
      fail(
        'domain_in_use',
        `Another team has verified ${unicodeHostname(row.hostname)} and its ownership record is still in DNS.`,
        { details: { record: result.records[0]?.name } },
      );
    }
    return this.view((await this.store.repos.domains.byId(row.id))!);
  }

  /**
   * Would `hostname` be accepted for the team? The normalised name and the records it would need
   * (the TXT value is made when the domain is added), or the same problem `create` would answer.
   */
  async preflight(p: Principal, teamRef: string, hostname: string) {
    const team = (await this.teams.authorize(p, teamRef, 'team.read')).team;
    const name = normaliseHostname(hostname, { baseDomain: this.config.baseDomain, allowWildcard: true });
    await this.allowWildcard(team.id, name);
    const existing = await this.store.repos.domains.byTeamAndHostname(team.id, name.ascii);
    const records = requiredRecords(
      { hostname: name.ascii, verification_token: '<made when the domain is added>' },
      {
        target: this.config.domainTarget,
        addresses: this.config.domainAddresses,
        apex: name.apex,
        dns01Zones: this.dns01Zones,
      },
    );
    return { name, existingId: existing?.id ?? null, records };
  }

  /** Queues a DNS check of a team's domain now (the job runs within a minute); a failed one is pending again. */
  async queueCheck(p: Principal, teamRef: string, id: string): Promise<DomainView> {
    const team = (await this.teams.authorize(p, teamRef, 'space.manage')).team;
    const row = await this.own(p, id);
    if (row.team_id !== team.id)
      throw new ApiError('not_found', `Domain ${id} was not found in team ${teamRef}.`);
    await this.store.repos.domains.queueCheck(row.id, this.now());
    return this.view((await this.store.repos.domains.byId(row.id))!);
  }

  /** A bound domain of a space, for the space-scoped routes. */
  async ofSpace(p: Principal, spaceRef: string, id: string): Promise<DomainView> {
    const space = await this.spaces.resolve(p, spaceRef);
    const row = await this.own(p, id);
    if (row.space_id !== space.id)
      throw new ApiError('not_found', `Domain ${id} is not bound to space ${spaceRef}.`);
    return this.view(row, space);
  }

  /** A bound domain with what it still waits for before it is served (see diagnose.ts). */
  async diagnostics(p: Principal, spaceRef: string, id: string) {
    const view = await this.ofSpace(p, spaceRef, id);
    return { view, ...diagnose(view, this.config.httpsPort !== null) };
  }

  /**
   * Asks for the domain's certificate again now (`ssl/retry`): a failed order's back-off is cut
   * short; the job picks it up within a minute. Only verified domains get certificates.
   */
  async retryCertificate(p: Principal, spaceRef: string, id: string): Promise<DomainView> {
    const v = await this.ofSpace(p, spaceRef, id);
    await this.teams.authorize(p, v.row.team_id, 'space.manage');
    if (v.row.status !== 'verified') {
      fail(
        'verification_required',
        `${v.hostname} is not verified: create its ownership record and verify it first.`,
      );
    }
    await this.store.repos.certificates.retryNow(v.row.hostname, this.now());
    return this.view(v.row);
  }

  /** The check job: every domain whose next check is due. */
  async checkDue(now: Date = this.clock.now()): Promise<number> {
    const due = await this.store.repos.domains.due(now.toISOString(), 100);
    for (const row of due) await this.check(row);
    return due.length;
  }

  private async targetSpace(row: DomainRow): Promise<SpaceRow | null> {
    return row.space_id ? this.store.repos.spaces.byId(row.space_id) : null;
  }

  /** The DNS-01 provider's zones when this server orders wildcard certificates itself. */
  private get dns01Zones(): readonly string[] | null {
    return this.config.httpsPort !== null ? (this.config.rfc2136?.zones ?? null) : null;
  }

  private required(row: DomainRow, space: SpaceRow | null) {
    return requiredRecords(row, {
      target: this.config.domainTarget ?? (space ? this.spaces.hostnameOf(space.public_name) : null),
      addresses: this.config.domainAddresses,
      apex: isApex(row.hostname),
      dns01Zones: this.dns01Zones,
    });
  }

  /** Looks at DNS for one domain and moves its status; a takeover marks the old holder's row lost. */
  private async check(row: DomainRow): Promise<CheckResult & { conflict: boolean }> {
    const required = this.required(row, await this.targetSpace(row));
    const result = await checkRecords(this.dns, required);
    const now = this.now();
    const ownership = result.records[0]!;
    let status = row.status as DomainStatus;
    let failures = row.check_failures;
    let verifiedAt = row.verified_at;
    let conflict = false;
    if (ownership.state === 'ok') {
      const others = await this.store.repos.domains.verifiedElsewhere(row.hostname, row.team_id);
      const stillHeld = others.filter((o) =>
        ownership.seen.includes(`spaces-verify=${o.verification_token}`),
      );
      if (stillHeld.length) {
        conflict = true;
        failures += 1;
      } else {
        await this.store.transaction(async (repos) => {
          for (const o of others) {
            await repos.domains.markControlLost(o.id, now);
            const message = 'another team proved control of it.';
            await recordDomainEvent(this.events.log, repos, o, SYSTEM_ACTOR, 'domain.control_lost', message);
          }
        });
        await this.announce(...others.map((o) => o.space_id));
        if (status !== 'verified') verifiedAt = now;
        status = 'verified';
        failures = 0;
      }
    } else if (ownership.state === 'unknown') {
      failures += 1;
    } else {
      failures += 1;
      if (status === 'verified') {
        status = 'control_lost';
        verifiedAt = null;
      } else if (status === 'pending' && failures >= MAX_PENDING_FAILURES) status = 'verification_failed';
    }
    await this.store.transaction(async (repos) => {
      await repos.domains.recordCheck(row.id, {
        status,
        last_check: JSON.stringify({
          at: now,
          records: result.records.map((r) => ({ state: r.state, seen: r.seen })),
        }),
        checked_at: now,
        next_check_at: nextCheck(status, failures, this.clock.now()),
        check_failures: failures,
        verified_at: verifiedAt,
        updated_at: now,
      });
      const code = status !== row.status ? statusEvent(status) : null;
      if (code) {
        const message = `${status.replace('_', ' ')} (DNS check).`;
        await recordDomainEvent(this.events.log, repos, row, SYSTEM_ACTOR, code, message, { status });
      }
    });
    if (status !== row.status) await this.announce(row.space_id);
    return { ...result, conflict };
  }

  async view(row: DomainRow, space?: SpaceRow | null): Promise<DomainView> {
    const required = this.required(row, space === undefined ? await this.targetSpace(row) : space);
    const seen = row.last_check
      ? (JSON.parse(row.last_check) as { records: Array<{ state: DomainRecord['state']; seen: string[] }> })
          .records
      : [];
    const records = required.map((r, i) => ({
      ...r,
      state: seen[i]?.state ?? ('unchecked' as const),
      seen: seen[i]?.seen ?? [],
    }));
    return {
      row,
      certificate: await this.store.repos.certificates.byHostname(row.hostname),
      hostname: unicodeHostname(row.hostname),
      wildcard: row.hostname.startsWith('*.'),
      apex: isApex(row.hostname),
      records,
    };
  }
}

/** Checks in a row after which a domain that never verified stops being checked on its own. */
export const MAX_PENDING_FAILURES = 30;
