import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { DB } from '../../store/schema.ts';
import type { Principal } from '../auth/principal.ts';
import type { TeamService } from '../teams/service.ts';
import { settingsDigest } from './digest.ts';
import { checkSlug, generateSlug } from './slugs.ts';

export type SpaceRow = DB['spaces'];
export type OperationRow = DB['operations'];

export const DATA_LOCATIONS = ['auto', 'ams', 'bur', 'dca', 'dfw'] as const;
export type DataLocation = (typeof DATA_LOCATIONS)[number];
export const ACCESS_LEVELS = ['private', 'team', 'public'] as const;
export type Access = (typeof ACCESS_LEVELS)[number];

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
}

export class SpaceService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly teams: TeamService,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** Managed hostname of a public name. */
  hostnameOf(publicName: string): string {
    return `${publicName}.${this.config.baseDomain}`;
  }

  /** The live URL: the primary bound domain once domains exist, else the managed hostname. */
  liveUrlOf(space: SpaceRow): string {
    return `${this.config.siteScheme}://${this.hostnameOf(space.public_name)}${this.config.sitePortSuffix}`;
  }

  /** Team ids the principal can reach: memberships narrowed by the credential's own team binding. */
  async reachableTeamIds(p: Principal, db: Kysely<DB> | Transaction<DB> = this.db): Promise<string[]> {
    if (!p.userId) return [...(p.teamIds ?? [])];
    let q = db.selectFrom('team_members').select('team_id').where('user_id', '=', p.userId);
    if (p.teamIds) q = q.where('team_id', 'in', p.teamIds.length ? (p.teamIds as string[]) : ['']);
    return (await q.execute()).map((r) => r.team_id);
  }

  /** Picks the team a new space goes to: explicit team/principal, else the credential's default team. */
  private async owningTeam(p: Principal, input: CreateSpaceInput): Promise<string> {
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
          throw new ApiError('not_found', `Team ${ref} was not found.`, { pointer });
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

  private async nameTaken(name: string): Promise<boolean> {
    return !!(await this.db
      .selectFrom('space_hostnames')
      .select('name')
      .where('name', '=', name)
      .executeTakeFirst());
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
    const team = teamId
      ? await this.db.selectFrom('teams').selectAll().where('id', '=', teamId).executeTakeFirstOrThrow()
      : null;
    for (let attempt = 0; ; attempt++) {
      const slug = input.slug ?? (await this.freeGeneratedSlug());
      const title = input.title ?? slug;
      const config = input.config ?? null;
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
        await this.db.transaction().execute(async (trx) => {
          await trx
            .insertInto('space_hostnames')
            .values({ name: slug, space_id: row.id, current: 1, created_at: now, retired_at: null })
            .execute();
          await trx.insertInto('spaces').values(row).execute();
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
   * Resolves a space id or slug the principal can reach; 404 otherwise (never 403: the existence of
   * other teams' spaces is not revealed). Space-bound credentials reach only their own space.
   */
  async resolve(p: Principal, ref: string, options: { includeDeleted?: boolean } = {}): Promise<SpaceRow> {
    const notFound = new ApiError('not_found', `Space ${ref} was not found.`);
    let q = this.db
      .selectFrom('spaces')
      .selectAll()
      .where('tenant_id', '=', p.tenantId)
      .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref)]));
    if (!options.includeDeleted) q = q.where('deleted_at', 'is', null);
    const rows = await q.execute();
    const reachable = p.spaceId ? [] : await this.reachableTeamIds(p);
    const visible = rows.filter((s) =>
      p.spaceId ? s.id === p.spaceId : s.team_id !== null && reachable.includes(s.team_id),
    );
    if (visible.length === 0) throw notFound;
    if (visible.length > 1) {
      fail('space_ref_ambiguous', `"${ref}" matches more than one space; use the space id.`, {
        details: { candidates: visible.map((s) => s.id) },
      });
    }
    return visible[0]!;
  }

  /** Spaces the principal can reach, newest first; `team` filters by team id or slug. */
  async list(
    p: Principal,
    teamRef: string | undefined,
    after: string | null,
    n: number,
  ): Promise<SpaceRow[]> {
    let teamIds: string[];
    if (p.spaceId) return [];
    if (teamRef) teamIds = [(await this.teams.resolve(p, teamRef)).team.id];
    else teamIds = await this.reachableTeamIds(p);
    if (teamIds.length === 0) return [];
    let q = this.db
      .selectFrom('spaces')
      .selectAll()
      .where('tenant_id', '=', p.tenantId)
      .where('team_id', 'in', teamIds)
      .where('deleted_at', 'is', null);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /** Loads what the Space presenter needs for many rows in three queries. */
  async details(rows: SpaceRow[]): Promise<SpaceDetails[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const teamIds = [...new Set(rows.map((r) => r.team_id).filter((x): x is string => !!x))];
    const [teams, channels, ops] = await Promise.all([
      teamIds.length
        ? this.db.selectFrom('teams').select(['id', 'slug']).where('id', 'in', teamIds).execute()
        : [],
      this.db.selectFrom('channels').selectAll().where('space_id', 'in', ids).execute(),
      this.db
        .selectFrom('operations')
        .selectAll()
        .where('space_id', 'in', ids)
        .where('status', 'in', ['queued', 'running'])
        .orderBy('id', 'desc')
        .execute(),
    ]);
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
      };
    });
  }

  async detail(row: SpaceRow): Promise<SpaceDetails> {
    return (await this.details([row]))[0]!;
  }
}
