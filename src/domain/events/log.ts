import type { Clock } from '../../clock.ts';
import { newId } from '../../ids.ts';
import type { EventRow } from '../../store/repos/events/events.ts';
import type { Repositories } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import type { DomainEvents } from '../events.ts';
import { isCatalogueCode } from './catalogue.ts';
import type { ActivityEvent, EventSubscriber } from './model.ts';

export type Actor = ActivityEvent['actor'];

export interface EventInput {
  tenantId: string;
  spaceId?: string | null;
  actor: Actor;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null };

/** Who did it, as an event names them. */
export function actorFromPrincipal(p: Principal | null | undefined): Actor {
  if (!p) return SYSTEM_ACTOR;
  switch (p.kind) {
    case 'session':
      return { type: 'user', id: p.userId };
    case 'api_key':
      return { type: 'api_key', id: p.credentialId };
    case 'oauth':
    case 'client':
      return { type: 'oauth_app', id: p.clientId ?? p.credentialId };
    case 'machine':
    case 'space_key':
      return { type: 'space_key', id: p.credentialId };
  }
}

/** The tenant an event of a space belongs to: its team; an unclaimed anonymous space is its own. */
export function tenantOfSpace(space: { id: string; team_id: string | null }): string {
  return space.team_id ?? space.id;
}

export function presentEvent(row: EventRow): ActivityEvent {
  return {
    id: row.id,
    sequence: Number(row.sequence),
    tenantId: row.tenant_id,
    spaceId: row.space_id,
    actor: { type: row.actor_type as Actor['type'], id: row.actor_id },
    code: row.code,
    message: row.message,
    details: JSON.parse(row.details) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

/**
 * The event log: every state change of the catalogue records one event here, in the transaction
 * that makes the change (`record(repos, …)` with the transaction's repositories), so the change and
 * its event commit together or not at all. Subscribers (webhook fan-out) run in that transaction
 * too, after the insert; a subscriber that throws rolls the change back. Once the transaction has
 * committed, listeners of this process (and, through the change feed, of other instances) are told
 * that the tenant has new events (the SSE streams).
 *
 * Record an event after the change's other writes: the tenant's counter row stays locked until the
 * commit, and a writer that took another row lock after it could wait in a cycle with one that took
 * that row first (finalize records `version.ready` after the channel move for this reason).
 */
export class EventLog {
  private readonly subscribers: EventSubscriber[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly domainEvents?: DomainEvents,
  ) {}

  /** Adds a subscriber run inside every event's transaction; returns its removal. */
  subscribe(subscriber: EventSubscriber): () => void {
    this.subscribers.push(subscriber);
    return () => {
      const i = this.subscribers.indexOf(subscriber);
      if (i >= 0) this.subscribers.splice(i, 1);
    };
  }

  /** Writes one event in the transaction `repos` is bound to (refuses to write outside one). */
  async record(repos: Repositories, input: EventInput): Promise<ActivityEvent> {
    if (!repos.events.inTransaction) {
      throw new Error(`event ${input.code} must be recorded in the transaction of its change`);
    }
    if (!isCatalogueCode(input.code)) throw new Error(`event code ${input.code} is not in the catalogue`);
    const at = this.clock.now();
    const sequence = await repos.events.nextSequence(input.tenantId);
    const row: EventRow = {
      id: newId('evt', at.getTime()),
      tenant_id: input.tenantId,
      sequence,
      space_id: input.spaceId ?? null,
      actor_type: input.actor.type,
      actor_id: input.actor.id,
      code: input.code,
      message: input.message,
      details: JSON.stringify(input.details ?? {}),
      created_at: at.toISOString(),
    };
    await repos.events.insert(row);
    const event = presentEvent(row);
    for (const s of this.subscribers) await s(repos.events.executor, event);
    const tenantId = input.tenantId;
    repos.events.afterCommit(() => this.domainEvents?.eventsRecorded(tenantId));
    return event;
  }
}
