import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { newId } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { SCOPES } from '../auth/scopes.ts';
import type { AccountService, UserRow } from './service.ts';

const MAIN_TENANT_KEY = 'main_tenant_id';

/** The main tenant's id, created on first use (concurrent first uses agree on one). */
export async function ensureMainTenant(store: Store, clock: Clock): Promise<string> {
  const existing = await store.repos.meta.get(MAIN_TENANT_KEY);
  if (existing) return existing;
  const id = newId('tnt');
  try {
    await store.transaction(async (repos) => {
      await repos.tenants.create({ id, name: 'Main', created_at: clock.now().toISOString() });
      await repos.meta.insert(MAIN_TENANT_KEY, id);
    });
    return id;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const again = await store.repos.meta.get(MAIN_TENANT_KEY);
    if (!again) throw err;
    return again;
  }
}

export interface BootstrapResult {
  email: string;
  password: string;
  apiKey: string;
  teamSlug: string;
}

/**
 * On the first start (no user yet) creates the owner account, its team and an API key, and returns
 * them so the caller can print them once. Returns null when the server was bootstrapped before.
 */
export async function bootstrapOwner(
  store: Store,
  config: Config,
  accounts: AccountService,
): Promise<BootstrapResult | null> {
  if (await store.repos.users.any()) return null;
  const password = randomBytes(12).toString('base64url');
  let user;
  try {
    user = await accounts.createUser({ email: config.ownerEmail, name: 'Owner', password, isAdmin: true });
  } catch (err) {
    // Another instance bootstrapped at the same moment.
    if ((err as { code?: string }).code === 'email_taken') return null;
    throw err;
  }
  const { token, teamSlug } = await ownerKey(store, accounts, user, 'bootstrap', config.bootstrapToken);
  return { email: user.email, password, apiKey: token, teamSlug };
}

/** A team_admin API key of the owner for their oldest team (the one made with the account). */
async function ownerKey(
  store: Store,
  accounts: AccountService,
  user: UserRow,
  name: string,
  fixedToken: string | null,
): Promise<{ token: string; teamSlug: string }> {
  const team = await store.repos.teams.oldestOwnedBy(user.id);
  if (!team) throw new Error(`the owner ${user.id} owns no team`);
  const owner: Principal = {
    kind: 'session',
    credentialId: name,
    tenantId: user.tenant_id,
    userId: user.id,
    teamIds: null,
    scopes: new Set(SCOPES),
    spaceId: null,
  };
  const { token } = await accounts.createApiKey(
    owner,
    { name, teamId: team.id, preset: 'team_admin' },
    fixedToken ?? undefined,
  );
  return { token, teamSlug: team.slug };
}

export interface OwnerReset {
  email: string;
  password: string;
  /** A new team_admin key, when one was asked for. */
  apiKey: { token: string; teamSlug: string } | null;
}

/**
 * `spaces admin reset-owner`: the way back in when the first start's credentials were lost. Gives the
 * owner a new password (signing out their sessions) and, on request, a new API key. Runs with access
 * to the database, never over HTTP. Null when there is no owner yet (the server never started).
 */
export async function resetOwner(
  store: Store,
  accounts: AccountService,
  options: { apiKey: boolean },
): Promise<OwnerReset | null> {
  const user = await accounts.findOwner();
  if (!user) return null;
  const password = randomBytes(12).toString('base64url');
  await accounts.resetPassword(user.id, password);
  const apiKey = options.apiKey ? await ownerKey(store, accounts, user, 'reset-owner', null) : null;
  return { email: user.email, password, apiKey };
}
