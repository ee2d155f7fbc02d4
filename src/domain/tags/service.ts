import { type Clock, nowMs } from '../../clock.ts';
import { ApiError } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import type { TagEnvironment } from '../../schemas/tags.ts';
import type { Store } from '../../store/repos/index.ts';
import type { TagReleaseRow } from '../../store/repos/spaces/tag-releases.ts';
import type { TagVersionRepository, TagVersionRow } from '../../store/repos/spaces/tag-versions.ts';
import type { Principal } from '../auth/principal.ts';
import type { DomainEvents } from '../events.ts';
import type { TeamService } from '../teams/service.ts';
import { checkTagGraph, emptyGraph, type TagGraph } from './graph.ts';

export type { TagReleaseRow, TagVersionRow };

export const TAG_VERSION_PREFIX = 'tver';

/** What `If-Match` asked for: any current revision (`*`), or a set of revisions. */
export type Precondition = { any: true } | { any: false; revisions: number[] };

/**
 * Reads `If-Match` for a graph revision. The entity tag is the revision in quotes (`"3"`, as sent in
 * `ETag`); a bare `3` is tolerated. Weak tags (`W/"3"`) never match: If-Match uses strong comparison
 * (RFC 9110 §13.1.1). Returns null when the header is absent or empty.
 */
export function parseIfMatch(header: string | string[] | undefined): Precondition | null {
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (raw === undefined || raw.trim() === '') return null;
  const revisions: number[] = [];
  for (const part of raw.split(',')) {
    const tag = part.trim();
    if (tag === '*') return { any: true };
    const m = /^"?([1-9][0-9]{0,15})"?$/.exec(tag);
    if (m && tag.startsWith('"') === tag.endsWith('"')) revisions.push(Number(m[1]));
  }
  return { any: false, revisions };
}

export const etagOf = (revision: number) => `"${revision}"`;
export const revisionOf = (row: TagVersionRow) => Number(row.graph_revision);

const ACTOR = (p: Principal) => p.userId ?? p.credentialId;

/** Allowed source states of each lifecycle step. */
const TRANSITIONS = {
  submit: { from: ['draft'], to: 'submitted', at: 'submitted_at', by: 'submitted_by' },
  approve: { from: ['submitted'], to: 'approved', at: 'approved_at', by: 'approved_by' },
  abandon: { from: ['draft', 'submitted', 'approved'], to: 'abandoned', at: 'abandoned_at', by: null },
} as const;
export type TagStep = keyof typeof TRANSITIONS;

/**
 * How long the edge may serve a released graph from memory. A publish here, or on another instance
 * of the same PostgreSQL database (told by the change feed), invalidates it at once; the TTL is the
 * backstop for a change whose announcement was lost with the instance that made it.
 */
export const RELEASED_GRAPH_TTL_MS = 60_000;
const RELEASED_GRAPH_CACHE_MAX = 1_000;

