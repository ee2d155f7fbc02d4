import type { Clock } from '../../clock.ts';
import { ApiError } from '../../errors/problem.ts';
import type { EventFilter, EventRow } from '../../store/repos/events/events.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import type { DomainEvents } from '../events.ts';
import type { SpaceService } from '../spaces/service.ts';
import type { TeamService } from '../teams/service.ts';
import { AUDIT_FILTER, CATALOGUE, isCatalogueCode } from './catalogue.ts';
import { presentEvent, tenantOfSpace } from './log.ts';
import type { ActivityEvent } from './model.ts';

/** What a feed covers: tenants (and a space), before the caller's own filters. */
export interface FeedScope {
  /** Names the feed in cursors (a cursor of one feed is refused by another). */
  key: string;
  tenantIds: string[];
  spaceId?: string;
  audit?: boolean;
}

export interface FeedQuery {
  code?: string | string[];
  since?: string;
  until?: string;
}

/** `code` filters as given (repeatable, or comma lists) → exact codes and `resource.` prefixes. */
export function parseCodeFilter(code: string | string[] | undefined): {
  codes: string[];
  codePrefixes: string[];
} {
  const items = (Array.isArray(code) ? code : code === undefined ? [] : [code])
    .flatMap((c) => c.split(','))
    .map((c) => c.trim())
    .filter((c) => c.length > 0);
  const codes: string[] = [];
  const codePrefixes: string[] = [];
  for (const c of items) {
    if (c.endsWith('.*') && CATALOGUE[c.slice(0, -2)]) codePrefixes.push(c.slice(0, -1));
    else if (c === '*') continue;
    else if (isCatalogueCode(c)) codes.push(c);
    else {
      throw new ApiError('invalid_event_code', `"${c}" is not an event code or a resource wildcard.`, {
        pointer: '/code',
        details: { in: 'query', code: c },
      });
    }
  }
  return { codes, codePrefixes };
}

function instant(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) {
    throw new ApiError('validation_error', `${name} is not an RFC 3339 date-time.`, {
      pointer: `/${name}`,
      details: { in: 'query' },
    });
  }
  return new Date(t).toISOString();
}

/**
 * Reading the event log: activity feeds (account-wide, a team's, a space's), the team audit log
 * (security events, owners and admins only) and live streams with replay by sequence. Every read is
 * confined to tenants the caller reaches: another team's feed is `not_found`.
 */
export class ActivityService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly spaces: SpaceService,
    private readonly teams: TeamService,
    private readonly events: DomainEvents,
  ) {}

  /** Every team the caller belongs to (narrowed by the credential's own binding). */
  async accountScope(p: Principal): Promise<FeedScope> {
    const tenantIds = (await this.spaces.reachableTeamIds(p)).sort();
    return { key: `account:${p.userId ?? p.credentialId}`, tenantIds };
  }

  async teamScope(p: Principal, teamRef: string, audit = false): Promise<FeedScope> {
    const view = await this.teams.authorize(p, teamRef, audit ? 'members.manage' : 'team.read');
    return { key: `${audit ? 'audit' : 'team'}:${view.team.id}`, tenantIds: [view.team.id], audit };
  }

  async spaceScope(p: Principal, spaceRef: string): Promise<FeedScope> {
    const space = await this.spaces.resolve(p, spaceRef);
    return { key: `space:${space.id}`, tenantIds: [tenantOfSpace(space)], spaceId: space.id };
  }

  /** The filter a feed query reads with (codes checked, times normalised). */
  filterOf(scope: FeedScope, q: FeedQuery): EventFilter {
    const own = parseCodeFilter(q.code);
    const filter: EventFilter = {
      tenantIds: scope.tenantIds,
      spaceId: scope.spaceId,
      since: instant(q.since, 'since'),
      until: instant(q.until, 'until'),
      ...own,
    };
    if (scope.audit) {
      if (own.codes.length || own.codePrefixes.length) {
        // Within the audit log a code filter narrows it: keep what is both.
        const audit = (c: string) =>
          AUDIT_FILTER.codes.includes(c) || AUDIT_FILTER.codePrefixes.some((pre) => c.startsWith(pre));
        filter.codes = own.codes.filter(audit);
        // Two prefixes overlap when one extends the other: the longer is what both match.
        filter.codePrefixes = own.codePrefixes.flatMap((pre) =>
          AUDIT_FILTER.codePrefixes.flatMap((a) =>
            pre.startsWith(a) ? [pre] : a.startsWith(pre) ? [a] : [],
          ),
        );
        filter.codes.push(
          ...AUDIT_FILTER.codes.filter((c) => own.codePrefixes.some((pre) => c.startsWith(pre))),
        );
        if (!filter.codes.length && !filter.codePrefixes.length) filter.tenantIds = [];
      } else {
        filter.codes = AUDIT_FILTER.codes;
        filter.codePrefixes = AUDIT_FILTER.codePrefixes;
      }
    }
    return filter;
  }

  /** Newest first, up to `n`, older than the event `beforeId`. */
  page(filter: EventFilter, beforeId: string | null, n: number): Promise<EventRow[]> {
    return this.store.repos.events.list(filter, beforeId, n);
  }

  present(row: EventRow): ActivityEvent {
    return presentEvent(row);
  }

  /** The tenant whose sequence a stream follows, and the space it narrows to. */
  async streamScope(
    p: Principal,
    kind: 'team' | 'space',
    ref: string,
  ): Promise<{ tenantId: string; spaceId: string | null }> {
    if (kind === 'team') {
      const view = await this.teams.authorize(p, ref, 'team.read');
      return { tenantId: view.team.id, spaceId: null };
    }
    const space = await this.spaces.resolve(p, ref);
    return { tenantId: tenantOfSpace(space), spaceId: space.id };
  }

  /** A tenant's events (of one space, when given) after `sequence`, oldest first. */
  async after(tenantId: string, spaceId: string | null, sequence: number, n = 500): Promise<ActivityEvent[]> {
    return (await this.store.repos.events.after(tenantId, spaceId, sequence, n)).map(presentEvent);
  }

  /** The tenant's newest sequence number (a stream without a replay point starts after it). */
  lastSequence(tenantId: string): Promise<number> {
    return this.store.repos.events.lastSequence(tenantId);
  }

  /** Calls `listener` whenever the tenant's log grew (here or in another instance); returns its removal. */
  onRecorded(tenantId: string, listener: () => void): () => void {
    return this.events.onEventsRecorded((t) => {
      if (t === tenantId) listener();
    });
  }

  now(): Date {
    return this.clock.now();
  }
}
