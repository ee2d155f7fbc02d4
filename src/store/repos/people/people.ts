import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type PersonRow = DB['space_people'];

/** People invited to a space. Every read is scoped to the space. */
export class SpacePeopleRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: PersonRow): Promise<void> {
    await this.ctx.exec.insertInto('space_people').values(row).execute();
  }

  async byId(spaceId: string, id: string): Promise<PersonRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_people')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('id', '=', id)
        .where('status', '!=', 'removed')
        .executeTakeFirst()) ?? null
    );
  }

  async byEmail(spaceId: string, email: string): Promise<PersonRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_people')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('email', '=', email)
        .where('status', '!=', 'removed')
        .executeTakeFirst()) ?? null
    );
  }

  /** The person a sign-in link's token belongs to (any space: the caller checks the host's). */
  async byTokenHash(hash: string): Promise<PersonRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('space_people')
        .selectAll()
        .where('token_hash', '=', hash)
        .where('status', '!=', 'removed')
        .executeTakeFirst()) ?? null
    );
  }

  /** The space's people (not removed), oldest first, keyset on id. */
  list(spaceId: string, after: string | null, n: number): Promise<PersonRow[]> {
    let q = this.ctx.exec
      .selectFrom('space_people')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('status', '!=', 'removed');
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(n).execute();
  }

  /** A new sign-in link (resend); false when the person was removed meanwhile. */
  async setToken(spaceId: string, id: string, hash: string, expiresAt: string, at: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('space_people')
      .set({ token_hash: hash, token_expires_at: expiresAt, last_sent_at: at, updated_at: at })
      .where('space_id', '=', spaceId)
      .where('id', '=', id)
      .where('status', '!=', 'removed')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** The first use of the link: `invited` → `active`. */
  async markActive(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('space_people')
      .set({ status: 'active', accepted_at: at, updated_at: at })
      .where('id', '=', id)
      .where('status', '=', 'invited')
      .execute();
  }

  async remove(spaceId: string, id: string, at: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('space_people')
      .set({ status: 'removed', token_hash: null, token_expires_at: null, updated_at: at })
      .where('space_id', '=', spaceId)
      .where('id', '=', id)
      .where('status', '!=', 'removed')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
