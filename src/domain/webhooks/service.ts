import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import { ApiError, fail, validationError } from '../../errors/problem.ts';
import { newId } from '../../ids.ts';
import { type OutboundPolicy, type Resolver, refusedUrlReason } from '../../net/outbound.ts';
import type { Executor, Repositories, Store } from '../../store/repos/index.ts';
import type { WebhookDeliveryRow } from '../../store/repos/webhooks/deliveries.ts';
import type { WebhookPatch, WebhookRow } from '../../store/repos/webhooks/webhooks.ts';
import type { Principal } from '../auth/principal.ts';
import type { ActivityEvent } from '../events/model.ts';
import type { SecretBox } from '../publishing/secrets.ts';
import type { SpaceService } from '../spaces/service.ts';
import type { TeamService } from '../teams/service.ts';
import { MAX_EVENT_FILTERS, unknownFilterIndex } from './catalogue.ts';
import { newDeliveryRow, secretAad } from './delivery.ts';
import { type EmitEvent, type EnqueueDelivery, SECRET_OVERLAP_MS } from './model.ts';

export interface WebhookInput {
  team?: string;
  url: string;
  events?: string[];
  description?: string | null;
}

export interface WebhookUpdate {
  url?: string;
  events?: string[];
  description?: string | null;
  status?: 'active' | 'disabled';
}

export interface WebhookServiceDeps {
  store: Store;
  clock: Clock;
  box: SecretBox;
  teams: TeamService;
  spaces: SpaceService;
  policy: OutboundPolicy;
  emit: EmitEvent;
  enqueue: EnqueueDelivery;
  resolve?: Resolver;
}

/** A webhook with its secret in clear: only when it was just made (create, rotate-secret). */
export interface WebhookWithSecret {
  webhook: WebhookRow;
  secret: string;
}

const MAX_URL_LENGTH = 2048;

function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}

/** The actor an event names for a principal. */
export function actorOf(p: Principal): ActivityEvent['actor'] {
  switch (p.kind) {
    case 'session':
      return { type: 'user', id: p.userId };
    case 'oauth':
    case 'client':
      return { type: 'oauth_app', id: p.clientId ?? p.credentialId };
    case 'space_key':
      return { type: 'space_key', id: p.credentialId };
    default:
      return { type: 'api_key', id: p.credentialId };
  }
}

/**
 * Team webhooks: their targets (public https, checked when set and again at each delivery), event
 * filters, signing secrets (sealed; shown once) and deliveries. Owners and admins of the team manage
 * them; anyone else in the team is refused (403), anyone outside sees 404.
 */
