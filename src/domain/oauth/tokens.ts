import type { Clock } from '../../clock.ts';
import { newId, newToken } from '../../ids.ts';
import type { OAuthTokenRow } from '../../store/repos/identity/oauth-tokens.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { isScope, type Scope } from '../auth/scopes.ts';
import { hashToken, sameDigest } from '../auth/tokens.ts';
import { type OAuthClient, type OAuthClients, parseScopeParam } from './clients.ts';
import { oauthFail } from './errors.ts';
import {
  ACCESS_TOKEN_PREFIX,
  ACCESS_TOKEN_TTL_S,
  REFRESH_TOKEN_PREFIX,
  REFRESH_TOKEN_TTL_S,
} from './lifetimes.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

/** What a grant (an authorization code, a device approval, a refresh, client credentials) yields. */
export interface Grant {
  client: OAuthClient;
  userId: string | null;
  tenantId: string;
  teamIds: string[] | null;
  scopes: Scope[];
  grantId: string;
  refresh: boolean;
  /** Scopes of the refresh token when they differ from the access token's (narrowed refresh). */
  refreshScopes?: Scope[];
}

/**
 * Access and refresh tokens: issued for a grant, rotated on refresh (a reuse revokes the whole
 * family), revoked, introspected and resolved to a principal. Stored hashed; every lookup compares
 * the digest in constant time.
 */
