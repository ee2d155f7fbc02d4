import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PageQuery } from '../../schemas/common.ts';
import {
  CreateWebhookBody,
  RotateWebhookSecretBody,
  UpdateWebhookBody,
  WebhookDeliveryListResponse,
  WebhookDeliveryResponse,
  WebhookListResponse,
  WebhookResponse,
  WebhookWithSecretResponse,
} from '../../schemas/webhooks.ts';
import { principalOf } from '../auth.ts';
import { keysetPage } from '../pagination.ts';
import { send } from '../present.ts';
import { presentDelivery, presentWebhook } from '../presenters/webhooks.ts';
import { addRoute } from '../route.ts';

const WebhookParams = Type.Object({
  webhookId: Type.String({ minLength: 1, description: 'Webhook id (`whk_…`)' }),
});
const DeliveryParams = Type.Object({
  deliveryId: Type.String({ minLength: 1, description: 'Delivery id (`whd_…`)' }),
});
const ListQuery = Type.Object(
  {
    ...PageQuery,
    team: Type.Optional(Type.String({ minLength: 1, description: 'Only this team’s webhooks' })),
  },
  { additionalProperties: false },
);
const DeliveriesQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

// Webhooks are team settings: reading needs `teams:read`, changing them the team-management scope
// `teams:create` (as team updates do); the team role must be owner or admin either way.

/** Signed webhooks of a team and their deliveries (behaviour §14). */
export function webhookRoutes(app: FastifyInstance): void {
  const { webhooks, cursors } = app.services;

  addRoute(app, {
    method: 'POST',
    url: '/v1/webhooks',
    operationId: 'createWebhook',
    summary: 'Create a webhook',
    description:
      'Adds a team webhook: events matching `events` are POSTed to `url` (public https only), signed with the secret in the answer — shown this once. Owners and admins of the team only.',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:create' },
    body: CreateWebhookBody,
    responses: { 201: WebhookWithSecretResponse },
    handler: async (req, reply) => {
      const { webhook, secret } = await webhooks.create(principalOf(req), req.body);
      return send(reply, WebhookWithSecretResponse, { data: { ...presentWebhook(webhook), secret } }, 201);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/webhooks',
    operationId: 'listWebhooks',
    summary: 'List webhooks',
    description: 'The webhooks of every team the caller manages (or of `team`), newest first.',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:read' },
    querystring: ListQuery,
    responses: { 200: WebhookListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const team = req.query.team;
      const page = await keysetPage(
        cursors,
        `webhooks:${team ?? ''}`,
        req.query,
        (after, n) => webhooks.list(p, team, after, n),
        presentWebhook,
      );
      return send(reply, WebhookListResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/webhooks/:webhookId',
    operationId: 'getWebhook',
    summary: 'Get a webhook',
    description: 'The webhook, its status and failure count (never its secret).',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: WebhookParams,
    responses: { 200: WebhookResponse },
    handler: async (req, reply) =>
      send(reply, WebhookResponse, {
        data: presentWebhook(await webhooks.get(principalOf(req), req.params.webhookId)),
      }),
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/webhooks/:webhookId',
    operationId: 'updateWebhook',
    summary: 'Change, re-enable or disable a webhook',
    description:
      '`url`, `events` and `description` are editable; `status: "active"` re-enables a failing or disabled webhook and resets its failure count; `status: "disabled"` stops deliveries.',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: WebhookParams,
    body: UpdateWebhookBody,
    responses: { 200: WebhookResponse },
    handler: async (req, reply) =>
      send(reply, WebhookResponse, {
        data: presentWebhook(await webhooks.update(principalOf(req), req.params.webhookId, req.body)),
      }),
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/webhooks/:webhookId',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    description: 'Removes the webhook and its delivery history; nothing more is sent.',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: WebhookParams,
    responses: { 204: 'Deleted' },
    handler: async (req, reply) => {
      await webhooks.delete(principalOf(req), req.params.webhookId);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/webhooks/:webhookId/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate a webhook’s signing secret',
    description:
      'Answers a new secret, shown once. The previous secret keeps signing for 24 hours (deliveries then carry two `v1` signatures) unless `expireNow` is true.',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: WebhookParams,
    body: RotateWebhookSecretBody,
    responses: { 200: WebhookWithSecretResponse },
    handler: async (req, reply) => {
      const { webhook, secret } = await webhooks.rotateSecret(
        principalOf(req),
        req.params.webhookId,
        req.body ?? {},
      );
      return send(reply, WebhookWithSecretResponse, { data: { ...presentWebhook(webhook), secret } });
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/webhooks/:webhookId/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'List a webhook’s deliveries',
    description: 'Newest first: state, attempts, and what the last attempt saw.',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: WebhookParams,
    querystring: DeliveriesQuery,
    responses: { 200: WebhookDeliveryListResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const id = req.params.webhookId;
      const page = await keysetPage(
        cursors,
        `webhook-deliveries:${id}`,
        req.query,
        (after, n) => webhooks.deliveries(p, id, after, n),
        (row) => presentDelivery(row),
      );
      return send(reply, WebhookDeliveryListResponse, page);
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/v1/webhook-deliveries/:deliveryId',
    operationId: 'getWebhookDelivery',
    summary: 'Get a webhook delivery',
    description: 'The delivery with the event it carries.',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:read' },
    params: DeliveryParams,
    responses: { 200: WebhookDeliveryResponse },
    handler: async (req, reply) =>
      send(reply, WebhookDeliveryResponse, {
        data: presentDelivery(await webhooks.delivery(principalOf(req), req.params.deliveryId), true),
      }),
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/webhook-deliveries/:deliveryId/redeliver',
    operationId: 'redeliverWebhookDelivery',
    summary: 'Send a delivery’s event again',
    description:
      'Queues a new delivery of the same event (same `Service-Event-Id`, new `Service-Delivery-Id`) to the webhook, now. A disabled webhook is `webhook_disabled`.',
    tags: ['Activity'],
    auth: { accept: ['general'], scope: 'teams:create' },
    params: DeliveryParams,
    responses: { 202: WebhookDeliveryResponse },
    handler: async (req, reply) =>
      send(
        reply,
        WebhookDeliveryResponse,
        { data: presentDelivery(await webhooks.redeliver(principalOf(req), req.params.deliveryId), true) },
        202,
      ),
  });
}
