/**
 * The shape of one event of the log, shared with webhooks (their body's `event`). Keep it as it is:
 * webhooks code against this exact shape (see the seam in issue 24).
 */
export interface ActivityEvent {
  id: string; // 'evt_' + id (src/ids.ts)
  sequence: number; // per-tenant monotonic, starting at 1
  tenantId: string; // the team owning the space / resource; an unclaimed anonymous space: its space id
  spaceId: string | null;
  actor: { type: 'user' | 'api_key' | 'oauth_app' | 'space_key' | 'anonymous' | 'system'; id: string | null };
  code: string; // catalogue code, e.g. 'version.ready', 'channel.promoted'
  message: string; // one human sentence
  details: Record<string, unknown>;
  createdAt: string; // ISO 8601
}
/** Called INSIDE the transaction that wrote the event (same executor), once per event. */
export type EventSubscriber = (
  tx: import('../../store/repos/index.ts').Executor,
  event: ActivityEvent,
) => Promise<void>;
