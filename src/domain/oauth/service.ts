import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId, newToken } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { DB } from '../../store/schema.ts';
import type { Principal } from '../auth/principal.ts';
import { isScope, SCOPES, type Scope } from '../auth/scopes.ts';
import { hashToken, sameDigest } from '../auth/tokens.ts';
import type { TeamService } from '../teams/service.ts';
import { OAuthError, oauthFail } from './errors.ts';
import {
  ACCESS_TOKEN_PREFIX,
  ACCESS_TOKEN_TTL_S,
  AUTH_CODE_TTL_S,
  CLI_CLIENT_ID,
  CLIENT_SECRET_PREFIX,
  DEVICE_CODE_PREFIX,
  DEVICE_CODE_TTL_S,
  DEVICE_POLL_INTERVAL_S,
  REFRESH_TOKEN_PREFIX,
  REFRESH_TOKEN_TTL_S,
} from './lifetimes.ts';

export type AppRow = DB['oauth_apps'];
export type ClientType = 'confidential' | 'public';

/** A client as the flows see it: a team's registered app or the built-in CLI. */
export interface OAuthClient {
  clientId: string;
  name: string;
  type: ClientType;
  scopes: readonly Scope[];
  redirectUris: readonly string[];
  teamId: string | null;
  tenantId: string | null;
  secretHash: string | null;
  builtIn: boolean;
}

export const CLI_CLIENT: OAuthClient = {
  clientId: CLI_CLIENT_ID,
  name: 'Spaces CLI',
  type: 'public',
  scopes: SCOPES,
  redirectUris: ['http://127.0.0.1/callback'],
  teamId: null,
  tenantId: null,
  secretHash: null,
  builtIn: true,
};

/** RFC 8252 §7.3: the CLI's loopback redirect may use any port; nothing else may vary. */
const CLI_REDIRECT = /^http:\/\/127\.0\.0\.1(?::([1-9][0-9]{0,4}))?\/callback$/;

export const MAX_REDIRECT_URIS = 10;

/** Why a redirect URI can't be registered, or null when it can. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'is longer than 2000 characters';
  if (/[\s<>"\\]/.test(uri)) return 'contains spaces or characters that are not allowed in a URL';
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (uri.includes('#')) return 'has a fragment';
  if (u.username || u.password) return 'carries user information (user@host)';
  if (u.protocol === 'https:') return u.hostname ? null : 'has no host';
  if (u.protocol === 'http:') {
    const h = u.hostname;
    return h === '127.0.0.1' || h === '[::1]' || h === 'localhost'
      ? null
      : 'uses http on a host other than a loopback address';
  }
  // Private-use URI scheme of a native app (RFC 8252 §7.1): reverse domain name, e.g. com.example.app:/cb
  if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(u.protocol)) return null;
  return 'uses a scheme other than https, loopback http or a private-use (reverse domain) scheme';
}

export function parseScopeParam(raw: string | undefined): Scope[] | null | 'invalid' {
  if (raw === undefined || raw.trim() === '') return null;
  const out: Scope[] = [];
  for (const s of raw.trim().split(/ +/)) {
    if (!isScope(s)) return 'invalid';
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

function b64urlSha256(s: string): string {
  return createHash('sha256').update(s).digest('base64url');
}

const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'; // RFC 8628 §6.1: no vowels, no ambiguous digits

export function normalizeUserCode(raw: string): string {
  return raw.toUpperCase().replace(/[^A-Z]/g, '');
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

export interface AuthorizeRequest {
  client: OAuthClient;
  redirectUri: string;
  scopes: Scope[];
  state: string | null;
  codeChallenge: string;
}

export interface DeviceView {
  userCode: string;
  clientName: string;
  scopes: Scope[];
  status: string;
  expired: boolean;
}

/**
 * The authorization server: registered apps, authorization codes, access/refresh tokens and device
 * codes. Everything is stored hashed; every lookup compares digests in constant time.
 */
