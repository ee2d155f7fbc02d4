import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';
import type { SpaceRow } from './spaces.ts';

export type SpaceKeyRow = DB['space_keys'];

/** A key found by its hash, with what the credential resolver needs of its space. */
export interface SpaceKeyLookup {
  key_id: string;
  token_hash: string;
  revoked_at: string | null;
  last_used_at: string | null;
  continuation: SpaceKeyRow['continuation'];
  space_id: string;
  tenant_id: string;
  anonymous: number;
}

/**
 * Space keys (`sfc_`) of anonymous spaces, stored as hashes. Lookups are by hash or id; comparing
 * the digest in constant time stays with the domain.
 */
export class SpaceKeyRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(
    row: Omit<SpaceKeyRow, 'continuation' | 'continuation_user_id' | 'continuation_key_id'>,
  ): Promise<void> {
    await this.ctx.exec.insertInto('space_keys').values(row).execute();
  }

  async byId(id: string): Promise<SpaceKeyRow | null> {
    return (
      (await this.ctx.exec.selectFrom('space_keys').selectAll().where('id', '=', id).executeTakeFirst()) ??
      null
    );
  }

  /** Anonymous spaces still live (not disabled, not deleted) whose key was made from `ip`. */
  async countLiveAnonymousForIp(ip: string): Promise<number> {
    const { n } = await this.ctx.exec
      .selectFrom('space_keys')
      .innerJoin('spaces', 'spaces.id', 'space_keys.space_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('space_keys.created_ip', '=', ip)
      .where('spaces.anonymous', '=', 1)
      .where('spaces.disabled_at', 'is', null)
      .where('spaces.deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  /** The key with this hash (revoked or not) and its space's id, tenant and anonymity. */
  async byHash(hash: string): Promise<SpaceKeyLookup | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_keys')
        .innerJoin('spaces', 'spaces.id', 'space_keys.space_id')
        .select([
          'space_keys.id as key_id',
          'space_keys.token_hash',
          'space_keys.revoked_at',
          'space_keys.last_used_at',
          'space_keys.continuation',
          'spaces.id as space_id',
          'spaces.tenant_id',
          'spaces.anonymous',
        ])
        .where('space_keys.token_hash', '=', hash)
        .executeTakeFirst()) ?? null
    );
  }

  /** The key with this hash and its whole space row (for a claim). */
  async withSpaceByHash(
    hash: string,
  ): Promise<(SpaceRow & { key_id: string; token_hash: string; revoked_at: string | null }) | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_keys')
        .innerJoin('spaces', 'spaces.id', 'space_keys.space_id')
        .selectAll('spaces')
        .select(['space_keys.id as key_id', 'space_keys.token_hash', 'space_keys.revoked_at'])
        .where('space_keys.token_hash', '=', hash)
        .executeTakeFirst()) ?? null
    );
  }

  /** The key with this id, if its space is in the tenant, with the whole space row and its continuation. */
  async withSpaceById(
    tenantId: string,
    keyId: string,
  ): Promise<
    | (SpaceRow & {
        key_revoked_at: string | null;
        continuation: SpaceKeyRow['continuation'];
        continuation_user_id: string | null;
      })
    | null
  > {
    return (
      (await this.ctx.exec
        .selectFrom('space_keys')
        .innerJoin('spaces', 'spaces.id', 'space_keys.space_id')
        .selectAll('spaces')
        .select([
          'space_keys.revoked_at as key_revoked_at',
          'space_keys.continuation',
          'space_keys.continuation_user_id',
        ])
        .where('space_keys.id', '=', keyId)
        .where('spaces.tenant_id', '=', tenantId)
        .executeTakeFirst()) ?? null
    );
  }

  async touchLastUsed(id: string, at: string): Promise<void> {
    await this.ctx.exec.updateTable('space_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  /** After a claim with continuation: the key becomes a one-use voucher of `userId`. */
  async allowContinuation(id: string, userId: string): Promise<void> {
    await this.ctx.exec
      .updateTable('space_keys')
      .set({ continuation: 'available', continuation_user_id: userId })
      .where('id', '=', id)
      .execute();
  }

  /** Spends the voucher: true for exactly one caller while it was available. */
  async spendContinuation(id: string): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('space_keys')
      .set({ continuation: 'used' })
      .where('id', '=', id)
      .where('continuation', '=', 'available')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Records the API key a voucher was exchanged for. */
  async setContinuationKey(id: string, apiKeyId: string): Promise<void> {
    await this.ctx.exec
      .updateTable('space_keys')
      .set({ continuation_key_id: apiKeyId })
      .where('id', '=', id)
      .execute();
  }

  async revoke(id: string, at: string): Promise<void> {
    await this.ctx.exec.updateTable('space_keys').set({ revoked_at: at }).where('id', '=', id).execute();
  }

  /** Revokes every live key of a space (its purge). */
  async revokeForSpace(spaceId: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('space_keys')
      .set({ revoked_at: at })
      .where('space_id', '=', spaceId)
      .where('revoked_at', 'is', null)
      .execute();
  }
}
