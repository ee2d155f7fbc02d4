import type { CodeTable } from '../catalog.ts';

/** Signed webhooks. */
export const webhookCodes = {
  invalid_webhook_events: {
    status: 400,
    summary:
      'An `events` filter names no event of the catalogue: use `*`, an exact code such as `version.ready`, or a resource such as `version.*`.',
  },
  webhook_url_refused: {
    status: 400,
    summary:
      'The webhook URL is not one deliveries may reach: only `https://` to public addresses, unless the server’s `SPACES_WEBHOOK_ALLOW` allows more.',
  },
  webhook_disabled: {
    status: 409,
    summary: 'The webhook is disabled; re-enable it (`PATCH` with `status: "active"`) before redelivering.',
  },
} satisfies CodeTable;
