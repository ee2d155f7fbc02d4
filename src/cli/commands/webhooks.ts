import type { Static } from '@sinclair/typebox';
import type { CreateWebhookBody } from '../../schemas/webhooks.ts';
import { unwrap } from '../../sdk/index.ts';
import type { Action } from '../program.ts';
import { confirm, table } from './shared.ts';

const SECRET_NOTE = 'Store the signing secret now: it is not shown again.';

/** Team webhooks: add, list, remove, rotate the secret, list deliveries, redeliver. */
export const webhookActions: Record<string, Action> = {
  async 'webhooks.add'(ctx, [url], o) {
    ctx.requireToken();
    const events = (o.events as string | undefined)
      ?.split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const body: Static<typeof CreateWebhookBody> = {
      url: url!,
      ...(ctx.team ? { team: ctx.team } : {}),
      ...(events?.length ? { events } : {}),
      ...(o.description ? { description: o.description as string } : {}),
    };
    const r = await unwrap(ctx.api.POST('/v1/webhooks', { body }));
    ctx.result(
      r.data,
      () =>
        `Added webhook ${r.data.id} → ${r.data.url} (${r.data.events.join(', ')}).\nSecret: ${r.data.secret}\n${SECRET_NOTE}`,
    );
  },

  async 'webhooks.ls'(ctx) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.GET('/v1/webhooks', {
        params: { query: { limit: 100, ...(ctx.team ? { team: ctx.team } : {}) } },
      }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((w) => [w.id, w.status, String(w.consecutiveFailures), w.events.join(','), w.url]),
            ['ID', 'STATUS', 'FAILURES', 'EVENTS', 'URL'],
          )
        : 'No webhooks. `spaces webhooks add URL` adds one.',
    );
  },

  async 'webhooks.rm'(ctx, [id]) {
    ctx.requireToken();
    await confirm(ctx, `Delete webhook ${id} and its delivery history?`);
    await unwrap(ctx.api.DELETE('/v1/webhooks/{webhookId}', { params: { path: { webhookId: id! } } }));
    ctx.result({ id, removed: true }, () => `Deleted webhook ${id}.`);
  },

  async 'webhooks.rotate'(ctx, [id], o) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.POST('/v1/webhooks/{webhookId}/rotate-secret', {
        params: { path: { webhookId: id! } },
        body: o.expireNow ? { expireNow: true } : {},
      }),
    );
    ctx.result(r.data, () => {
      const old = r.data.previousSecretExpiresAt
        ? `The previous secret also signs until ${r.data.previousSecretExpiresAt}.`
        : 'The previous secret no longer signs.';
      return `New secret: ${r.data.secret}\n${old}\n${SECRET_NOTE}`;
    });
  },

  async 'webhooks.deliveries'(ctx, [id]) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.GET('/v1/webhooks/{webhookId}/deliveries', {
        params: { path: { webhookId: id! }, query: { limit: 50 } },
      }),
    );
    ctx.result(r.data, () =>
      r.data.length
        ? table(
            r.data.map((d) => [
              d.id,
              d.eventCode,
              d.state,
              `${d.attempts}/${d.maxAttempts}`,
              d.lastStatusCode === null ? '-' : String(d.lastStatusCode),
              d.nextAttemptAt ?? '-',
            ]),
            ['ID', 'EVENT', 'STATE', 'ATTEMPTS', 'STATUS', 'NEXT ATTEMPT'],
          )
        : 'No deliveries yet.',
    );
  },

  async 'webhooks.redeliver'(ctx, [deliveryId]) {
    ctx.requireToken();
    const r = await unwrap(
      ctx.api.POST('/v1/webhook-deliveries/{deliveryId}/redeliver', {
        params: { path: { deliveryId: deliveryId! } },
      }),
    );
    ctx.result(r.data, () => `Queued ${r.data.id}: ${r.data.eventCode} (${r.data.eventId}) again.`);
  },
};
