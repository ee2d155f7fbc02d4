import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { Repositories, Store } from '../../store/repos/index.ts';
import type { OperationRow } from '../../store/repos/spaces/operations.ts';
import {
  NEWEST_FIRST,
  type SpaceAfter,
  type SpaceOrder,
  type SpaceRow,
} from '../../store/repos/spaces/spaces.ts';
import type { Principal } from '../auth/principal.ts';
import type { DomainEvents } from '../events.ts';
import type { TeamService } from '../teams/service.ts';
import { spaceEvents } from './events.ts';
import { settingsDigest } from './settings-digest.ts';
import { validateSpaceConfig } from './settings-overlay.ts';
import { checkSlug, generateSlug } from './slugs.ts';

export type { OperationRow, SpaceRow };

export const DATA_LOCATIONS = ['auto', 'ams', 'bur', 'dca', 'dfw'] as const;
export type DataLocation = (typeof DATA_LOCATIONS)[number];
export const ACCESS_LEVELS = ['private', 'team', 'public'] as const;
export type Access = (typeof ACCESS_LEVELS)[number];

export const DELETE_RESTORE_WINDOW_MS = 7 * 24 * 3600 * 1000;

export interface UpdateSpaceInput {
  title?: string;
  /** Replaces the overlay; null clears it. */
  config?: Record<string, unknown> | null;
  noindex?: boolean;
  access?: Access;
  dataLocation?: string;
  baseSettingsDigest?: string;
}

export interface CreateSpaceInput {
  teamId?: string | null;
  principal?: { type: 'team' | 'external'; id: string };
  slug?: string;
  title?: string;
  config?: Record<string, unknown> | null;
  access?: Access;
  dataLocation?: string;
}

/** Everything the presenter needs besides the row. */
export interface SpaceDetails {
  space: SpaceRow;
  teamSlug: string | null;
  channels: Record<string, { versionId: string; updatedAt: string }>;
  operation: OperationRow | null;
  /** The digest of the space's thumbnail (see domain/thumbnails), or null while it has none. */
  thumbnailSha256: string | null;
}

