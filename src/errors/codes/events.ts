import type { CodeTable } from '../catalog.ts';

/** The event log: activity feeds, the audit log and event streams. */
export const eventCodes = {
  invalid_event_code: {
    status: 400,
    summary:
      'A `code` filter is neither a code of the event catalogue (e.g. `version.ready`) nor a resource wildcard (e.g. `version.*`).',
    suggestions: [
      'Use a catalogue code such as `version.ready`, or `version.*` for every event of a resource.',
    ],
  },
  invalid_last_event_id: {
    status: 400,
    summary: '`Last-Event-ID` (or `since`) is not an event sequence number (a non-negative integer).',
  },
} satisfies CodeTable;
