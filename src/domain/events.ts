import { EventEmitter } from 'node:events';

import { type Clock, systemClock } from '../clock.ts';
import type { ChangeKind } from '../store/change-feed.ts';
import { EventLog } from './events/log.ts';

/**
 * Notifications between areas. `space.changed` tells caches (the site edge) that something a site
 * depends on moved: settings, channels, hostnames, state; `team-tags.changed` that a team's tag
 * graph did. Each is emitted in this process at once and, through `outbound`, announced to the
 * other instances on the same database (their change feed calls `applyRemote`, which only emits
 * locally: nothing echoes back). `log` is the event log (outbox) every area records its catalogue
 * events in, inside the change's transaction (src/domain/events/log.ts); `events.changed` says a
 * tenant's log grew.
 */
export class DomainEvents {
  private readonly emitter = new EventEmitter();
  private outbound: ((kind: ChangeKind, subject: string) => void) | null = null;

  readonly log: EventLog;

  constructor(clock: Clock = systemClock) {
    this.log = new EventLog(clock, this);
    // SSE streams listen too (one listener per open stream).
    this.emitter.setMaxListeners(0);
  }

  /** Sends every change made here to the other instances too (see store/change-feed.ts). */
  announceTo(outbound: (kind: ChangeKind, subject: string) => void): void {
    this.outbound = outbound;
  }

  /** A change another instance made: emitted here only. */
  applyRemote(kind: ChangeKind, subject: string): void {
    this.emitter.emit(`${kind}.changed`, subject);
  }

  spaceChanged(spaceId: string): void {
    this.emitter.emit('space.changed', spaceId);
    this.outbound?.('space', spaceId);
  }

  teamTagsChanged(teamId: string): void {
    this.emitter.emit('team-tags.changed', teamId);
    this.outbound?.('team-tags', teamId);
  }

  /** A tenant's event log grew (after the commit): SSE streams read what is new. */
  eventsRecorded(tenantId: string): void {
    this.emitter.emit('events.changed', tenantId);
    this.outbound?.('events', tenantId);
  }

  /** Open listeners of `events.changed` (one per open event stream; tests check none leak). */
  eventListenerCount(): number {
    return this.emitter.listenerCount('events.changed');
  }

  onEventsRecorded(listener: (tenantId: string) => void): () => void {
    this.emitter.on('events.changed', listener);
    return () => this.emitter.off('events.changed', listener);
  }

  onTeamTagsChanged(listener: (teamId: string) => void): () => void {
    this.emitter.on('team-tags.changed', listener);
    return () => this.emitter.off('team-tags.changed', listener);
  }

  onSpaceChanged(listener: (spaceId: string) => void): () => void {
    this.emitter.on('space.changed', listener);
    return () => this.emitter.off('space.changed', listener);
  }
}
