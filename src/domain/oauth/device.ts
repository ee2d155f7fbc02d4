import { randomInt } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import { newId, newToken } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Scope } from '../auth/scopes.ts';
import { hashToken, sameDigest } from '../auth/tokens.ts';
import type { OAuthClient, OAuthClients } from './clients.ts';
import { OAuthError, oauthFail } from './errors.ts';
import { DEVICE_CODE_PREFIX, DEVICE_CODE_TTL_S, DEVICE_POLL_INTERVAL_S } from './lifetimes.ts';
import type { OAuthTokens, TokenResponse } from './tokens.ts';

const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'; // RFC 8628 §6.1: no vowels, no ambiguous digits

export function normalizeUserCode(raw: string): string {
  return raw.toUpperCase().replace(/[^A-Z]/g, '');
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export interface DeviceView {
  userCode: string;
  clientName: string;
  scopes: Scope[];
  status: string;
  expired: boolean;
}

/**
 * Device authorization (RFC 8628): a device starts a request and polls with its device code (stored
 * hashed) while a signed-in person approves or denies it by its user code.
 */
export class DeviceFlow {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly clients: OAuthClients,
    private readonly tokens: OAuthTokens,
  ) {}

  private later(seconds: number): string {
    return new Date(this.clock.now().getTime() + seconds * 1000).toISOString();
  }

  async start(
    client: OAuthClient,
    body: { scope?: string },
  ): Promise<{ deviceCode: string; userCode: string; expiresIn: number; interval: number }> {
    const scopes = this.clients.grantScopes(client, body.scope, 'device');
    await this.tokens.prune();
    const deviceCode = newToken(DEVICE_CODE_PREFIX);
    const codes = this.store.repos.oauthDeviceCodes;
    for (let attempt = 0; ; attempt++) {
      let userCode = '';
      for (let i = 0; i < 8; i++) userCode += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
      try {
        await codes.create({
          id: newId('odc'),
          device_code_hash: hashToken(deviceCode),
          user_code: userCode,
          client_id: client.clientId,
          scopes: JSON.stringify(scopes),
          status: 'pending',
          user_id: null,
          tenant_id: null,
          interval_seconds: DEVICE_POLL_INTERVAL_S,
          last_polled_at: null,
          created_at: this.clock.now().toISOString(),
          expires_at: this.later(DEVICE_CODE_TTL_S),
        });
        return {
          deviceCode,
          userCode: formatUserCode(userCode),
          expiresIn: DEVICE_CODE_TTL_S,
          interval: DEVICE_POLL_INTERVAL_S,
        };
      } catch (err) {
        if (!isUniqueViolation(err) || attempt > 5) throw err;
        // A user code collision (or an expired one still stored): drop stale codes and draw again.
        await codes.deleteExpiredAt(this.clock.now().toISOString());
      }
    }
  }

  async poll(client: OAuthClient, body: { device_code?: string }): Promise<TokenResponse> {
    if (!body.device_code) oauthFail('invalid_request', 'device_code is required.');
    const codes = this.store.repos.oauthDeviceCodes;
    const hash = hashToken(body.device_code);
    const row = await codes.byHash(hash);
    if (!row || !sameDigest(row.device_code_hash, hash))
      oauthFail('invalid_grant', 'The device code is not valid.');
    if (row.client_id !== client.clientId)
      oauthFail('invalid_grant', 'The device code belongs to another client.');
    const now = this.clock.now();
    if (row.status === 'consumed') oauthFail('invalid_grant', 'The device code was exchanged already.');
    if (row.expires_at <= now.toISOString())
      oauthFail('expired_token', 'The device code has expired; start again.');
    if (row.status === 'denied') oauthFail('access_denied', 'The person denied the request.');
    if (row.status === 'pending') {
      const last = row.last_polled_at ? Date.parse(row.last_polled_at) : null;
      if (last !== null && now.getTime() - last < row.interval_seconds * 1000) {
        const interval = row.interval_seconds + 5;
        await codes.recordPoll(row.id, now.toISOString(), interval);
        throw new OAuthError('slow_down', `Polling too fast; wait at least ${interval} s between polls.`);
      }
      await codes.recordPoll(row.id, now.toISOString());
      oauthFail('authorization_pending', 'The person has not approved the request yet.');
    }
    const claimed = await codes.consume(row.id);
    if (!claimed || !row.user_id || !row.tenant_id) {
      oauthFail('invalid_grant', 'The device code was exchanged already.');
    }
    const scopes = (JSON.parse(row.scopes) as Scope[]).filter((s) => client.scopes.includes(s));
    return this.tokens.issue({
      client,
      userId: row.user_id,
      tenantId: row.tenant_id,
      teamIds: null,
      scopes,
      grantId: newId('ogr'),
      refresh: false,
    });
  }

  /** The pending request behind a user code, for the verification page; null when unknown. */
  async find(rawUserCode: string): Promise<DeviceView | null> {
    const code = normalizeUserCode(rawUserCode);
    if (code.length !== 8) return null;
    const row = await this.store.repos.oauthDeviceCodes.byUserCode(code);
    if (!row) return null;
    const client = await this.clients.find(row.client_id);
    if (!client) return null;
    return {
      userCode: formatUserCode(row.user_code),
      clientName: client.name,
      scopes: JSON.parse(row.scopes) as Scope[],
      status: row.status,
      expired: row.expires_at <= this.clock.now().toISOString(),
    };
  }

  /** Approves or denies a pending device request; false when the code is unknown, used or expired. */
  decide(rawUserCode: string, user: { id: string; tenantId: string }, approve: boolean): Promise<boolean> {
    return this.store.repos.oauthDeviceCodes.decide(
      normalizeUserCode(rawUserCode),
      { status: approve ? 'approved' : 'denied', userId: user.id, tenantId: user.tenantId },
      this.clock.now().toISOString(),
    );
  }
}