/** Team tag versions: drafts with a revisioned graph, a review lifecycle and release pointers. */
export class TagService {
  /**
   * Released graphs by environment and team, read on every HTML page the edge serves (nested maps:
   * a lookup builds no key). Dropped when this or another instance publishes (`team-tags` events).
   */
  private readonly released = new Map<TagEnvironment, Map<string, { at: number; graph: TagGraph | null }>>();
  private releasedCount = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly teams: TeamService,
    private readonly events?: DomainEvents,
  ) {
    events?.onTeamTagsChanged((teamId) => this.forget(teamId));
  }

  /** Drops a team's released graphs from memory (every environment). */
  private forget(teamId: string): void {
    for (const byTeam of this.released.values()) if (byTeam.delete(teamId)) this.releasedCount--;
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private async row(
    versions: TagVersionRepository,
    teamId: string,
    versionId: string,
  ): Promise<TagVersionRow> {
    const row = await versions.byId(teamId, versionId);
    if (!row) throw new ApiError('not_found', `Tag version ${versionId} was not found in this team.`);
    return row;
  }

  async createVersion(
    p: Principal,
    teamRef: string,
    input: { baseVersionId?: string },
  ): Promise<TagVersionRow> {
    const view = await this.teams.authorize(p, teamRef, 'space.manage');
    let graph: TagGraph = emptyGraph();
    if (input.baseVersionId) {
      const base = await this.store.repos.tagVersions.byId(view.team.id, input.baseVersionId);
      if (!base) {
        throw new ApiError('not_found', `Tag version ${input.baseVersionId} was not found in this team.`, {
          pointer: '/baseVersionId',
        });
      }
      graph = JSON.parse(base.graph) as TagGraph;
    }
    const now = this.now();
    const row: TagVersionRow = {
      id: newId(TAG_VERSION_PREFIX, this.clock.now().getTime()),
      team_id: view.team.id,
      status: 'draft',
      base_version_id: input.baseVersionId ?? null,
      graph: JSON.stringify(graph),
      graph_revision: 1,
      tag_count: graph.tags.length,
      trigger_count: graph.triggers.length,
      variable_count: graph.variables.length,
      created_by: ACTOR(p),
      created_at: now,
      updated_at: now,
      submitted_at: null,
      submitted_by: null,
      approved_at: null,
      approved_by: null,
      published_at: null,
      published_by: null,
      abandoned_at: null,
    };
    await this.store.repos.tagVersions.insert(row);
    return row;
  }

  async listVersions(
    p: Principal,
    teamRef: string,
    after: string | null,
    n: number,
  ): Promise<{ teamId: string; rows: TagVersionRow[] }> {
    const view = await this.teams.authorize(p, teamRef, 'team.read');
    return {
      teamId: view.team.id,
      rows: await this.store.repos.tagVersions.listForTeam(view.team.id, after, n),
    };
  }

  async getVersion(p: Principal, teamRef: string, versionId: string): Promise<TagVersionRow> {
    const view = await this.teams.authorize(p, teamRef, 'team.read');
    return this.row(this.store.repos.tagVersions, view.team.id, versionId);
  }

  /**
   * Replaces a draft's graph when the precondition names the current revision. The revision check is
   * part of the UPDATE's WHERE clause, so of two writers holding the same revision exactly one wins.
   */
  async replaceGraph(
    p: Principal,
    teamRef: string,
    versionId: string,
    input: Record<string, unknown>,
    precondition: Precondition | null,
  ): Promise<TagVersionRow> {
    const view = await this.teams.authorize(p, teamRef, 'space.manage');
    const current = await this.row(this.store.repos.tagVersions, view.team.id, versionId);
    const closed = (status: string) =>
      new ApiError('version_closed', `Tag version ${versionId} is ${status}; only drafts can change.`, {
        details: { status },
      });
    if (current.status !== 'draft') throw closed(current.status);
    if (!precondition) {
      throw new ApiError(
        'precondition_required',
        'Send If-Match with the graph revision you read (the ETag of GET …/graph), e.g. If-Match: "1".',
        { details: { current: revisionOf(current) } },
      );
    }
    const stale = (rev: number) =>
      new ApiError(
        'resource_revision_changed',
        `The graph is at revision ${rev}; re-read it and apply your change to that revision.`,
        { details: { current: rev }, facts: { currentRevision: rev } },
      );
    const expected = revisionOf(current);
    if (!precondition.any && !precondition.revisions.includes(expected)) throw stale(expected);

    const graph = checkTagGraph(input);
    const now = this.now();
    const replaced = await this.store.repos.tagVersions.replaceGraph(
      current.id,
      expected,
      {
        graph: JSON.stringify(graph),
        tag_count: graph.tags.length,
        trigger_count: graph.triggers.length,
        variable_count: graph.variables.length,
      },
      now,
    );
    const after = await this.row(this.store.repos.tagVersions, view.team.id, versionId);
    if (!replaced) {
      if (after.status !== 'draft') throw closed(after.status);
      throw stale(revisionOf(after));
    }
    return after;
  }

  /** submit (draft → submitted), approve (submitted → approved; admins), abandon (any unpublished). */
  async step(p: Principal, teamRef: string, versionId: string, step: TagStep): Promise<TagVersionRow> {
    const view = await this.teams.authorize(p, teamRef, step === 'approve' ? 'team.update' : 'space.manage');
    const t = TRANSITIONS[step];
    const now = this.now();
    const set: Partial<TagVersionRow> = { status: t.to, updated_at: now, [t.at]: now };
    if (t.by) (set as Record<string, unknown>)[t.by] = ACTOR(p);
    const moved = await this.store.repos.tagVersions.transition(view.team.id, versionId, t.from, set);
    const row = await this.row(this.store.repos.tagVersions, view.team.id, versionId);
    if (!moved) {
      throw new ApiError(
        'tag_version_transition_invalid',
        `Can't ${step} tag version ${versionId}: it is ${row.status}, and ${step} needs ${t.from.join(' or ')}.`,
        { details: { status: row.status, step, accepted: [...t.from] } },
      );
    }
    return row;
  }

  /**
   * Points an environment's release at an approved (or already published) version; admins only.
   * Publishing an older published version again is how a release rolls back.
   */
  async publish(
    p: Principal,
    teamRef: string,
    versionId: string,
    environment: TagEnvironment,
  ): Promise<TagVersionRow> {
    const view = await this.teams.authorize(p, teamRef, 'team.update');
    const now = this.now();
    const actor = ACTOR(p);
    const published = await this.store.transaction(async (repos) => {
      const row = await this.row(repos.tagVersions, view.team.id, versionId);
      if (row.status !== 'approved' && row.status !== 'published') {
        throw new ApiError(
          'tag_version_transition_invalid',
          `Can't publish tag version ${versionId}: it is ${row.status}; only approved versions are published.`,
          { details: { status: row.status, step: 'publish', accepted: ['approved', 'published'] } },
        );
      }
      const moved = await repos.tagVersions.transition(view.team.id, row.id, ['approved', 'published'], {
        status: 'published',
        updated_at: now,
        published_at: row.published_at ?? now,
        published_by: row.published_by ?? actor,
      });
      if (!moved) {
        throw new ApiError('tag_version_transition_invalid', `Tag version ${versionId} changed meanwhile.`);
      }
      await repos.tagReleases.point(view.team.id, environment, row.id, now, actor);
      return this.row(repos.tagVersions, view.team.id, versionId);
    });
    this.forget(view.team.id);
    this.events?.teamTagsChanged(view.team.id);
    return published;
  }

  async listReleases(p: Principal, teamRef: string): Promise<TagReleaseRow[]> {
    const view = await this.teams.authorize(p, teamRef, 'team.read');
    return this.releasesOf(view.team.id);
  }

  async getRelease(p: Principal, teamRef: string, environment: TagEnvironment): Promise<TagReleaseRow> {
    const view = await this.teams.authorize(p, teamRef, 'team.read');
    const row = await this.store.repos.tagReleases.byEnvironment(view.team.id, environment);
    if (!row) throw new ApiError('not_found', `The team has no ${environment} tag release yet.`);
    return row;
  }

  /** Release pointers of a team (no authorization: callers have resolved the team already). */
  async releasesOf(teamId: string): Promise<TagReleaseRow[]> {
    const rows = await this.store.repos.tagReleases.listForTeam(teamId);
    const order = ['production', 'preview', 'development'];
    return rows.sort((a, b) => order.indexOf(a.environment) - order.indexOf(b.environment));
  }

  /** The graph an environment's release points at, or null; for the serving edge (no principal). */
  /** The cached released graph while fresh; `undefined` when only {@link releasedGraph} can tell. */
  peekReleasedGraph(teamId: string, environment: TagEnvironment = 'production'): TagGraph | null | undefined {
    const hit = this.released.get(environment)?.get(teamId);
    if (hit && nowMs(this.clock) - hit.at < RELEASED_GRAPH_TTL_MS) return hit.graph;
    return undefined;
  }

  async releasedGraph(teamId: string, environment: TagEnvironment = 'production'): Promise<TagGraph | null> {
    const now = this.clock.now().getTime();
    const hit = this.released.get(environment)?.get(teamId);
    if (hit && now - hit.at < RELEASED_GRAPH_TTL_MS) return hit.graph;
    const json = await this.store.repos.tagReleases.releasedGraph(teamId, environment);
    const graph = json !== null ? (JSON.parse(json) as TagGraph) : null;
    if (this.releasedCount >= RELEASED_GRAPH_CACHE_MAX) {
      this.released.clear();
      this.releasedCount = 0;
    }
    let byTeam = this.released.get(environment);
    if (!byTeam) {
      byTeam = new Map();
      this.released.set(environment, byTeam);
    }
    if (!byTeam.has(teamId)) this.releasedCount++;
    byTeam.set(teamId, { at: now, graph });
    return graph;
  }
}