export class SpaceService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly teams: TeamService,
    private readonly events: DomainEvents,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** Managed hostname of a public name. */
  hostnameOf(publicName: string): string {
    return `${publicName}.${this.config.baseDomain}`;
  }

  /** The live URL: the primary bound domain once domains exist, else the managed hostname. */
  /**
   * The space's `git` field (§7): a stored one, else for a team-owned space the service-managed
   * remote (`<publicUrl>/git/<spaceId>.git`, default branch `main`); anonymous spaces have none.
   */
  gitOf(space: SpaceRow): {
    managedBy: 'service' | 'githost';
    remoteUrl: string | null;
    repository: string | null;
    defaultBranch: string | null;
  } | null {
    if (space.git) return JSON.parse(space.git);
    if (space.anonymous === 1 || !space.team_id) return null;
    return {
      managedBy: 'service',
      remoteUrl: `${this.config.publicUrl}/git/${space.id}.git`,
      repository: null,
      defaultBranch: 'main',
    };
  }

  /** The spec's `thumbnail` object for a space whose picture has this digest (the URL changes with it). */
  thumbnailOf(space: SpaceRow, sha256: string) {
    return {
      kind: 'screenshot' as const,
      provider: 'provider-screenshots' as const,
      url: `${this.config.publicUrl}/v1/spaces/${space.id}/thumbnail?v=${sha256.slice(0, 16)}`,
      sourceUrl: `${this.liveUrlOf(space)}/`,
    };
  }

  liveUrlOf(space: SpaceRow): string {
    if (space.primary_domain) {
      // Served over HTTPS once this server terminates TLS (its certificate comes with verification).
      return this.config.httpsPort !== null
        ? `https://${space.primary_domain}${this.config.httpsPortSuffix}`
        : `${this.config.siteScheme}://${space.primary_domain}${this.config.sitePortSuffix}`;
    }
    return `${this.config.siteScheme}://${this.hostnameOf(space.public_name)}${this.config.sitePortSuffix}`;
  }

  /** Team ids the principal can reach: memberships narrowed by the credential's own team binding. */
  async reachableTeamIds(p: Principal): Promise<string[]> {
    if (!p.userId) return [...(p.teamIds ?? [])];
    return this.store.repos.teamMembers.teamIdsOf(p.userId, p.teamIds ?? null);
  }

  /** Picks the team a new space goes to: explicit team/principal, else the credential's default team. */
  private async owningTeam(p: Principal, input: CreateSpaceInput): Promise<string> {
    if (p.spaceId) fail('forbidden', 'This credential is bound to one space; it cannot create spaces.');
    if (input.principal?.type === 'external') {
      fail(
        'feature_unavailable',
        'External principals need an integrator tenant, which this server does not have.',
        {
          pointer: '/principal/type',
        },
      );
    }
    const ref = input.teamId ?? input.principal?.id ?? null;
    if (ref) {
      const pointer = input.teamId ? '/teamId' : '/principal/id';
      try {
        return (await this.teams.authorize(p, ref, 'space.manage')).team.id;
      } catch (err) {
        if (err instanceof ApiError && err.code === 'not_found') {
          throw new ApiError('not_found', err.detail, { ...err.extras, pointer });
        }
        throw err;
      }
    }
    if (p.teamIds?.length === 1) return p.teamIds[0]!;
    const reachable = await this.reachableTeamIds(p);
    if (reachable.length === 0)
      fail('team_required', 'The credential belongs to no team; pass teamId.', { pointer: '/teamId' });
    // The oldest team is the person's own (created with the account).
    return reachable.sort()[0]!;
  }

  /** A free slug close to `base`, for `slug_unavailable` suggestions. */
  async suggestSlug(base: string): Promise<string> {
    for (let i = 2; i < 50; i++) {
      const suffix = `-${i}`;
      const candidate = `${base.slice(0, 55 - suffix.length).replace(/-+$/, '')}${suffix}`;
      if (checkSlug(candidate) === null && !(await this.nameTaken(candidate))) return candidate;
    }
    return this.freeGeneratedSlug();
  }

  private nameTaken(name: string): Promise<boolean> {
    return this.store.repos.spaceHostnames.isTaken(name);
  }

  private async freeGeneratedSlug(): Promise<string> {
    for (;;) {
      const s = generateSlug();
      if (!(await this.nameTaken(s))) return s;
    }
  }

  /** Creates a team-owned space. `extra` lets the anonymous flow set its own fields. */
  async create(p: Principal, input: CreateSpaceInput, extra: Partial<SpaceRow> = {}): Promise<SpaceRow> {
    if (input.slug !== undefined) {
      const problem = checkSlug(input.slug);
      if (problem === 'slug_invalid') {
        fail('slug_invalid', 'A slug is 2..55 lowercase letters and digits joined by single dashes.', {
          pointer: '/slug',
        });
      }
      if (problem === 'slug_reserved')
        fail('slug_reserved', `The slug "${input.slug}" is reserved.`, { pointer: '/slug' });
    }
    if (
      input.dataLocation !== undefined &&
      !(DATA_LOCATIONS as readonly string[]).includes(input.dataLocation)
    ) {
      fail('invalid_data_location', `dataLocation must be one of ${DATA_LOCATIONS.join(', ')}.`, {
        pointer: '/dataLocation',
      });
    }
    const teamId = extra.anonymous ? null : await this.owningTeam(p, input);
    const team = teamId ? await this.store.repos.teams.byId(teamId) : null;
    if (teamId && !team) throw new Error(`team ${teamId} vanished while creating a space`);
    for (let attempt = 0; ; attempt++) {
      const slug = input.slug ?? (await this.freeGeneratedSlug());
      const title = input.title ?? slug;
      const config = input.config ? validateSpaceConfig(input.config, '/config') : null;
      const now = this.now();
      const row: SpaceRow = {
        id: newId('spc'),
        tenant_id: p.tenantId,
        team_id: teamId,
        principal_type: teamId ? 'team' : null,
        principal_id: teamId,
        anonymous: 0,
        slug,
        public_name: slug,
        title,
        status: 'active',
        access: input.access ?? (team?.default_space_access as Access | undefined) ?? 'team',
        data_location: input.dataLocation ?? team?.default_data_location ?? 'auto',
        noindex: 0,
        config: config ? JSON.stringify(config) : null,
        settings_digest: settingsDigest(title, config),
        disabled_at: null,
        disabled_reason: null,
        claim_expires_at: null,
        claimed_at: null,
        purge_after: null,
        expiry_extended_to: null,
        git: null,
        created_by: p.userId,
        created_at: now,
        updated_at: now,
        deleted_at: null,
        ...extra,
      };
      try {
        await this.store.transaction(async (repos) => {
          await repos.spaceHostnames.addCurrent(slug, row.id, now);
          await repos.spaces.insert(row);
          await this.events.log.record(repos, spaceEvents.created(row, p));
        });
        return row;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        if (input.slug !== undefined) {
          const suggestion = await this.suggestSlug(input.slug);
          fail('slug_unavailable', `The slug "${input.slug}" is taken.`, {
            pointer: '/slug',
            details: { slug: input.slug, suggestion },
            suggestions: [`Use the free slug "${suggestion}".`],
          });
        }
        if (attempt > 10) throw err;
      }
    }
  }

  /**
   * Undoes `create` for a space whose first publish failed: nothing of it stays (see
   * `SpaceRepository.deleteIfUnpublished`). A space that did get a ready version is kept. True when it went.
   */
  async discardUnpublished(spaceId: string): Promise<boolean> {
    const gone = await this.store.transaction(async (repos) => {
      const space = await repos.spaces.byId(spaceId);
      if (!space || !(await repos.spaces.deleteIfUnpublished(spaceId))) return false;
      // Its creation (and the failed version) were recorded: so is its removal.
      await this.events.log.record(repos, spaceEvents.discarded(space));
      return true;
    });
    if (gone) this.events.spaceChanged(spaceId);
    return gone;
  }

  /**
   * Resolves a space id or slug the principal can reach; 404 otherwise (never 403: the existence of
   * other teams' spaces is not revealed). Space-bound credentials reach only their own space.
   */
  async resolve(p: Principal, ref: string, options: { includeDeleted?: boolean } = {}): Promise<SpaceRow> {
    const notFound = new ApiError('not_found', `Space ${ref} was not found.`);
    const rows = await this.store.repos.spaces.byRef(p.tenantId, ref, options);
    // A space key reaches its own space; every other credential reaches through a team its person
    // belongs to (and it may be narrowed further to one team, or to one space of it).
    const teamReach = p.kind === 'space_key' ? null : await this.reachableTeamIds(p);
    const visible = rows.filter((s) => {
      if (p.spaceId !== null && s.id !== p.spaceId) return false;
      if (teamReach === null) return p.spaceId !== null;
      return s.team_id !== null && teamReach.includes(s.team_id);
    });
    if (visible.length === 0) {
      const teamIds = [...new Set(rows.map((s) => s.team_id).filter((id): id is string => id !== null))];
      const team = await this.teams.memberTeamOutsideCredential(p, teamIds);
      throw team ? await this.teams.boundElsewhere(p, team, `Space ${ref}`) : notFound;
    }
    if (visible.length > 1) {
      fail('space_ref_ambiguous', `"${ref}" matches more than one space; use the space id.`, {
        details: { candidates: visible.map((s) => s.id) },
      });
    }
    return visible[0]!;
  }

  /**
   * Spaces the principal can reach, in `order` (newest first unless told); `team` filters by team id
   * or slug, `search` by a case-insensitive substring of the title or slug; `deleted`: the restorable
   * deleted ones instead.
   */
  async list(
    p: Principal,
    teamRef: string | undefined,
    after: SpaceAfter | null,
    n: number,
    search?: string,
    deleted = false,
    order: SpaceOrder = NEWEST_FIRST,
  ): Promise<SpaceRow[]> {
    if (p.spaceId) return [];
    const { spaces } = this.store.repos;
    // A person's teams (narrowed to the credential's) are looked up inside the listing's own query.
    if (!teamRef && !search && !deleted && p.userId)
      return spaces.listForMember(p.tenantId, p.userId, p.teamIds ?? null, after, n, order);
    const teamIds = teamRef
      ? [(await this.teams.resolve(p, teamRef)).team.id]
      : await this.reachableTeamIds(p);
    // Deleted ones only while they can still be restored.
    const deletedSince = deleted
      ? new Date(this.clock.now().getTime() - DELETE_RESTORE_WINDOW_MS).toISOString()
      : undefined;
    return spaces.listForTeams(p.tenantId, teamIds, after, n, search || undefined, deletedSince, order);
  }

  /** Loads what the Space presenter needs for many rows in four queries. */
  async details(rows: SpaceRow[]): Promise<SpaceDetails[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const teamIds = [...new Set(rows.map((r) => r.team_id).filter((x): x is string => !!x))];
    const { repos } = this.store;
    const [teams, channels, ops, thumbnails] = await Promise.all([
      repos.teams.namesByIds(teamIds),
      repos.channels.listForSpaces(ids),
      repos.operations.pendingForSpaces(ids),
      repos.spaceThumbnails.withImage(ids),
    ]);
    const thumbnailOf = new Map(thumbnails.map((t) => [t.space_id, t.sha256]));
    const slugOf = new Map(teams.map((t) => [t.id, t.slug]));
    return rows.map((space) => {
      const ch: SpaceDetails['channels'] = {};
      for (const c of channels
        .filter((c) => c.space_id === space.id)
        .sort((a, b) => a.name.localeCompare(b.name))) {
        ch[c.name] = { versionId: c.version_id, updatedAt: c.updated_at };
      }
      return {
        space,
        teamSlug: space.team_id ? (slugOf.get(space.team_id) ?? null) : null,
        channels: ch,
        operation: ops.find((o) => o.space_id === space.id) ?? null,
        thumbnailSha256: thumbnailOf.get(space.id) ?? null,
      };
    });
  }

  async detail(row: SpaceRow): Promise<SpaceDetails> {
    return (await this.details([row]))[0]!;
  }

  private async operation(
    repos: Repositories,
    space: SpaceRow,
    kind: string,
    status: OperationRow['status'],
    extra: Partial<OperationRow> = {},
  ): Promise<OperationRow> {
    const now = this.now();
    const op: OperationRow = {
      id: newId('op'),
      tenant_id: space.tenant_id,
      space_id: space.id,
      kind,
      status,
      resources: JSON.stringify([{ type: 'space', id: space.id }]),
      progress: null,
      diagnostics: null,
      created_at: now,
      updated_at: now,
      finished_at: status === 'succeeded' || status === 'failed' || status === 'canceled' ? now : null,
      ...extra,
    };
    await repos.operations.insert(op);
    return op;
  }

  /**
   * Updates title, overlay, noindex and access. With `baseSettingsDigest` the write is a compare-and-swap
   * on the stored digest: exactly one of two concurrent writers from the same base wins.
   */
  async update(p: Principal, ref: string, input: UpdateSpaceInput): Promise<SpaceRow> {
    const space = await this.resolve(p, ref);
    if (space.status === 'deleting') fail('space_disabled', 'The space is being deleted; restore it first.');
    if (input.dataLocation !== undefined && input.dataLocation !== space.data_location) {
      fail('data_location_immutable', `The data location is fixed at ${space.data_location}.`, {
        pointer: '/dataLocation',
        details: { dataLocation: space.data_location },
      });
    }
    const title = input.title ?? space.title;
    const config =
      input.config !== undefined
        ? input.config === null
          ? null
          : validateSpaceConfig(input.config, '/config')
        : space.config
          ? JSON.parse(space.config)
          : null;
    const digest = settingsDigest(title, config);
    const set: Partial<SpaceRow> = {
      title,
      config: config ? JSON.stringify(config) : null,
      settings_digest: digest,
      updated_at: this.now(),
    };
    if (input.noindex !== undefined) set.noindex = input.noindex ? 1 : 0;
    if (input.access !== undefined) set.access = input.access;
    const event = spaceEvents.configUpdated(space, p, set);
    const written = await this.store.transaction(async (repos) => {
      const ok = await repos.spaces.updateSettings(space.id, set, input.baseSettingsDigest);
      if (ok && event) await this.events.log.record(repos, event);
      return ok;
    });
    if (!written) {
      const current = await this.store.repos.spaces.settingsDigestOf(space.id);
      fail(
        'resource_revision_changed',
        'The settings changed since you read them; re-read the space and apply your change again.',
        {
          pointer: '/baseSettingsDigest',
          details: { current, expected: input.baseSettingsDigest },
        },
      );
    }
    this.events.spaceChanged(space.id);
    return { ...space, ...set };
  }

  /**
   * Renames: a new slug and managed hostname. The previous hostname stays attached to this space for
   * its whole life (it redirects to the current one) and is never given to another space.
   */
  async rename(
    p: Principal,
    ref: string,
    slug: string,
  ): Promise<{ space: SpaceRow; operation: OperationRow }> {
    const result = await this.renameInner(p, ref, slug);
    this.events.spaceChanged(result.space.id);
    return result;
  }

  private async renameInner(
    p: Principal,
    ref: string,
    slug: string,
  ): Promise<{ space: SpaceRow; operation: OperationRow }> {
    const space = await this.resolve(p, ref);
    if (space.status === 'deleting') fail('space_disabled', 'The space is being deleted; restore it first.');
    const problem = checkSlug(slug);
    if (problem === 'slug_invalid') {
      fail('slug_invalid', 'A slug is 2..55 lowercase letters and digits joined by single dashes.', {
        pointer: '/slug',
      });
    }
    if (problem === 'slug_reserved')
      fail('slug_reserved', `The slug "${slug}" is reserved.`, { pointer: '/slug' });
    if (slug === space.slug) {
      return { space, operation: await this.operation(this.store.repos, space, 'rename', 'succeeded') };
    }
    const now = this.now();
    try {
      return await this.store.transaction(async (repos) => {
        const own = await repos.spaceHostnames.byName(slug);
        if (own && own.space_id !== space.id) throw Object.assign(new Error('taken'), { code: '23505' });
        await repos.spaceHostnames.retireCurrent(space.id, now);
        if (own) await repos.spaceHostnames.reinstate(slug, space.id);
        else await repos.spaceHostnames.addCurrent(slug, space.id, now);
        await repos.spaces.rename(space.id, slug, now);
        await this.events.log.record(repos, spaceEvents.slugUpdated(space, p, slug));
        const operation = await this.operation(repos, space, 'rename', 'succeeded', {
          diagnostics: JSON.stringify([
            {
              code: 'space_renamed',
              severity: 'info',
              message: `Renamed from ${space.slug} to ${slug}.`,
              details: { from: space.slug, to: slug },
            },
          ]),
        });
        return { space: { ...space, slug, public_name: slug, updated_at: now }, operation };
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const suggestion = await this.suggestSlug(slug);
      fail('slug_unavailable', `The slug "${slug}" is taken.`, {
        pointer: '/slug',
        details: { slug, suggestion },
      });
    }
  }

  /** Starts deleting: serving stops at once; the purge runs after the restore window. */
  async remove(p: Principal, ref: string): Promise<{ space: SpaceRow; operation: OperationRow }> {
    const space = await this.resolve(p, ref);
    const now = this.now();
    const result = await this.store.transaction(async (repos) => {
      await repos.spaces.softDelete(space.id, now);
      await this.events.log.record(repos, spaceEvents.deleted(space, p));
      const operation = await this.operation(repos, space, 'delete', 'queued', {
        progress: JSON.stringify({ total: 1, completed: 0, failed: 0 }),
      });
      return { space: { ...space, status: 'deleting', deleted_at: now, updated_at: now }, operation };
    });
    this.events.spaceChanged(space.id);
    return result;
  }

  /** Restores a space deleted less than the restore window ago. */
  async restore(p: Principal, ref: string): Promise<SpaceRow> {
    const space = await this.resolve(p, ref, { includeDeleted: true });
    if (!space.deleted_at) fail('space_not_disabled', 'The space is not deleted.');
    const now = this.clock.now();
    if (
      Date.parse(space.deleted_at) + DELETE_RESTORE_WINDOW_MS <= now.getTime() ||
      space.status === 'failed'
    ) {
      fail('space_not_restorable', 'The restore window has passed.');
    }
    const result = await this.store.transaction(async (repos) => {
      const at = now.toISOString();
      await repos.spaces.restore(space.id, at);
      await repos.operations.cancelPendingDeletes(space.id, at);
      await this.operation(repos, space, 'restore', 'succeeded');
      return { ...space, status: 'active', deleted_at: null, updated_at: at };
    });
    this.events.spaceChanged(space.id);
    return result;
  }

  /**
   * Purges spaces deleted longer than the restore window ago: channels and versions go, the row stays
   * as a tombstone so its hostnames are never re-issued. Idempotent; run by the job queue.
   */
  async purgeDeleted(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - DELETE_RESTORE_WINDOW_MS).toISOString();
    const due = await this.store.repos.spaces.deletedBefore(cutoff);
    for (const id of due) {
      await this.store.transaction(async (repos) => {
        const at = now.toISOString();
        await this.purgeRows(repos, id);
        await repos.spaces.markPurged(id, at);
        await repos.operations.succeedPendingDeletes(
          id,
          at,
          JSON.stringify({ total: 1, completed: 1, failed: 0 }),
        );
      });
      this.events.spaceChanged(id);
    }
    return due.length;
  }

  /** Other areas (versions, variables) register what a purge must delete for a space. */
  readonly purgeHooks: Array<(repos: Repositories, spaceId: string) => Promise<void>> = [];

  /** What every purge removes (channels and the hooks' rows), in the purge's transaction. */
  async purgeRows(repos: Repositories, spaceId: string): Promise<void> {
    await repos.channels.deleteForSpace(spaceId);
    for (const hook of this.purgeHooks) await hook(repos, spaceId);
  }

  async listOperations(p: Principal, ref: string, after: string | null, n: number): Promise<OperationRow[]> {
    const space = await this.resolve(p, ref, { includeDeleted: true });
    return this.store.repos.operations.listForSpace(space.id, after, n);
  }

  async getOperation(p: Principal, id: string): Promise<OperationRow> {
    const op = await this.store.repos.operations.byId(p.tenantId, id);
    if (!op?.space_id) throw new ApiError('not_found', `Operation ${id} was not found.`);
    try {
      await this.resolve(p, op.space_id, { includeDeleted: true });
    } catch {
      throw new ApiError('not_found', `Operation ${id} was not found.`);
    }
    return op;
  }
}
