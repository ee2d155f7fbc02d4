import type { Clock } from '../../clock.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { newId, newToken } from '../../ids.ts';
import type { OAuthAppRow } from '../../store/repos/identity/oauth-apps.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { isScope, SCOPES } from '../auth/scopes.ts';
import { hashToken } from '../auth/tokens.ts';
import type { TeamService } from '../teams/service.ts';
import { type ClientType, redirectUriProblem } from './clients.ts';
import { CLIENT_SECRET_PREFIX } from './lifetimes.ts';

export type AppRow = OAuthAppRow;

/** A team's registered OAuth apps: created, changed and deleted by the team's admins. */
export class OAuthApps {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly teams: TeamService,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  private checkInput(input: { redirectUris?: string[]; scopes?: string[] }): void {
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
  }

  async create(
    p: Principal,
    teamRef: string,
    input: { name: string; type: ClientType; redirectUris: string[]; scopes: string[] },
  ): Promise<{ app: AppRow; secret: string | null }> {
    const view = await this.teams.authorize(p, teamRef, 'team.update');
    this.checkInput(input);
    const secret = input.type === 'confidential' ? newToken(CLIENT_SECRET_PREFIX) : null;
    const now = this.now();
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
    await this.store.repos.oauthApps.create(app);
    return { app, secret };
  }

  async list(p: Principal, teamRef: string, after: string | null, n: number): Promise<AppRow[]> {
    const view = await this.teams.authorize(p, teamRef, 'team.update');
    return this.store.repos.oauthApps.listForTeam(view.team.id, after, n);
  }

  async get(p: Principal, teamRef: string, appId: string): Promise<AppRow> {
    const view = await this.teams.authorize(p, teamRef, 'team.update');
    const app = await this.store.repos.oauthApps.byIdInTeam(appId, view.team.id);
    if (!app) throw new ApiError('not_found', `OAuth app ${appId} was not found.`);
    return app;
  }

  async update(
    p: Principal,
    teamRef: string,
    appId: string,
    input: { name?: string; redirectUris?: string[]; scopes?: string[] },
  ): Promise<AppRow> {
    const app = await this.get(p, teamRef, appId);
    this.checkInput(input);
    const patch: Partial<AppRow> = { updated_at: this.now() };
    if (input.name !== undefined) patch.name = input.name;
    if (input.redirectUris !== undefined) patch.redirect_uris = JSON.stringify(input.redirectUris);
    if (input.scopes !== undefined) patch.scopes = JSON.stringify([...new Set(input.scopes)]);
    await this.store.repos.oauthApps.update(app.id, patch);
    return { ...app, ...patch };
  }

  /** Deletes the app and revokes every token issued to it. */
  async delete(p: Principal, teamRef: string, appId: string): Promise<void> {
    const app = await this.get(p, teamRef, appId);
    const now = this.now();
    await this.store.transaction(async (repos) => {
      await repos.oauthTokens.revokeForClient(app.id, now);
      await repos.oauthCodes.deleteForClient(app.id);
      await repos.oauthDeviceCodes.deleteForClient(app.id);
      await repos.oauthApps.delete(app.id);
    });
  }

  /** A new secret, shown once; the old one stops working at once. */
  async rotateSecret(p: Principal, teamRef: string, appId: string): Promise<{ app: AppRow; secret: string }> {
    const app = await this.get(p, teamRef, appId);
    if (app.client_type !== 'confidential') {
      fail('oauth_app_public', `OAuth app ${app.id} is a public client and has no secret.`);
    }
    const secret = newToken(CLIENT_SECRET_PREFIX);
    const patch = {
      secret_hash: hashToken(secret),
      secret_hint: secret.slice(-4),
      updated_at: this.now(),
    };
    await this.store.repos.oauthApps.update(app.id, patch);
    return { app: { ...app, ...patch }, secret };
  }
}
