import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { newId } from '../../ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { DB } from '../../store/schema.ts';
import type { Principal } from '../auth/principal.ts';
import { SCOPES } from '../auth/scopes.ts';
import type { AccountService, UserRow } from './service.ts';

/** The main tenant's id, created on first use. */
export async function ensureMainTenant(db: Kysely<DB>, clock: Clock): Promise<string> {
  const row = await db
    .selectFrom('meta')
    .select('value')
    .where('key', '=', 'main_tenant_id')
    .executeTakeFirst();
  if (row) return row.value;
  const id = newId('tnt');
  try {
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('tenants')
        .values({ id, name: 'Main', created_at: clock.now().toISOString() })
        .execute();
      await trx.insertInto('meta').values({ key: 'main_tenant_id', value: id }).execute();
    });
    return id;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const again = await db
      .selectFrom('meta')
      .select('value')
      .where('key', '=', 'main_tenant_id')
      .executeTakeFirstOrThrow();
    return again.value;
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
  db: Kysely<DB>,
  config: Config,
  accounts: AccountService,
): Promise<BootstrapResult | null> {
  const any = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (any) return null;
  const password = randomBytes(12).toString('base64url');
  let user;
  try {
    user = await accounts.createUser({ email: config.ownerEmail, name: 'Owner', password, isAdmin: true });
  } catch (err) {
    // Another instance bootstrapped at the same moment.
    if ((err as { code?: string }).code === 'email_taken') return null;
    throw err;
  }
  const { token, teamSlug } = await ownerKey(db, accounts, user, 'bootstrap', config.bootstrapToken);
  return { email: user.email, password, apiKey: token, teamSlug };
}

/** A team_admin API key of the owner for their oldest team (the one made with the account). */
async function ownerKey(
  db: Kysely<DB>,
  accounts: AccountService,
  user: UserRow,
  name: string,
  fixedToken: string | null,
): Promise<{ token: string; teamSlug: string }> {
  const team = await db
    .selectFrom('teams')
    .innerJoin('team_members', 'team_members.team_id', 'teams.id')
    .select(['teams.id', 'teams.slug'])
    .where('team_members.user_id', '=', user.id)
    .where('team_members.role', '=', 'owner')
    .orderBy('teams.id')
    .executeTakeFirstOrThrow();
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
  db: Kysely<DB>,
  accounts: AccountService,
  options: { apiKey: boolean },
): Promise<OwnerReset | null> {
  const user = await accounts.findOwner();
  if (!user) return null;
  const password = randomBytes(12).toString('base64url');
  await accounts.resetPassword(user.id, password);
  const apiKey = options.apiKey ? await ownerKey(db, accounts, user, 'reset-owner', null) : null;
  return { email: user.email, password, apiKey };
}
