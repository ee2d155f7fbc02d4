import type { DomainRow } from '../../store/repos/domains/domains.ts';
import type { Repositories } from '../../store/repos/index.ts';
import type { Actor, EventLog } from '../events/log.ts';
import { unicodeHostname } from './hostname.ts';

/** The status changes of a check that have an event. */
const STATUS_EVENTS: Record<string, string> = {
  verified: 'domain.verified',
  verification_failed: 'domain.verification_failed',
  control_lost: 'domain.control_lost',
};

/** Records one domain event (the team owns it) in the transaction of its change. */
export function recordDomainEvent(
  eventLog: EventLog,
  repos: Repositories,
  row: Pick<DomainRow, 'id' | 'team_id' | 'hostname'>,
  actor: Actor,
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): Promise<unknown> {
  return eventLog.record(repos, {
    tenantId: row.team_id,
    spaceId: (details.spaceId as string | null | undefined) ?? null,
    actor,
    code,
    message: `${unicodeHostname(row.hostname)}: ${message}`,
    details: { domainId: row.id, hostname: row.hostname, ...details },
  });
}

/** `domain.attached` / `domain.detached` when a domain's space binding changed. */
export async function recordBindingChange(
  eventLog: EventLog,
  repos: Repositories,
  row: Pick<DomainRow, 'id' | 'team_id' | 'hostname'>,
  actor: Actor,
  before: string | null,
  after: string | null,
): Promise<void> {
  if (before === after) return;
  if (before) {
    await recordDomainEvent(eventLog, repos, row, actor, 'domain.detached', `detached from ${before}.`, {
      spaceId: before,
    });
  }
  if (after) {
    await recordDomainEvent(eventLog, repos, row, actor, 'domain.attached', `attached to ${after}.`, {
      spaceId: after,
    });
  }
}

/** The event of a check's status change, if it has one. */
export function statusEvent(status: string): string | null {
  return STATUS_EVENTS[status] ?? null;
}
