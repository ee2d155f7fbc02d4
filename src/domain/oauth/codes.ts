import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import { newId, newToken } from '../../ids.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Scope } from '../auth/scopes.ts';
import { hashToken, sameDigest } from '../auth/tokens.ts';
import type { OAuthClient, OAuthClients } from './clients.ts';
import { OAuthError, oauthFail } from './errors.ts';
import { AUTH_CODE_TTL_S } from './lifetimes.ts';
import type { OAuthTokens, TokenResponse } from './tokens.ts';

export interface AuthorizeRequest {
  client: OAuthClient;
  redirectUri: string;
  scopes: Scope[];
  state: string | null;
  codeChallenge: string;
}

function b64urlSha256(s: string): string {
  return createHash('sha256').update(s).digest('base64url');
}

/**
 * The authorization-code flow with PKCE (S256 only): checks the request, issues a single-use code
 * (stored hashed) for the person who consented, and exchanges it for tokens. A second use of a code
 * revokes what the first one produced.
 */
export class AuthorizationCodes {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly clients: OAuthClients,
    private readonly tokens: OAuthTokens,
  ) {}

  /**
   * Checks an authorization request. Problems with client_id or redirect_uri are `fatal` (shown to
   * the person, never redirected — RFC 6749 §4.1.2.1); the rest redirect back with `error`.
   */
  async checkRequest(
    q: Record<string, unknown>,
  ): Promise<
    | { ok: true; request: AuthorizeRequest }
    | { ok: false; fatal: string }
    | { ok: false; redirect: string; error: string; description: string; state: string | null }
  > {
    const one = (k: string): string | undefined | null => {
      const v = q[k];
      if (v === undefined) return undefined;
      return typeof v === 'string' ? v : null; // null: repeated or not a string
    };
    const clientId = one('client_id');
    if (!clientId) return { ok: false, fatal: 'The request names no client_id (or names it twice).' };
    const client = await this.clients.find(clientId);
    if (!client) return { ok: false, fatal: `There is no OAuth client ${clientId}.` };
    const redirectUri = one('redirect_uri');
    if (!redirectUri) return { ok: false, fatal: 'The request has no redirect_uri (or has it twice).' };
    if (!this.clients.redirectAllowed(client, redirectUri)) {
      return {
        ok: false,
        fatal: 'The redirect_uri is not registered for this client (exact match required).',
      };
    }
    const state = one('state');
    const back = (error: string, description: string) => ({
      ok: false as const,
      redirect: redirectUri,
      error,
      description,
      state: typeof state === 'string' ? state : null,
    });
    for (const k of ['response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method']) {
      if (one(k) === null) return back('invalid_request', `The parameter ${k} is repeated.`);
    }
    if (one('response_type') !== 'code') {
      return back('unsupported_response_type', 'Only response_type=code is supported.');
    }
    const challenge = one('code_challenge');
    const method = one('code_challenge_method');
    if (!challenge) return back('invalid_request', 'PKCE is required: send code_challenge (S256).');
    if (method !== 'S256') {
      return back('invalid_request', 'Only code_challenge_method=S256 is supported; plain is refused.');
    }
    if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
      return back(
        'invalid_request',
        'code_challenge must be the base64url SHA-256 of the verifier (43 characters).',
      );
    }
    let scopes: Scope[];
    try {
      scopes = this.clients.grantScopes(client, one('scope') ?? undefined, 'authorization_code');
    } catch (err) {
      if (err instanceof OAuthError) return back(err.error, err.description);
      throw err;
    }
    return {
      ok: true,
      request: { client, redirectUri, scopes, state: state ?? null, codeChallenge: challenge },
    };
  }

  async issue(req: AuthorizeRequest, user: { id: string; tenantId: string }): Promise<string> {
    await this.tokens.prune();
    const code = newToken('', 32);
    const now = this.clock.now();
    await this.store.repos.oauthCodes.create({
      id: newId('ocd'),
      code_hash: hashToken(code),
      client_id: req.client.clientId,
      tenant_id: user.tenantId,
      user_id: user.id,
      redirect_uri: req.redirectUri,
      scopes: JSON.stringify(req.scopes),
      code_challenge: req.codeChallenge,
      grant_id: newId('ogr'),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + AUTH_CODE_TTL_S * 1000).toISOString(),
      used_at: null,
    });
    return code;
  }

  async exchange(
    client: OAuthClient,
    body: { code?: string; redirect_uri?: string; code_verifier?: string },
  ): Promise<TokenResponse> {
    if (!body.code) oauthFail('invalid_request', 'code is required.');
    const hash = hashToken(body.code);
    const row = await this.store.repos.oauthCodes.byHash(hash);
    if (!row || !sameDigest(row.code_hash, hash))
      oauthFail('invalid_grant', 'The authorization code is not valid.');
    if (row.client_id !== client.clientId) {
      oauthFail('invalid_grant', 'The authorization code was issued to another client.');
    }
    const now = this.clock.now().toISOString();
    if (row.used_at) {
      // RFC 6749 §4.1.2: a second use revokes what the first one produced.
      await this.tokens.revokeGrant(row.grant_id);
      oauthFail('invalid_grant', 'The authorization code was used already; its tokens are revoked.');
    }
    if (row.expires_at <= now) oauthFail('invalid_grant', 'The authorization code has expired.');
    if (body.redirect_uri !== row.redirect_uri) {
      oauthFail('invalid_grant', 'redirect_uri differs from the one of the authorization request.');
    }
    if (!body.code_verifier) oauthFail('invalid_grant', 'code_verifier is required (PKCE).');
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(body.code_verifier)) {
      oauthFail('invalid_grant', 'code_verifier must be 43–128 unreserved characters.');
    }
    const computed = Buffer.from(b64urlSha256(body.code_verifier));
    const expected = Buffer.from(row.code_challenge);
    if (computed.length !== expected.length || !timingSafeEqual(computed, expected)) {
      oauthFail('invalid_grant', 'code_verifier does not match the code_challenge.');
    }
    if (!(await this.store.repos.oauthCodes.markUsed(row.id, now))) {
      await this.tokens.revokeGrant(row.grant_id);
      oauthFail('invalid_grant', 'The authorization code was used already; its tokens are revoked.');
    }
    const scopes = (JSON.parse(row.scopes) as Scope[]).filter((s) => client.scopes.includes(s));
    return this.tokens.issue({
      client,
      userId: row.user_id,
      tenantId: row.tenant_id,
      teamIds: null,
      scopes,
      grantId: row.grant_id,
      refresh: scopes.includes('offline_access'),
    });
  }
}
