import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type AccessCredentialRow = DB['access_credentials'];
export type AccessCredentialKind = 'link' | 'password' | 'machine';

/** Share links, password and machine credentials of a space (secrets hashed). */
export class AccessCredentialRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: AccessCredentialRow): Promise<void> {
    await this.ctx.exec.insertInto('access_credentials').values(row).execute();
  }

  async byId(spaceId: string, kind: AccessCredentialKind, id: string): Promise<AccessCredentialRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('access_credentials')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('kind', '=', kind)
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst()) ?? null
    );
  }

  /** A live (not revoked) link or machine credential by its token's hash, in one space. */
  async byHash(
    spaceId: string,
    kind: AccessCredentialKind,
    hash: string,
  ): Promise<AccessCredentialRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('access_credentials')
        .selectAll()
        .where('secret_hash', '=', hash)
        .where('space_id', '=', spaceId)
        .where('kind', '=', kind)
        .where('revoked_at', 'is', null)
        .executeTakeFirst()) ?? null
    );
  }

  listForSpace(spaceId: string, kind: AccessCredentialKind): Promise<AccessCredentialRow[]> {
    return this.ctx.exec
      .selectFrom('access_credentials')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('kind', '=', kind)
      .where('revoked_at', 'is', null)
      .orderBy('id', 'desc')
      .execute();
  }

  /** Every live credential of a space (the edge's view). */
  allForSpace(spaceId: string): Promise<AccessCredentialRow[]> {
    return this.ctx.exec
      .selectFrom('access_credentials')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async update(
    id: string,
    patch: Partial<Pick<AccessCredentialRow, 'name' | 'landing' | 'secret_hash' | 'token_sealed'>> & {
      updated_at: string;
      bumpGeneration?: boolean;
    },
  ): Promise<void> {
    const { bumpGeneration, ...set } = patch;
    await this.ctx.exec
      .updateTable('access_credentials')
      .set((eb) => (bumpGeneration ? { ...set, generation: eb('generation', '+', 1) } : set))
      .where('id', '=', id)
      .execute();
  }

  async revoke(spaceId: string, id: string, at: string): Promise<boolean> {
    const r = await this.ctx.exec
      .updateTable('access_credentials')
      .set({ revoked_at: at, updated_at: at })
      .where('space_id', '=', spaceId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async touch(id: string, at: string): Promise<void> {
    await this.ctx.exec
      .updateTable('access_credentials')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .execute();
  }
}