export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  private async reachable(p: Principal): Promise<string[]> {
    if (p.spaceId) return []; // a space-bound credential acts on its space, never on a team's hooks
    return this.deps.spaces.reachableTeamIds(p);
  }

  private async own(p: Principal, id: string): Promise<WebhookRow> {
    const row = await this.deps.store.repos.webhooks.byIdInTeams(id, await this.reachable(p));
    if (!row) throw new ApiError('not_found', `Webhook ${id} was not found.`);
    await this.deps.teams.authorize(p, row.team_id, 'team.update');
    return row;
  }

  private async checkUrl(raw: string): Promise<string> {
    if (raw.length > MAX_URL_LENGTH) {
      throw validationError(`The URL is longer than ${MAX_URL_LENGTH} characters.`, '/url');
    }
    const reason = await refusedUrlReason(raw, this.deps.policy, this.deps.resolve);
    if (reason) {
      throw new ApiError('webhook_url_refused', `The webhook URL is refused: ${reason}.`, {
        pointer: '/url',
        details: { url: raw },
      });
    }
    return new URL(raw).href;
  }

  private checkEvents(events: string[] | undefined): string[] {
    if (events === undefined) return ['*'];
    if (events.length === 0 || events.length > MAX_EVENT_FILTERS) {
      fail(
        'invalid_webhook_events',
        `Name between 1 and ${MAX_EVENT_FILTERS} event filters, or leave \`events\` out to receive every event.`,
        { pointer: '/events' },
      );
    }
    const bad = unknownFilterIndex(events);
    if (bad >= 0) {
      fail(
        'invalid_webhook_events',
        `"${events[bad]}" is not an event of the catalogue, nor \`*\` or \`resource.*\`.`,
        {
          pointer: `/events/${bad}`,
          details: { event: events[bad] },
        },
      );
    }
    return [...new Set(events)];
  }

  private event(
    p: Principal,
    row: WebhookRow,
    code: string,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    return {
      tenantId: row.team_id,
      spaceId: null,
      actor: actorOf(p),
      code,
      message,
      details: { webhookId: row.id, url: row.url, ...details },
    };
  }

  private transaction<T>(fn: (r: Repositories, tx: Executor) => Promise<T>): Promise<T> {
    return this.deps.store.transaction(fn);
  }

  async create(p: Principal, input: WebhookInput): Promise<WebhookWithSecret> {
    let teamId: string;
    if (input.team) teamId = (await this.deps.teams.authorize(p, input.team, 'team.update')).team.id;
    else {
      const teams = await this.reachable(p);
      if (teams.length !== 1) {
        throw validationError(
          'Name the team the webhook belongs to: this credential reaches several (or none).',
          '/team',
        );
      }
      teamId = (await this.deps.teams.authorize(p, teams[0]!, 'team.update')).team.id;
    }
    const events = this.checkEvents(input.events);
    const url = await this.checkUrl(input.url);
    const id = newId('whk');
    const secret = newSecret();
    const now = this.now();
    const row: WebhookRow = {
      id,
      tenant_id: p.tenantId,
      team_id: teamId,
      url,
      description: input.description ?? null,
      events: JSON.stringify(events),
      status: 'active',
      consecutive_failures: 0,
      secret_sealed: this.deps.box.seal(secret, secretAad(id)),
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      disabled_reason: null,
      created_by: p.userId,
      created_at: now,
      updated_at: now,
    };
    await this.transaction(async (r, tx) => {
      await r.webhooks.insert(row);
      await this.deps.emit(
        tx,
        this.event(p, row, 'webhook.created', `Webhook ${id} was created for ${url}.`, { events }),
      );
    });
    return { webhook: row, secret };
  }

  async list(p: Principal, team: string | undefined, after: string | null, n: number): Promise<WebhookRow[]> {
    const teams = team
      ? [(await this.deps.teams.authorize(p, team, 'team.update')).team.id]
      : await this.manageable(p);
    return this.deps.store.repos.webhooks.listInTeams(teams, after, n);
  }

  /** The reachable teams where the caller may manage webhooks (owner or admin). */
  private async manageable(p: Principal): Promise<string[]> {
    const out: string[] = [];
    for (const id of await this.reachable(p)) {
      const ok = await this.deps.teams.authorize(p, id, 'team.update').then(
        () => true,
        () => false,
      );
      if (ok) out.push(id);
    }
    return out;
  }

  get(p: Principal, id: string): Promise<WebhookRow> {
    return this.own(p, id);
  }

  async update(p: Principal, id: string, patch: WebhookUpdate): Promise<WebhookRow> {
    const row = await this.own(p, id);
    const set: WebhookPatch = { updated_at: this.now() };
    const changed: string[] = [];
    if (patch.url !== undefined) {
      set.url = await this.checkUrl(patch.url);
      changed.push('url');
    }
    if (patch.events !== undefined) {
      set.events = JSON.stringify(this.checkEvents(patch.events));
      changed.push('events');
    }
    if (patch.description !== undefined) {
      set.description = patch.description;
      changed.push('description');
    }
    const enabling = patch.status === 'active' && row.status !== 'active';
    const disabling = patch.status === 'disabled' && row.status !== 'disabled';
    if (enabling) {
      set.status = 'active';
      set.consecutive_failures = 0;
      set.disabled_reason = null;
      changed.push('status');
    }
    if (disabling) {
      set.status = 'disabled';
      set.disabled_reason = 'manual';
      changed.push('status');
    }
    await this.transaction(async (r, tx) => {
      await r.webhooks.update(id, set);
      const after = (await r.webhooks.byId(id))!;
      if (disabling) {
        await this.deps.emit(
          tx,
          this.event(p, after, 'webhook.disabled', `Webhook ${id} was disabled.`, { reason: 'manual' }),
        );
      }
      if (changed.length > 0 && !(disabling && changed.length === 1)) {
        await this.deps.emit(
          tx,
          this.event(p, after, 'webhook.updated', `Webhook ${id} was updated (${changed.join(', ')}).`, {
            changed,
          }),
        );
      }
    });
    return (await this.deps.store.repos.webhooks.byId(id))!;
  }

  async delete(p: Principal, id: string): Promise<void> {
    const row = await this.own(p, id);
    await this.transaction(async (r, tx) => {
      await r.webhooks.delete(id);
      await this.deps.emit(tx, this.event(p, row, 'webhook.deleted', `Webhook ${id} was deleted.`));
    });
  }

  /**
   * A new signing secret, shown once. The previous one keeps signing (a second `v1`) for 24 hours,
   * or stops at once with `expireNow`. Rotating again during an overlap drops the oldest secret.
   */
  async rotateSecret(p: Principal, id: string, options: { expireNow?: boolean }): Promise<WebhookWithSecret> {
    const row = await this.own(p, id);
    const secret = newSecret();
    const now = this.deps.clock.now();
    const expires = options.expireNow ? null : new Date(now.getTime() + SECRET_OVERLAP_MS).toISOString();
    await this.transaction(async (r, tx) => {
      await r.webhooks.update(id, {
        secret_sealed: this.deps.box.seal(secret, secretAad(id)),
        previous_secret_sealed: expires ? row.secret_sealed : null,
        previous_secret_expires_at: expires,
        updated_at: now.toISOString(),
      });
      await this.deps.emit(
        tx,
        this.event(p, row, 'webhook.secret_rotated', `Webhook ${id} has a new signing secret.`, {
          previousSecretExpiresAt: expires,
        }),
      );
    });
    return { webhook: (await this.deps.store.repos.webhooks.byId(id))!, secret };
  }

  async deliveries(p: Principal, id: string, after: string | null, n: number): Promise<WebhookDeliveryRow[]> {
    await this.own(p, id);
    return this.deps.store.repos.webhookDeliveries.listForWebhook(id, after, n);
  }

  async delivery(p: Principal, deliveryId: string): Promise<WebhookDeliveryRow> {
    const row = await this.deps.store.repos.webhookDeliveries.byIdInTeams(
      deliveryId,
      await this.reachable(p),
    );
    if (!row) throw new ApiError('not_found', `Webhook delivery ${deliveryId} was not found.`);
    await this.deps.teams.authorize(p, row.team_id, 'team.update');
    return row;
  }

  /** Sends a delivery's event again, as a new delivery (same event id, so receivers can dedupe). */
  async redeliver(p: Principal, deliveryId: string): Promise<WebhookDeliveryRow> {
    const original = await this.delivery(p, deliveryId);
    const webhook = await this.deps.store.repos.webhooks.byId(original.webhook_id);
    if (!webhook) throw new ApiError('not_found', `Webhook delivery ${deliveryId} was not found.`);
    if (webhook.status === 'disabled') {
      fail('webhook_disabled', `Webhook ${webhook.id} is disabled; re-enable it before redelivering.`);
    }
    const now = this.deps.clock.now();
    const row = newDeliveryRow(
      webhook,
      { id: original.event_id, code: original.event_code },
      original.event,
      now.toISOString(),
      original.id,
    );
    await this.transaction(async (r, tx) => {
      await r.webhookDeliveries.insert(row);
      await this.deps.enqueue(tx, row.id, now);
    });
    return row;
  }
}
