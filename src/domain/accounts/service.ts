import type { Clock } from '../../clock.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId, newToken } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { ApiKeyRow } from '../../store/repos/identity/api-keys.ts';
import type { UserRow } from '../../store/repos/identity/users.ts';
import type { IdentityRepos } from '../../store/repos/identity.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { ALL_API_SCOPES, API_KEY_PRESETS, type ApiKeyPreset, SCOPES, type Scope } from '../auth/scopes.ts';
import { hashPassword, hashToken, sameDigest, verifyPassword } from '../auth/tokens.ts';
import { actorFromPrincipal, EventLog } from '../events/log.ts';
import type { TeamService } from '../teams/service.ts';

export const SESSION_PREFIX = 'sfs_';
export const API_KEY_PREFIX = 'sfa_';
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
/** `lastUsedAt` is written at most this often per credential, so reads don't turn into writes. */
const LAST_USED_GRANULARITY_MS = 60_000;

export type { ApiKeyRow, UserRow };

export interface NewUser {
  email: string;
  name: string;
  password: string | null;
  isAdmin?: boolean;
}

export class AccountService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly teams: TeamService,
    private readonly mainTenantId: () => Promise<string>,
    eventLog?: EventLog,
  ) {
    this.eventLog = eventLog ?? new EventLog(clock);
  }

  private readonly eventLog: EventLog;

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** Creates a person in the main tenant, with a personal team they own. */
  async createUser(input: NewUser): Promise<UserRow> {
    const tenantId = await this.mainTenantId();
    const now = this.now();
    const user: UserRow = {
      id: newId('usr'),
      tenant_id: tenantId,
      email: input.email.trim().toLowerCase(),
      name: input.name,
      password_hash: input.password === null ? null : await hashPassword(input.password),
      is_admin: input.isAdmin ? 1 : 0,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.store.transaction(async (repos) => {
        await repos.users.create(user);
        const team = await this.teams.createTeamIn(repos, tenantId, user.id, {
          name: `${input.name}'s team`,
        });
        // A person's own events (created, signed in) belong to their personal team.
        await this.eventLog.record(repos, {
          tenantId: team.id,
          actor: { type: 'system', id: null },
          code: 'user.created',
          message: `Account ${user.email} was created.`,
          details: { userId: user.id, email: user.email },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        fail('email_taken', `An account for ${user.email} exists already.`, { pointer: '/email' });
      }
      throw err;
    }
    return user;
  }

  /** The server owner: the oldest account allowed to administer the server. */
  async findOwner(): Promise<UserRow | undefined> {
    return (await this.store.repos.users.oldestAdmin()) ?? undefined;
  }

  /** True once any account exists (the server was bootstrapped). */
  hasAnyUser(): Promise<boolean> {
    return this.store.repos.users.any();
  }

  /** Sets a new password and signs the person out everywhere (their sessions may be in other hands). */
  async resetPassword(userId: string, password: string): Promise<void> {
    const now = this.now();
    const hash = await hashPassword(password);
    await this.store.transaction(async (repos) => {
      await repos.users.setPasswordHash(userId, hash, now);
      await repos.sessions.revokeAllForUser(userId, now);
    });
  }

  async getUser(id: string): Promise<UserRow | undefined> {
    return (await this.store.repos.users.byId(id)) ?? undefined;
  }

  async signIn(
    email: string,
    password: string,
    userAgent: string | null,
  ): Promise<{ token: string; expiresAt: string; user: UserRow }> {
    const user = await this.store.repos.users.byEmail(email.trim().toLowerCase());
    const ok = await verifyPassword(password, user?.password_hash ?? null);
    if (!user || !ok) fail('invalid_credentials', 'The e-mail address or the password is wrong.');
    const token = newToken(SESSION_PREFIX);
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS).toISOString();
    await this.store.transaction(async (repos) => {
      const sessionId = newId('ses');
      await repos.sessions.create({
        id: sessionId,
        user_id: user.id,
        token_hash: hashToken(token),
        created_at: now.toISOString(),
        expires_at: expiresAt,
        last_used_at: null,
        revoked_at: null,
        user_agent: userAgent?.slice(0, 255) ?? null,
      });
      const team = await repos.teams.oldestOwnedBy(user.id);
      await this.eventLog.record(repos, {
        tenantId: team?.id ?? user.id,
        actor: { type: 'user', id: user.id },
        code: 'user.signed_in',
        message: `${user.email} signed in.`,
        details: { userId: user.id, sessionId, userAgent: userAgent?.slice(0, 255) ?? null },
      });
    });
    return { token, expiresAt, user };
  }

  async revokeSession(sessionId: string): Promise<void> {
    await this.store.repos.sessions.revoke(sessionId, this.now());
  }

  /** Resolver for `sfs_` tokens. */
  resolveSession = async (token: string): Promise<Principal | null> => {
    const hash = hashToken(token);
    const row = await this.store.repos.sessions.byTokenHash(hash);
    if (!row || !sameDigest(row.token_hash, hash)) return null;
    const now = this.clock.now();
    if (row.revoked_at) return null;
    if (row.expires_at <= now.toISOString()) return null;
    if (this.due(row.last_used_at, now)) await this.store.repos.sessions.touch(row.id, now.toISOString());
    return {
      kind: 'session',
      credentialId: row.id,
      tenantId: row.tenant_id,
      userId: row.user_id,
      teamIds: null,
      scopes: new Set(SCOPES),
      spaceId: null,
    };
  };

  /** Resolver for `sfa_` tokens. */
  resolveApiKey = async (token: string): Promise<Principal | null> => {
    const hash = hashToken(token);
    const row = await this.store.repos.apiKeys.byTokenHash(hash);
    if (!row || !sameDigest(row.token_hash, hash)) return null;
    const now = this.clock.now();
    if (row.revoked_at) return null;
    if (row.expires_at && row.expires_at <= now.toISOString()) return null;
    if (this.due(row.last_used_at, now)) await this.store.repos.apiKeys.touch(row.id, now.toISOString());
    return {
      kind: 'api_key',
      credentialId: row.id,
      tenantId: row.tenant_id,
      userId: row.user_id,
      teamIds: [row.team_id],
      scopes: new Set(JSON.parse(row.scopes) as Scope[]),
      spaceId: row.space_id,
    };
  };

  /** Whether `lastUsedAt` is stale enough to be written again. */
  private due(last: string | null, now: Date): boolean {
    return !(last && now.getTime() - Date.parse(last) < LAST_USED_GRANULARITY_MS);
  }

  /**
   * Creates an API key for a team the caller belongs to. The key's scopes are its preset's, narrowed
   * to what the creating credential holds: a key never has more rights than whoever made it.
   */
  async createApiKey(
    principal: Principal,
    input: {
      name: string;
      teamId: string;
      preset: ApiKeyPreset;
      expiresAt?: string | null;
      /** Binds the key to this space of the team (checked by the caller): it acts on it alone. */
      spaceId?: string | null;
    },
    fixedToken?: string,
  ): Promise<{ key: ApiKeyRow; token: string }> {
    if (!principal.userId) fail('forbidden', 'Only a credential acting for a person can create API keys.');
    if (principal.spaceId) fail('forbidden', 'A credential bound to one space cannot create API keys.');
    if (principal.kind === 'oauth') {
      // An hour-long delegated token must not mint a key that outlives it and its revocation.
      fail('forbidden', 'OAuth access tokens cannot create API keys; sign in or use an API key.');
    }
    const preset = API_KEY_PRESETS[input.preset] as readonly Scope[];
    const missing = preset.filter((s) => !principal.scopes.has(s));
    if (missing.length > 0) {
      fail(
        'policy_exceeds_grantor',
        `The preset ${input.preset} needs scopes your credential lacks: ${missing.join(', ')}.`,
        {
          pointer: '/preset',
          details: { missingScopes: missing },
        },
      );
    }
    if (input.expiresAt && input.expiresAt <= this.now()) {
      fail('validation_error', 'expiresAt must be in the future.', { pointer: '/expiresAt' });
    }
    const userId = principal.userId;
    return this.store.transaction(async (repos) => {
      const issued = await this.issueApiKey(repos, {
        userId,
        tenantId: principal.tenantId,
        teamId: input.teamId,
        spaceId: input.spaceId ?? null,
        name: input.name,
        preset: input.preset,
        expiresAt: input.expiresAt ?? null,
        fixedToken,
      });
      await this.eventLog.record(repos, {
        tenantId: input.teamId,
        spaceId: input.spaceId ?? null,
        actor: actorFromPrincipal(principal),
        code: 'api_key.created',
        message: `API key "${input.name}" (${input.preset}) was created.`,
        details: {
          apiKeyId: issued.key.id,
          name: input.name,
          preset: input.preset,
          hint: issued.key.hint,
          expiresAt: issued.key.expires_at,
        },
      });
      return issued;
    });
  }

  /**
   * Stores a new key for a person. Whether they may have it is the caller's check (`createApiKey`
   * for keys people ask for; the claim continuation for the key an agent's voucher is exchanged for).
   * `into` is the repositories to write with: `store.repos`, or those of a `store.transaction` the
   * key must commit with (`repos`). A raw Kysely transaction is still accepted until the anonymous
   * claim runs on `store.transaction` (#19: remove that form after the merge).
   */
  async issueApiKey(
    into: Pick<IdentityRepos, 'apiKeys'>,
    input: {
      userId: string;
      tenantId: string;
      teamId: string;
      spaceId: string | null;
      name: string;
      preset: ApiKeyPreset;
      expiresAt: string | null;
      fixedToken?: string;
    },
  ): Promise<{ key: ApiKeyRow; token: string }> {
    const token = input.fixedToken ?? newToken(API_KEY_PREFIX);
    const key: ApiKeyRow = {
      id: newId('key'),
      user_id: input.userId,
      team_id: input.teamId,
      tenant_id: input.tenantId,
      name: input.name,
      preset: input.preset,
      scopes: JSON.stringify(API_KEY_PRESETS[input.preset]),
      token_hash: hashToken(token),
      hint: token.slice(-4),
      space_id: input.spaceId,
      created_at: this.now(),
      expires_at: input.expiresAt,
      last_used_at: null,
      revoked_at: null,
    };
    await into.apiKeys.create(key);
    return { key, token };
  }

  /** API keys the caller created, plus (for team admins) the team's other keys. Newest first. */
  async listApiKeys(principal: Principal, after: string | null, n: number): Promise<ApiKeyRow[]> {
    return this.store.repos.apiKeys.listForUser({
      userId: principal.userId ?? '',
      tenantId: principal.tenantId,
      teamIds: principal.teamIds,
      after,
      limit: n,
    });
  }

  async revokeApiKey(principal: Principal, id: string): Promise<ApiKeyRow> {
    const key = await this.store.repos.apiKeys.byIdForUser(id, principal.userId ?? '', principal.tenantId);
    if (!key || (principal.teamIds && !principal.teamIds.includes(key.team_id))) {
      throw new ApiError('not_found', `API key ${id} was not found.`);
    }
    if (!key.revoked_at) {
      const at = this.now();
      key.revoked_at = at;
      await this.store.transaction(async (repos) => {
        await repos.apiKeys.revoke(id, at);
        await this.eventLog.record(repos, {
          tenantId: key.team_id,
          spaceId: key.space_id,
          actor: actorFromPrincipal(principal),
          code: 'api_key.revoked',
          message: `API key "${key.name}" was revoked.`,
          details: { apiKeyId: key.id, name: key.name, hint: key.hint },
        });
      });
    }
    return key;
  }

  /** Scopes a preset gives; used by the listing and docs. */
  static presetScopes(preset: ApiKeyPreset): readonly Scope[] {
    return API_KEY_PRESETS[preset];
  }

  static readonly allScopes = ALL_API_SCOPES;
}
