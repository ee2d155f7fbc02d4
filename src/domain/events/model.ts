import type { Executor } from '../../store/repos/index.ts';

/**
 * The seam between the event log and its subscribers (webhooks). The event log's side and the
 * webhooks' side each hold an identical copy of this file until the merge keeps one; keep the shape.
 */
export interface ActivityEvent {
  id: string; // 'evt_' + id (use src/ids.ts style)
  sequence: number; // per-tenant monotonic, starting at 1
  tenantId: string; // the team id owning the space / resource
  spaceId: string | null;
  actor: { type: 'user' | 'api_key' | 'oauth_app' | 'space_key' | 'anonymous' | 'system'; id: string | null };
  code: string; // catalogue code, e.g. 'version.ready', 'channel.promoted'
  message: string; // one human sentence
  details: Record<string, unknown>;
  createdAt: string; // ISO 8601
}

/** Called INSIDE the transaction that wrote the event (same executor), once per event. */
export type EventSubscriber = (tx: Executor, event: ActivityEvent) => Promise<void>;
