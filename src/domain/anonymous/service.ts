import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId, newToken } from '../../ids.ts';
import type { Store } from '../../store/repos/index.ts';
import type { AccountService, ApiKeyRow } from '../accounts/service.ts';
import type { Principal } from '../auth/principal.ts';
import { hashToken, sameDigest } from '../auth/tokens.ts';
import { actorFromPrincipal, SYSTEM_ACTOR } from '../events/log.ts';
import type { DomainEvents } from '../events.ts';
import type { SpaceRow, SpaceService } from '../spaces/service.ts';
import type { TeamService } from '../teams/service.ts';

export const SPACE_KEY_PREFIX = 'sfc_';
const HOUR = 3600_000;

/** The claim-window rules of anonymous spaces (behaviour reference §2). */
export const ANONYMOUS_RULES = {
  /** A new or updated anonymous space expires this long after its last publish… */
  claimWindowMs: 6 * HOUR,
  /** …but never later than this after its creation. */
  maxLifetimeMs: 30 * 24 * HOUR,
  /** A claim-page visit moves the deadline toward one hour from the visit… */
  visitExtensionMs: HOUR,
  /** …adding at most this much beyond the publish deadline in total. */
  maxExtensionMs: 6 * HOUR,
  /** After expiry the space can still be claimed (and comes back) for this long, then it is purged. */
  recoveryMs: 7 * 24 * HOUR,
};

export interface AnonymousLimits {
  publishesPerHourPerIp: number;
  liveSpacesPerIp: number;
}

/** When an anonymous space stops serving: the publish deadline or a claim-page extension, whichever is later. */
export function effectiveExpiry(s: Pick<SpaceRow, 'claim_expires_at' | 'expiry_extended_to'>): string | null {
  if (!s.claim_expires_at) return null;
  return s.expiry_extended_to && s.expiry_extended_to > s.claim_expires_at
    ? s.expiry_extended_to
    : s.claim_expires_at;
}

/**
 * Anonymous spaces: created without an account, reachable with their space key (`sfc_`), claimable
 * into a team within their window, disabled when it passes and purged after the recovery window.
 */