export class OAuthService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly teams: TeamService,
    /** Key of the HTML pages' CSRF tokens (a server secret shared by every instance). */
    readonly csrfKey: Buffer,
  ) {}

  private now(): Date {
    return this.clock.now();
  }

  private later(seconds: number): string {
    return new Date(this.now().getTime() + seconds * 1000).toISOString();
  }

  private lastPrune = 0;

  /**
   * Deletes what can no longer be used, at most every 10 minutes: codes and device codes a day past
   * expiry (kept that long so a late reuse of a code still revokes its tokens), and tokens a day past
   * expiry (a refresh token past expiry is refused anyway, so reuse detection loses nothing).
   */
  async prune(): Promise<void> {
    const now = this.now().getTime();
    if (now - this.lastPrune < 600_000) return;
    this.lastPrune = now;
    const cutoff = new Date(now - 24 * 3600_000).toISOString();
    await this.db.deleteFrom('oauth_codes').where('expires_at', '<', cutoff).execute();
    await this.db.deleteFrom('oauth_device_codes').where('expires_at', '<', cutoff).execute();
    await this.db.deleteFrom('oauth_tokens').where('expires_at', '<', cutoff).execute();
  }

  // ----- Apps ------------------------------------------------------------------------------------

  private checkAppInput(input: { redirectUris?: string[]; scopes?: string[] }, type: ClientType): void {
    if (input.redirectUris) {
      input.redirectUris.forEach((uri, i) => {
        const problem = redirectUriProblem(uri);
        if (problem) {
          fail('invalid_redirect_uri', `The redirect URI ${JSON.stringify(uri)} ${problem}.`, {
            pointer: `/redirectUris/${i}`,
          });
        }
      });
      if (new Set(input.redirectUris).size !== input.redirectUris.length) {
        fail('validation_error', 'redirectUris lists the same URI twice.', { pointer: '/redirectUris' });
      }
    }
    if (input.scopes) {
      input.scopes.forEach((s, i) => {
        if (!isScope(s)) {
          fail('validation_error', `Unknown scope ${JSON.stringify(s)}.`, {
            pointer: `/scopes/${i}`,
            details: { allowed: SCOPES },
          });
        }
      });
    }
    void type;
  }

  async createApp(
    p: Principal,
    teamRef: string,
    input: { name: string; type: ClientType; redirectUris: string[]; scopes: string[] },
  ): Promise<{ app: AppRow; secret: string | null }> {
    const view = await this.teams.authorize(p, teamRef, 'team.update');
    this.checkAppInput(input, input.type);
    const secret = input.type === 'confidential' ? newToken(CLIENT_SECRET_PREFIX) : null;
    const now = this.now().toISOString();
    const app: AppRow = {
      id: newId('oap'),
      tenant_id: view.team.tenant_id,
      team_id: view.team.id,
      name: input.name,
      client_type: input.type,
      redirect_uris: JSON.stringify(input.redirectUris),
      scopes: JSON.stringify([...new Set(input.scopes)]),
      secret_hash: secret ? hashToken(secret) : null,
      secret_hint: secret ? secret.slice(-4) : null,
      created_by: p.userId,
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('oauth_apps').values(app).execute();
    return { app, secret };
  }

  async listApps(p: Principal, teamRef: string, after: string | null, n: number): Promise<AppRow[]> {
    const view = await this.teams.authorize(p, teamRef, 'team.update');
    let q = this.db.selectFrom('oauth_apps').selectAll().where('team_id', '=', view.team.id);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  async getApp(p: Principal, teamRef: string, appId: string): Promise<AppRow> {
    const view = await this.teams.authorize(p, teamRef, 'team.update');
    const app = await this.db
      .selectFrom('oauth_apps')
      .selectAll()
      .where('id', '=', appId)
      .where('team_id', '=', view.team.id)
      .executeTakeFirst();
    if (!app) throw new ApiError('not_found', `OAuth app ${appId} was not found.`);
    return app;
  }

  async updateApp(
    p: Principal,
    teamRef: string,
    appId: string,
    input: { name?: string; redirectUris?: string[]; scopes?: string[] },
  ): Promise<AppRow> {
    const app = await this.getApp(p, teamRef, appId);
    this.checkAppInput(input, app.client_type as ClientType);
    const patch: Partial<AppRow> = { updated_at: this.now().toISOString() };
    if (input.name !== undefined) patch.name = input.name;
    if (input.redirectUris !== undefined) patch.redirect_uris = JSON.stringify(input.redirectUris);
    if (input.scopes !== undefined) patch.scopes = JSON.stringify([...new Set(input.scopes)]);
    await this.db.updateTable('oauth_apps').set(patch).where('id', '=', app.id).execute();
    return { ...app, ...patch };
  }

  /** Deletes the app and revokes every token issued to it. */
  async deleteApp(p: Principal, teamRef: string, appId: string): Promise<void> {
    const app = await this.getApp(p, teamRef, appId);
    const now = this.now().toISOString();
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('oauth_tokens')
        .set({ revoked_at: now })
        .where('client_id', '=', app.id)
        .where('revoked_at', 'is', null)
        .execute();
      await trx.deleteFrom('oauth_codes').where('client_id', '=', app.id).execute();
      await trx.deleteFrom('oauth_device_codes').where('client_id', '=', app.id).execute();
      await trx.deleteFrom('oauth_apps').where('id', '=', app.id).execute();
    });
  }

  /** A new secret, shown once; the old one stops working at once. */
  async rotateSecret(p: Principal, teamRef: string, appId: string): Promise<{ app: AppRow; secret: string }> {
    const app = await this.getApp(p, teamRef, appId);
    if (app.client_type !== 'confidential') {
      fail('oauth_app_public', `OAuth app ${app.id} is a public client and has no secret.`);
    }
    const secret = newToken(CLIENT_SECRET_PREFIX);
    const patch = {
      secret_hash: hashToken(secret),
      secret_hint: secret.slice(-4),
      updated_at: this.now().toISOString(),
    };
    await this.db.updateTable('oauth_apps').set(patch).where('id', '=', app.id).execute();
    return { app: { ...app, ...patch }, secret };
  }

  // ----- Clients ---------------------------------------------------------------------------------

  /** The name of the team that registered a client, for the consent pages; null for the CLI. */
  async publisherName(client: OAuthClient): Promise<string | null> {
    if (!client.teamId) return null;
    const team = await this.db
      .selectFrom('teams')
      .select('name')
      .where('id', '=', client.teamId)
      .executeTakeFirst();
    return team?.name ?? null;
  }

  async findClient(clientId: string): Promise<OAuthClient | null> {
    if (clientId === CLI_CLIENT_ID) return CLI_CLIENT;
    const app = await this.db
      .selectFrom('oauth_apps')
      .selectAll()
      .where('id', '=', clientId)
      .executeTakeFirst();
    if (!app) return null;
    return {
      clientId: app.id,
      name: app.name,
      type: app.client_type as ClientType,
      scopes: (JSON.parse(app.scopes) as string[]).filter(isScope),
      redirectUris: JSON.parse(app.redirect_uris) as string[],
      teamId: app.team_id,
      tenantId: app.tenant_id,
      secretHash: app.secret_hash,
      builtIn: false,
    };
  }

  /** Exact string match (RFC 9700 §4.1.3); only the built-in CLI may vary its loopback port. */
  redirectAllowed(client: OAuthClient, uri: string): boolean {
    if (client.builtIn) return CLI_REDIRECT.test(uri) && Number(CLI_REDIRECT.exec(uri)![1] ?? 80) <= 65535;
    return client.redirectUris.includes(uri);
  }

  /**
   * Client authentication at the token, device, revocation and introspection endpoints:
   * `client_secret_basic`, `client_secret_post`, or `none` (a public client naming its client_id).
   */
  async authenticateClient(
    basic: { id: string; secret: string } | null,
    body: { client_id?: string; client_secret?: string },
    opts: { requireConfidential?: boolean } = {},
  ): Promise<OAuthClient> {
    if (basic && body.client_secret !== undefined) {
      oauthFail('invalid_request', 'Use one client authentication method, not Basic and client_secret both.');
    }
    if (basic && body.client_id !== undefined && body.client_id !== basic.id) {
      oauthFail('invalid_request', 'client_id in the body differs from the Basic credentials.');
    }
    const clientId = basic?.id ?? body.client_id;
    const secret = basic?.secret ?? body.client_secret;
    const invalid = () =>
      new OAuthError('invalid_client', 'Client authentication failed.', { basicChallenge: basic !== null });
    if (!clientId) throw invalid();
    const client = await this.findClient(clientId);
    if (!client) throw invalid();
    if (client.type === 'confidential') {
      if (secret === undefined || !client.secretHash || !sameDigest(client.secretHash, hashToken(secret))) {
        throw invalid();
      }
    } else if (secret !== undefined) {
      throw invalid(); // public clients have no secret
    }
    if (opts.requireConfidential && client.type !== 'confidential') {
      throw new OAuthError('unauthorized_client', 'Only confidential clients may use this.');
    }
    return client;
  }

  /** The scopes a request ends up with: asked ∩ allowed, or an error; default = the client's scopes. */
  private grantScopes(
    client: OAuthClient,
    raw: string | undefined,
    flow: 'authorization_code' | 'device' | 'client_credentials',
  ): Scope[] {
    const asked = parseScopeParam(raw);
    if (asked === 'invalid') oauthFail('invalid_scope', 'The scope parameter names an unknown scope.');
    const allowed = client.scopes.filter((s) => flow === 'authorization_code' || s !== 'offline_access');
    if (asked === null) {
      const defaults = allowed.filter((s) => s !== 'offline_access');
      if (defaults.length === 0)
        oauthFail('invalid_scope', 'Name the scopes to grant in the scope parameter.');
      return defaults;
    }
    if (flow !== 'authorization_code' && asked.includes('offline_access')) {
      oauthFail('invalid_scope', 'offline_access is only granted in the authorization-code flow.');
    }
    const extra = asked.filter((s) => !client.scopes.includes(s));
    if (extra.length > 0) oauthFail('invalid_scope', `The client may not ask for: ${extra.join(' ')}.`);
    return asked;
  }

  // ----- Authorization code ----------------------------------------------------------------------

  /**
   * Checks an authorization request. Problems with client_id or redirect_uri are `fatal` (shown to
   * the person, never redirected — RFC 6749 §4.1.2.1); the rest redirect back with `error`.
   */
  async checkAuthorizeRequest(
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
    const client = await this.findClient(clientId);
    if (!client) return { ok: false, fatal: `There is no OAuth client ${clientId}.` };
    const redirectUri = one('redirect_uri');
    if (!redirectUri) return { ok: false, fatal: 'The request has no redirect_uri (or has it twice).' };
    if (!this.redirectAllowed(client, redirectUri)) {
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
      scopes = this.grantScopes(client, one('scope') ?? undefined, 'authorization_code');
    } catch (err) {
      if (err instanceof OAuthError) return back(err.error, err.description);
      throw err;
    }
    return {
      ok: true,
      request: { client, redirectUri, scopes, state: state ?? null, codeChallenge: challenge },
    };
  }

  async issueCode(req: AuthorizeRequest, user: { id: string; tenantId: string }): Promise<string> {
    await this.prune();
    const code = newToken('', 32);
    const now = this.now();
    await this.db
      .insertInto('oauth_codes')
      .values({
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
        expires_at: this.later(AUTH_CODE_TTL_S),
        used_at: null,
      })
      .execute();
    return code;
  }

  async exchangeCode(
    client: OAuthClient,
    body: { code?: string; redirect_uri?: string; code_verifier?: string },
  ): Promise<TokenResponse> {
    if (!body.code) oauthFail('invalid_request', 'code is required.');
    const hash = hashToken(body.code);
    const row = await this.db
      .selectFrom('oauth_codes')
      .selectAll()
      .where('code_hash', '=', hash)
      .executeTakeFirst();
    if (!row || !sameDigest(row.code_hash, hash))
      oauthFail('invalid_grant', 'The authorization code is not valid.');
    if (row.client_id !== client.clientId) {
      oauthFail('invalid_grant', 'The authorization code was issued to another client.');
    }
    const now = this.now().toISOString();
    if (row.used_at) {
      // RFC 6749 §4.1.2: a second use revokes what the first one produced.
      await this.revokeGrant(row.grant_id);
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
    const claimed = await this.db
      .updateTable('oauth_codes')
      .set({ used_at: now })
      .where('id', '=', row.id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) {
      await this.revokeGrant(row.grant_id);
      oauthFail('invalid_grant', 'The authorization code was used already; its tokens are revoked.');
    }
    const scopes = (JSON.parse(row.scopes) as Scope[]).filter((s) => client.scopes.includes(s));
    return this.issueTokens({
      client,
      userId: row.user_id,
      tenantId: row.tenant_id,
      teamIds: null,
      scopes,
      grantId: row.grant_id,
      refresh: scopes.includes('offline_access'),
    });
  }

  private async issueTokens(g: {
    client: OAuthClient;
    userId: string | null;
    tenantId: string;
    teamIds: string[] | null;
    scopes: Scope[];
    grantId: string;
    refresh: boolean;
    /** Scopes of the refresh token when they differ from the access token's (narrowed refresh). */
    refreshScopes?: Scope[];
  }): Promise<TokenResponse> {
    const access = newToken(ACCESS_TOKEN_PREFIX);
    const now = this.now().toISOString();
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
    const rows = [
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
    await this.db.insertInto('oauth_tokens').values(rows).execute();
    return res;
  }

  /** Revokes every token of a grant (a token family). */
  async revokeGrant(grantId: string): Promise<void> {
    await this.db
      .updateTable('oauth_tokens')
      .set({ revoked_at: this.now().toISOString() })
      .where('grant_id', '=', grantId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  // ----- Refresh ---------------------------------------------------------------------------------

  async refresh(
    client: OAuthClient,
    body: { refresh_token?: string; scope?: string },
  ): Promise<TokenResponse> {
    if (!body.refresh_token) oauthFail('invalid_request', 'refresh_token is required.');
    const hash = hashToken(body.refresh_token);
    const row = await this.db
      .selectFrom('oauth_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .where('kind', '=', 'refresh')
      .executeTakeFirst();
    if (!row || !sameDigest(row.token_hash, hash))
      oauthFail('invalid_grant', 'The refresh token is not valid.');
    if (row.client_id !== client.clientId)
      oauthFail('invalid_grant', 'The refresh token belongs to another client.');
    if (row.revoked_at) oauthFail('invalid_grant', 'The refresh token was revoked.');
    const now = this.now().toISOString();
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
    const claimed = await this.db
      .updateTable('oauth_tokens')
      .set({ rotated_at: now })
      .where('id', '=', row.id)
      .where('rotated_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) {
      await this.revokeGrant(row.grant_id);
      oauthFail('invalid_grant', 'The refresh token was used already; every token of this grant is revoked.');
    }
    const scopes = asked ?? granted;
    return this.issueTokens({
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

  // ----- Client credentials ----------------------------------------------------------------------

  async clientCredentials(client: OAuthClient, body: { scope?: string }): Promise<TokenResponse> {
    if (client.type !== 'confidential' || !client.teamId || !client.tenantId) {
      oauthFail('unauthorized_client', 'Only confidential clients may use client_credentials.');
    }
    const scopes = this.grantScopes(client, body.scope, 'client_credentials');
    return this.issueTokens({
      client,
      userId: null,
      tenantId: client.tenantId,
      teamIds: [client.teamId],
      scopes,
      grantId: newId('ogr'),
      refresh: false,
    });
  }

  // ----- Device authorization (RFC 8628) ---------------------------------------------------------

  async startDevice(
    client: OAuthClient,
    body: { scope?: string },
  ): Promise<{ deviceCode: string; userCode: string; expiresIn: number; interval: number }> {
    const scopes = this.grantScopes(client, body.scope, 'device');
    await this.prune();
    const deviceCode = newToken(DEVICE_CODE_PREFIX);
    for (let attempt = 0; ; attempt++) {
      let userCode = '';
      for (let i = 0; i < 8; i++) userCode += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
      try {
        await this.db
          .insertInto('oauth_device_codes')
          .values({
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
            created_at: this.now().toISOString(),
            expires_at: this.later(DEVICE_CODE_TTL_S),
          })
          .execute();
        return {
          deviceCode,
          userCode: formatUserCode(userCode),
          expiresIn: DEVICE_CODE_TTL_S,
          interval: DEVICE_POLL_INTERVAL_S,
        };
      } catch (err) {
        if (!isUniqueViolation(err) || attempt > 5) throw err;
        // A user code collision (or an expired one still stored): drop stale codes and draw again.
        await this.db
          .deleteFrom('oauth_device_codes')
          .where('expires_at', '<=', this.now().toISOString())
          .execute();
      }
    }
  }

  async pollDevice(client: OAuthClient, body: { device_code?: string }): Promise<TokenResponse> {
    if (!body.device_code) oauthFail('invalid_request', 'device_code is required.');
    const hash = hashToken(body.device_code);
    const row = await this.db
      .selectFrom('oauth_device_codes')
      .selectAll()
      .where('device_code_hash', '=', hash)
      .executeTakeFirst();
    if (!row || !sameDigest(row.device_code_hash, hash))
      oauthFail('invalid_grant', 'The device code is not valid.');
    if (row.client_id !== client.clientId)
      oauthFail('invalid_grant', 'The device code belongs to another client.');
    const now = this.now();
    if (row.status === 'consumed') oauthFail('invalid_grant', 'The device code was exchanged already.');
    if (row.expires_at <= now.toISOString())
      oauthFail('expired_token', 'The device code has expired; start again.');
    if (row.status === 'denied') oauthFail('access_denied', 'The person denied the request.');
    if (row.status === 'pending') {
      const last = row.last_polled_at ? Date.parse(row.last_polled_at) : null;
      if (last !== null && now.getTime() - last < row.interval_seconds * 1000) {
        const interval = row.interval_seconds + 5;
        await this.db
          .updateTable('oauth_device_codes')
          .set({ interval_seconds: interval, last_polled_at: now.toISOString() })
          .where('id', '=', row.id)
          .execute();
        throw new OAuthError('slow_down', `Polling too fast; wait at least ${interval} s between polls.`);
      }
      await this.db
        .updateTable('oauth_device_codes')
        .set({ last_polled_at: now.toISOString() })
        .where('id', '=', row.id)
        .execute();
      oauthFail('authorization_pending', 'The person has not approved the request yet.');
    }
    const claimed = await this.db
      .updateTable('oauth_device_codes')
      .set({ status: 'consumed' })
      .where('id', '=', row.id)
      .where('status', '=', 'approved')
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1 || !row.user_id || !row.tenant_id) {
      oauthFail('invalid_grant', 'The device code was exchanged already.');
    }
    const scopes = (JSON.parse(row.scopes) as Scope[]).filter((s) => client.scopes.includes(s));
    return this.issueTokens({
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
  async findDevice(rawUserCode: string): Promise<DeviceView | null> {
    const code = normalizeUserCode(rawUserCode);
    if (code.length !== 8) return null;
    const row = await this.db
      .selectFrom('oauth_device_codes')
      .selectAll()
      .where('user_code', '=', code)
      .executeTakeFirst();
    if (!row) return null;
    const client = await this.findClient(row.client_id);
    if (!client) return null;
    return {
      userCode: formatUserCode(row.user_code),
      clientName: client.name,
      scopes: JSON.parse(row.scopes) as Scope[],
      status: row.status,
      expired: row.expires_at <= this.now().toISOString(),
    };
  }

  /** Approves or denies a pending device request; false when the code is unknown, used or expired. */
  async decideDevice(
    rawUserCode: string,
    user: { id: string; tenantId: string },
    approve: boolean,
  ): Promise<boolean> {
    const code = normalizeUserCode(rawUserCode);
    const res = await this.db
      .updateTable('oauth_device_codes')
      .set({ status: approve ? 'approved' : 'denied', user_id: user.id, tenant_id: user.tenantId })
      .where('user_code', '=', code)
      .where('status', '=', 'pending')
      .where('expires_at', '>', this.now().toISOString())
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  // ----- Revocation, introspection, resolution ----------------------------------------------------

  private async findToken(token: string) {
    const hash = hashToken(token);
    const row = await this.db
      .selectFrom('oauth_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    return row && sameDigest(row.token_hash, hash) ? row : null;
  }

  /** RFC 7009: unknown tokens and other clients' tokens are ignored (still 200). */
  async revoke(client: OAuthClient, token: string): Promise<void> {
    const row = await this.findToken(token);
    if (!row || row.client_id !== client.clientId) return;
    if (row.kind === 'refresh') await this.revokeGrant(row.grant_id);
    else {
      await this.db
        .updateTable('oauth_tokens')
        .set({ revoked_at: this.now().toISOString() })
        .where('id', '=', row.id)
        .where('revoked_at', 'is', null)
        .execute();
    }
  }

  /** RFC 7662, limited to the calling client's own tokens; anything else is `active: false`. */
  async introspect(client: OAuthClient, token: string): Promise<Record<string, unknown>> {
    const row = await this.findToken(token);
    const now = this.now().toISOString();
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
      const user = await this.db
        .selectFrom('users')
        .select('email')
        .where('id', '=', row.user_id)
        .executeTakeFirst();
      if (user) out.username = user.email;
    }
    if (row.team_ids) out.team_ids = JSON.parse(row.team_ids);
    return out;
  }

  /** Resolver for `sfo_` access tokens. */
  resolveAccessToken = async (token: string): Promise<Principal | null> => {
    const row = await this.findToken(token);
    if (row?.kind !== 'access' || row.revoked_at) return null;
    const now = this.now();
    if (row.expires_at <= now.toISOString()) return null;
    if (!row.last_used_at || now.getTime() - Date.parse(row.last_used_at) >= 60_000) {
      await this.db
        .updateTable('oauth_tokens')
        .set({ last_used_at: now.toISOString() })
        .where('id', '=', row.id)
        .execute();
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