export class OAuthTokens {
  private lastPrune = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly clients: OAuthClients,
  ) {}

  private later(seconds: number): string {
    return new Date(this.clock.now().getTime() + seconds * 1000).toISOString();
  }

  /**
   * Deletes what can no longer be used, at most every 10 minutes: codes and device codes a day past
   * expiry (kept that long so a late reuse of a code still revokes its tokens), and tokens a day past
   * expiry (a refresh token past expiry is refused anyway, so reuse detection loses nothing).
   */
  async prune(): Promise<void> {
    const now = this.clock.now().getTime();
    if (now - this.lastPrune < 600_000) return;
    this.lastPrune = now;
    const cutoff = new Date(now - 24 * 3600_000).toISOString();
    const { repos } = this.store;
    await repos.oauthCodes.deleteExpiredBefore(cutoff);
    await repos.oauthDeviceCodes.deleteExpiredBefore(cutoff);
    await repos.oauthTokens.deleteExpiredBefore(cutoff);
  }

  async issue(g: Grant): Promise<TokenResponse> {
    const access = newToken(ACCESS_TOKEN_PREFIX);
    const now = this.clock.now().toISOString();
    const base = {
      client_id: g.client.clientId,
      tenant_id: g.tenantId,
      user_id: g.userId,
      team_ids: g.teamIds ? JSON.stringify(g.teamIds) : null,
      grant_id: g.grantId,
      created_at: now,
      rotated_at: null,
      revoked_at: null,
      last_used_at: null,
    };
    const rows: OAuthTokenRow[] = [
      {
        ...base,
        id: newId('otk'),
        kind: 'access',
        token_hash: hashToken(access),
        scopes: JSON.stringify(g.scopes),
        expires_at: this.later(ACCESS_TOKEN_TTL_S),
      },
    ];
    const res: TokenResponse = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_S,
      scope: g.scopes.join(' '),
    };
    if (g.refresh) {
      const refresh = newToken(REFRESH_TOKEN_PREFIX);
      rows.push({
        ...base,
        id: newId('otk'),
        kind: 'refresh',
        token_hash: hashToken(refresh),
        scopes: JSON.stringify(g.refreshScopes ?? g.scopes),
        expires_at: this.later(REFRESH_TOKEN_TTL_S),
      });
      res.refresh_token = refresh;
    }
    await this.store.repos.oauthTokens.createMany(rows);
    return res;
  }

  /** Revokes every token of a grant (a token family). */
  async revokeGrant(grantId: string): Promise<void> {
    await this.store.repos.oauthTokens.revokeGrant(grantId, this.clock.now().toISOString());
  }

  async refresh(
    client: OAuthClient,
    body: { refresh_token?: string; scope?: string },
  ): Promise<TokenResponse> {
    if (!body.refresh_token) oauthFail('invalid_request', 'refresh_token is required.');
    const hash = hashToken(body.refresh_token);
    const row = await this.store.repos.oauthTokens.byHash(hash, 'refresh');
    if (!row || !sameDigest(row.token_hash, hash))
      oauthFail('invalid_grant', 'The refresh token is not valid.');
    if (row.client_id !== client.clientId)
      oauthFail('invalid_grant', 'The refresh token belongs to another client.');
    if (row.revoked_at) oauthFail('invalid_grant', 'The refresh token was revoked.');
    const now = this.clock.now().toISOString();
    if (row.rotated_at) {
      // RFC 9700 §4.14.2: a rotated refresh token used again means it leaked; end the whole family.
      await this.revokeGrant(row.grant_id);
      oauthFail('invalid_grant', 'The refresh token was used already; every token of this grant is revoked.');
    }
    if (row.expires_at <= now) oauthFail('invalid_grant', 'The refresh token has expired.');
    // The grant can only narrow: to what it had, and to what the client may still ask for.
    const granted = (JSON.parse(row.scopes) as Scope[]).filter((s) => client.scopes.includes(s));
    const asked = parseScopeParam(body.scope);
    if (asked === 'invalid') oauthFail('invalid_scope', 'The scope parameter names an unknown scope.');
    if (asked) {
      const extra = asked.filter((s) => !granted.includes(s));
      if (extra.length > 0) {
        oauthFail('invalid_scope', `A refresh can only narrow the grant; not granted: ${extra.join(' ')}.`);
      }
    }
    if (!granted.includes('offline_access'))
      oauthFail('invalid_grant', 'The grant no longer allows refresh.');
    if (!(await this.store.repos.oauthTokens.markRotated(row.id, now))) {
      await this.revokeGrant(row.grant_id);
      oauthFail('invalid_grant', 'The refresh token was used already; every token of this grant is revoked.');
    }
    const scopes = asked ?? granted;
    return this.issue({
      client,
      userId: row.user_id,
      tenantId: row.tenant_id,
      teamIds: row.team_ids ? (JSON.parse(row.team_ids) as string[]) : null,
      scopes,
      refreshScopes: granted,
      grantId: row.grant_id,
      refresh: true,
    });
  }

  async clientCredentials(client: OAuthClient, body: { scope?: string }): Promise<TokenResponse> {
    if (client.type !== 'confidential' || !client.teamId || !client.tenantId) {
      oauthFail('unauthorized_client', 'Only confidential clients may use client_credentials.');
    }
    const scopes = this.clients.grantScopes(client, body.scope, 'client_credentials');
    return this.issue({
      client,
      userId: null,
      tenantId: client.tenantId,
      teamIds: [client.teamId],
      scopes,
      grantId: newId('ogr'),
      refresh: false,
    });
  }

  private async find(token: string): Promise<OAuthTokenRow | null> {
    const hash = hashToken(token);
    const row = await this.store.repos.oauthTokens.byHash(hash);
    return row && sameDigest(row.token_hash, hash) ? row : null;
  }

  /** RFC 7009: unknown tokens and other clients' tokens are ignored (still 200). */
  async revoke(client: OAuthClient, token: string): Promise<void> {
    const row = await this.find(token);
    if (!row || row.client_id !== client.clientId) return;
    if (row.kind === 'refresh') await this.revokeGrant(row.grant_id);
    else await this.store.repos.oauthTokens.revoke(row.id, this.clock.now().toISOString());
  }

  /** RFC 7662, limited to the calling client's own tokens; anything else is `active: false`. */
  async introspect(client: OAuthClient, token: string): Promise<Record<string, unknown>> {
    const row = await this.find(token);
    const now = this.clock.now().toISOString();
    if (
      !row ||
      row.client_id !== client.clientId ||
      row.revoked_at ||
      row.rotated_at ||
      row.expires_at <= now
    ) {
      return { active: false };
    }
    const out: Record<string, unknown> = {
      active: true,
      scope: (JSON.parse(row.scopes) as string[]).join(' '),
      client_id: row.client_id,
      token_type: row.kind === 'access' ? 'Bearer' : 'refresh_token',
      exp: Math.floor(Date.parse(row.expires_at) / 1000),
      iat: Math.floor(Date.parse(row.created_at) / 1000),
    };
    if (row.user_id) {
      out.sub = row.user_id;
      const user = await this.store.repos.users.byId(row.user_id);
      if (user) out.username = user.email;
    }
    if (row.team_ids) out.team_ids = JSON.parse(row.team_ids);
    return out;
  }

  /** Resolver for `sfo_` access tokens. */
  resolveAccessToken = async (token: string): Promise<Principal | null> => {
    const row = await this.find(token);
    if (row?.kind !== 'access' || row.revoked_at) return null;
    const now = this.clock.now();
    if (row.expires_at <= now.toISOString()) return null;
    if (!row.last_used_at || now.getTime() - Date.parse(row.last_used_at) >= 60_000) {
      await this.store.repos.oauthTokens.touch(row.id, now.toISOString());
    }
    return {
      kind: row.user_id ? 'oauth' : 'client',
      credentialId: row.id,
      tenantId: row.tenant_id,
      userId: row.user_id,
      teamIds: row.team_ids ? (JSON.parse(row.team_ids) as string[]) : null,
      scopes: new Set((JSON.parse(row.scopes) as string[]).filter(isScope)),
      spaceId: null,
      clientId: row.client_id,
    };
  };
}
