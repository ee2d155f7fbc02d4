import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type AccessRequestRow = DB['access_requests'];

/** Visitors' requests for access to a space. */
export class AccessRequestRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: AccessRequestRow): Promise<void> {
    await this.ctx.exec.insertInto('access_requests').values(row).execute();
  }

  async byId(spaceId: string, id: string): Promise<AccessRequestRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('access_requests')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('id', '=', id)
        .executeTakeFirst()) ?? null
    );
  }

  /** An open request (unverified or pending) from one address, if any. */
  async openFor(spaceId: string, email: string): Promise<AccessRequestRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('access_requests')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('email', '=', email)
        .where('status', 'in', ['unverified', 'pending'])
        .executeTakeFirst()) ?? null
    );
  }

  async byVerifyHash(hash: string): Promise<AccessRequestRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('access_requests')
        .selectAll()
        .where('verify_token_hash', '=', hash)
        .executeTakeFirst()) ?? null
    );
  }

  /** Requests of a space in one status (or all), newest first, keyset on id. */
  list(
    spaceId: string,
    status: string | null,
    before: string | null,
    n: number,
  ): Promise<AccessRequestRow[]> {
    let q = this.ctx.exec.selectFrom('access_requests').selectAll().where('space_id', '=', spaceId);
    q = status ? q.where('status', '=', status) : q.where('status', '!=', 'unverified');
    if (before) q = q.where('id', '<', before);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /** Unverified → pending (the inbox was proven); false when it was not unverified any more. */
  async markVerified(id: string, at: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('access_requests')
      .set({ status: 'pending', verified_at: at, verify_token_hash: null, verify_expires_at: null })
      .where('id', '=', id)
      .where('status', '=', 'unverified')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Pending → approved|denied, once. */
  async resolve(
    spaceId: string,
    id: string,
    status: 'approved' | 'denied',
    by: string | null,
    personId: string | null,
    at: string,
  ): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('access_requests')
      .set({ status, resolved_by: by, person_id: personId, resolved_at: at })
      .where('space_id', '=', spaceId)
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** A new confirmation link for an unverified request (asked again). */
  async refreshToken(id: string, hash: string, expiresAt: string): Promise<void> {
    await this.ctx.exec
      .updateTable('access_requests')
      .set({ verify_token_hash: hash, verify_expires_at: expiresAt })
      .where('id', '=', id)
      .where('status', '=', 'unverified')
      .execute();
  }
}