export class AnonymousService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly spaces: SpaceService,
    private readonly teams: TeamService,
    private readonly accounts: AccountService,
    private readonly mainTenantId: string,
    readonly limits: AnonymousLimits,
    private readonly events?: DomainEvents,
  ) {}

  private now(): Date {
    return this.clock.now();
  }

  /** Creates an anonymous space and its key. The key is returned once; only its hash is kept. */
  async createSpace(
    ip: string | null,
    input: { title?: string } = {},
  ): Promise<{ space: SpaceRow; key: string }> {
    if (ip) {
      const n = await this.store.repos.spaceKeys.countLiveAnonymousForIp(ip);
      if (n >= this.limits.liveSpacesPerIp) {
        fail(
          'anonymous_space_limit_reached',
          `This address already has ${n} unclaimed spaces; claim some or sign in.`,
          {
            details: { limit: this.limits.liveSpacesPerIp },
          },
        );
      }
    }
    const now = this.now();
    const creator: Principal = {
      kind: 'space_key',
      credentialId: 'anonymous',
      tenantId: this.mainTenantId,
      userId: null,
      teamIds: [],
      scopes: new Set(),
      spaceId: null,
    };
    const space = await this.spaces.create(
      creator,
      { title: input.title },
      {
        anonymous: 1,
        team_id: null,
        principal_type: null,
        principal_id: null,
        access: 'private',
        claim_expires_at: new Date(now.getTime() + ANONYMOUS_RULES.claimWindowMs).toISOString(),
      },
    );
    const key = newToken(SPACE_KEY_PREFIX);
    await this.store.repos.spaceKeys.insert({
      id: newId('sk'),
      space_id: space.id,
      token_hash: hashToken(key),
      created_ip: ip,
      created_at: now.toISOString(),
      last_used_at: null,
      revoked_at: null,
    });
    return { space, key };
  }

  /** Whether `token` is a live key of this anonymous space (the `/__/<key>` door on its site). */
  async keyOpensSpace(token: string, spaceId: string): Promise<boolean> {
    if (!token.startsWith(SPACE_KEY_PREFIX)) return false;
    const row = await this.keyRow(token);
    return !!row && row.space_id === spaceId && row.anonymous === 1;
  }

  private async keyRow(token: string) {
    const hash = hashToken(token);
    const row = await this.store.repos.spaceKeys.byHash(hash);
    if (!row || !sameDigest(row.token_hash, hash) || row.revoked_at) return null;
    return row;
  }

  /**
   * Resolver for `sfc_` bearer tokens. Once the space is claimed the key stops working, with an error
   * that says why rather than a bare 401.
   */
  resolveKey = async (token: string): Promise<Principal | null> => {
    const row = await this.keyRow(token);
    if (!row) return null;
    if (row.anonymous !== 1) {
      if (row.continuation === 'available') {
        throw new ApiError(
          'space_claimed_credential_available',
          'The space was claimed, and its owner lets this key be exchanged once for a durable publish key for the space.',
          {
            details: { spaceId: row.space_id },
            next: [
              `curl -X POST -H "Authorization: Bearer <this space key>" ${this.config.publicUrl}/v1/claim/exchange`,
            ],
          },
        );
      }
      throw new ApiError(
        'space_already_claimed',
        'The space was claimed; its key no longer works. Use your account.',
        {
          details: { spaceId: row.space_id },
        },
      );
    }
    const now = this.now();
    if (!row.last_used_at || now.getTime() - Date.parse(row.last_used_at) > 60_000) {
      await this.store.repos.spaceKeys.touchLastUsed(row.key_id, now.toISOString());
    }
    return {
      kind: 'space_key',
      credentialId: row.key_id,
      tenantId: row.tenant_id,
      userId: null,
      teamIds: [],
      scopes: new Set(['spaces:read', 'publish:write', 'spaces:publish']),
      spaceId: row.space_id,
    };
  };

  /**
   * The principal of a space key whether or not its space was claimed since: only the continuation
   * exchange takes it, and it carries no rights of its own (no scopes).
   */
  async resolveClaimedKey(token: string): Promise<Principal> {
    const row = token.startsWith(SPACE_KEY_PREFIX) ? await this.keyRow(token) : null;
    if (!row) {
      throw new ApiError('unauthorized', 'This takes a space key (`sfc_…`) that is known and not rotated.', {
        facts: { challenge: { error: 'invalid_token' } },
      });
    }
    return {
      kind: 'space_key',
      credentialId: row.key_id,
      tenantId: row.tenant_id,
      userId: null,
      teamIds: [],
      scopes: new Set(),
      spaceId: row.space_id,
    };
  }

  /**
   * Agent continuation (behaviour §2): exchanges the key of a claimed space, once and only if the
   * owner allowed it when claiming, for a durable API key that reads and publishes to that space
   * alone. The key belongs to whoever allowed it (listed and revocable with their keys) and is made
   * in the same transaction that spends the voucher, so a failure leaves the voucher unspent.
   */
  async exchange(p: Principal): Promise<{ space: SpaceRow; key: ApiKeyRow; token: string }> {
    return this.store.transaction(async (repos) => {
      const row = await repos.spaceKeys.withSpaceById(p.tenantId, p.credentialId);
      if (!row || row.key_revoked_at) {
        throw new ApiError('unauthorized', 'The space key is unknown or was rotated.');
      }
      const { key_revoked_at: _r, continuation, continuation_user_id: userId, ...space } = row;
      if (space.anonymous === 1) {
        fail('space_unclaimed', 'The space is not claimed yet: its key still publishes to it as it is.');
      }
      if (continuation === 'used') {
        fail(
          'continuation_used',
          'This key was exchanged already; use the publish key that exchange returned.',
        );
      }
      const unavailable = (why: string) =>
        new ApiError('continuation_unavailable', `This key can't continue publishing: ${why}`, {
          details: { spaceId: space.id },
          suggestions: [
            'Ask the space’s owner for a publish key (`POST /v1/account/api-keys` with `space`).',
          ],
        });
      if (continuation !== 'available' || !userId || !space.team_id) {
        throw unavailable('the owner did not allow continuation when claiming the space.');
      }
      if (space.deleted_at) throw unavailable('the space was deleted.');
      // Whoever vouched must still be in the space's team: the key is theirs and acts through them.
      const vouching = (await repos.teamMembers.get(space.team_id, userId)) !== null;
      if (!vouching) throw unavailable('whoever allowed it is no longer a member of the space’s team.');
      const spent = await repos.spaceKeys.spendContinuation(p.credentialId);
      if (!spent) {
        fail(
          'continuation_used',
          'This key was exchanged already; use the publish key that exchange returned.',
        );
      }
      const { key, token } = await this.accounts.issueApiKey(repos, {
        userId,
        tenantId: space.tenant_id,
        teamId: space.team_id,
        spaceId: space.id,
        name: `continuation: ${space.slug}`,
        preset: 'ci_deploy',
        expiresAt: null,
      });
      await repos.spaceKeys.setContinuationKey(p.credentialId, key.id);
      await this.events?.log.record(repos, {
        tenantId: space.team_id,
        spaceId: space.id,
        actor: actorFromPrincipal(p),
        code: 'api_key.created',
        message: `A publish key for ${space.slug} was issued in exchange for its claimed space key.`,
        details: { apiKeyId: key.id, name: key.name, preset: key.preset, hint: key.hint, continuation: true },
      });
      return { space, key, token };
    });
  }

  /** After a successful anonymous update: the deadline moves to a full window from now, within the cap. */
  async touch(spaceId: string): Promise<void> {
    const s = await this.store.repos.spaces.byId(spaceId);
    if (s?.anonymous !== 1 || s.disabled_at) return;
    const now = this.now().getTime();
    const cap = Date.parse(s.created_at) + ANONYMOUS_RULES.maxLifetimeMs;
    const deadline = new Date(Math.min(now + ANONYMOUS_RULES.claimWindowMs, cap)).toISOString();
    await this.store.repos.spaces.setClaimDeadline(spaceId, deadline, new Date(now).toISOString());
  }

  /** The space behind a key, for the claim page; a visit extends the deadline (see ANONYMOUS_RULES). */
  async visit(p: Principal): Promise<SpaceRow> {
    const s = await this.spaceOf(p);
    if (!s.disabled_at && s.claim_expires_at) {
      const now = this.now().getTime();
      const target = now + ANONYMOUS_RULES.visitExtensionMs;
      const cap = Math.min(
        Date.parse(s.claim_expires_at) + ANONYMOUS_RULES.maxExtensionMs,
        Date.parse(s.created_at) + ANONYMOUS_RULES.maxLifetimeMs,
      );
      const current = Date.parse(effectiveExpiry(s)!);
      const next = Math.min(target, cap);
      if (next > current) {
        s.expiry_extended_to = new Date(next).toISOString();
        await this.store.repos.spaces.extendExpiry(s.id, s.expiry_extended_to);
      }
    }
    return s;
  }

  private async spaceOf(p: Principal): Promise<SpaceRow> {
    if (p.kind !== 'space_key' || !p.spaceId)
      fail('forbidden', 'This needs the space key of an anonymous space.');
    const s = await this.store.repos.spaces.byId(p.spaceId);
    if (!s) throw new ApiError('invalid_claim_token', 'The space key does not name a space.');
    return s;
  }

  /**
   * Moves an anonymous space into one of the signed-in person's teams. Exactly one of two concurrent
   * claims wins (the update is conditional on the space still being anonymous).
   */
  async claim(
    p: Principal,
    key: string,
    teamRef: string | undefined,
    options: { allowContinuation?: boolean } = {},
  ): Promise<SpaceRow> {
    if (!p.userId) fail('forbidden', 'Claiming needs a signed-in person.');
    const row = await this.store.repos.spaceKeys.withSpaceByHash(hashToken(key));
    if (!row || row.revoked_at)
      fail('invalid_claim_token', 'The claim key is unknown or was rotated.', { pointer: '/key' });
    const { key_id: keyId, token_hash: _h, revoked_at: _r, ...space } = row;
    if (space.anonymous !== 1) fail('space_already_claimed', 'This space was claimed already.');
    const now = this.now();
    if (space.purge_after && space.purge_after <= now.toISOString()) {
      fail('space_claim_unavailable', 'The recovery window of this space is over.');
    }
    if (space.deleted_at && space.status !== 'deleting')
      fail('space_claim_unavailable', 'This space was purged.');
    let teamId: string;
    try {
      if (teamRef) teamId = (await this.teams.authorize(p, teamRef, 'space.manage')).team.id;
      else {
        const reachable = await this.spaces.reachableTeamIds(p);
        if (!reachable.length) throw new ApiError('not_found', 'no team');
        teamId = reachable.sort()[0]!;
      }
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') {
        fail('claim_target_not_found', `Team ${teamRef ?? '(default)'} was not found.`, { pointer: '/team' });
      }
      throw err;
    }
    const at = now.toISOString();
    const userId = p.userId;
    const claimed = await this.store.transaction(async (repos) => {
      const won = await repos.spaces.claim(space.id, {
        teamId,
        userId,
        at,
        // Claiming inside the recovery window brings an expired space back.
        disabledAt: space.disabled_reason === 'anonymous_expired' ? null : space.disabled_at,
        disabledReason: space.disabled_reason === 'anonymous_expired' ? null : space.disabled_reason,
      });
      if (!won) return false;
      // The claim ends the key's publish rights; with continuation it stays a one-use voucher.
      if (options.allowContinuation) await repos.spaceKeys.allowContinuation(keyId, userId);
      // The claimed space's events belong to the team from now on (its earlier ones stay under the
      // anonymous space's own tenant id: see docs/guides/activity.md).
      await this.events?.log.record(repos, {
        tenantId: teamId,
        spaceId: space.id,
        actor: actorFromPrincipal(p),
        code: 'space.claimed',
        message: `Anonymous space ${space.slug} was claimed.`,
        details: { slug: space.slug, teamId, allowContinuation: options.allowContinuation === true },
      });
      return true;
    });
    if (!claimed) fail('space_already_claimed', 'This space was claimed already.');
    this.events?.spaceChanged(space.id);
    return (await this.store.repos.spaces.byId(space.id))!;
  }

  /** Issues a new key (and claim link) and retires the one used. */
  async rotate(p: Principal): Promise<{ space: SpaceRow; key: string }> {
    const space = await this.spaceOf(p);
    const key = newToken(SPACE_KEY_PREFIX);
    const now = this.now().toISOString();
    await this.store.transaction(async (repos) => {
      await repos.spaceKeys.revoke(p.credentialId, now);
      const old = await repos.spaceKeys.byId(p.credentialId);
      await repos.spaceKeys.insert({
        id: newId('sk'),
        space_id: space.id,
        token_hash: hashToken(key),
        created_ip: old?.created_ip ?? null,
        created_at: now,
        last_used_at: null,
        revoked_at: null,
      });
    });
    return { space, key };
  }

  claimUrl(key: string): string {
    return `${this.config.publicUrl}/claim#${key}`;
  }

  /** Disables anonymous spaces whose window passed. Idempotent; run by the job queue. */
  async expireDue(now: Date): Promise<number> {
    const at = now.toISOString();
    const candidates = await this.store.repos.spaces.anonymousPastDeadline(at);
    let n = 0;
    for (const s of candidates) {
      if ((effectiveExpiry(s) ?? at) > at) continue;
      const purgeAfter = new Date(now.getTime() + ANONYMOUS_RULES.recoveryMs).toISOString();
      const expired = await this.store.transaction(async (repos) => {
        if (!(await repos.spaces.expireAnonymous(s.id, at, purgeAfter))) return false;
        await this.events?.log.record(repos, {
          // Unclaimed: the space is its own tenant (see tenantOfSpace).
          tenantId: s.id,
          spaceId: s.id,
          actor: SYSTEM_ACTOR,
          code: 'space.expired',
          message: `Anonymous space ${s.id} expired unclaimed; it can be claimed until ${purgeAfter}.`,
          details: { purgeAfter },
        });
        return true;
      });
      if (expired) n++;
      this.events?.spaceChanged(s.id);
    }
    return n;
  }

  /**
   * Purges expired anonymous spaces past their recovery window: channels and versions go, keys are
   * revoked, the row stays as a tombstone so the hostname is never re-issued.
   */
  async purgeDue(now: Date): Promise<number> {
    const at = now.toISOString();
    const due = await this.store.repos.spaces.anonymousDueForPurge(at);
    for (const id of due) {
      await this.store.transaction(async (repos) => {
        await this.spaces.purgeRows(repos, id);
        await repos.spaceKeys.revokeForSpace(id, at);
        await repos.spaces.tombstone(id, at);
      });
      this.events?.spaceChanged(id);
    }
    return due.length;
  }
}
