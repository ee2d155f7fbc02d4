import type { DB } from '../schema.ts';
import type { RepoContext } from './index.ts';

export type StorageObjectRow = DB['storage_objects'];

/** Objects of runtime spaces' stores and their read keys (behaviour §11). */
export class StorageObjectRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: StorageObjectRow): Promise<void> {
    await this.ctx.exec.insertInto('storage_objects').values(row).execute();
  }

  async get(spaceId: string, id: string): Promise<StorageObjectRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('storage_objects')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('id', '=', id)
        .executeTakeFirst()) ?? null
    );
  }

  /** Removes an object; the row it was, or null when there was none. */
  async delete(spaceId: string, id: string): Promise<StorageObjectRow | null> {
    const row = await this.get(spaceId, id);
    if (!row) return null;
    const r = await this.ctx.exec
      .deleteFrom('storage_objects')
      .where('space_id', '=', spaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1 ? row : null;
  }

  /** A space's objects, newest first (`created_at`, then id), after a keyset position. */
  async list(
    spaceId: string,
    after: { createdAt: string; id: string } | null,
    limit: number,
  ): Promise<StorageObjectRow[]> {
    let q = this.ctx.exec.selectFrom('storage_objects').selectAll().where('space_id', '=', spaceId);
    if (after)
      q = q.where((eb) =>
        eb.or([
          eb('created_at', '<', after.createdAt),
          eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
        ]),
      );
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Objects and bytes a space stores. */
  async usage(spaceId: string): Promise<{ objects: number; bytes: number }> {
    const r = await this.ctx.exec
      .selectFrom('storage_objects')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('size').as('bytes')])
      .where('space_id', '=', spaceId)
      .executeTakeFirst();
    return { objects: Number(r?.n ?? 0), bytes: Number(r?.bytes ?? 0) };
  }

  /** Whether any object (of any space) still holds these bytes. */
  async holds(sha256: string): Promise<boolean> {
    const r = await this.ctx.exec
      .selectFrom('storage_objects')
      .select('id')
      .where('sha256', '=', sha256)
      .limit(1)
      .executeTakeFirst();
    return r !== undefined;
  }

  /** Every digest an object names (the blob sweep keeps them). */
  async allDigests(): Promise<string[]> {
    const rows = await this.ctx.exec.selectFrom('storage_objects').select('sha256').distinct().execute();
    return rows.map((r) => r.sha256);
  }

  async readKey(spaceId: string): Promise<string | null> {
    const r = await this.ctx.exec
      .selectFrom('space_storage_keys')
      .select('read_key')
      .where('space_id', '=', spaceId)
      .executeTakeFirst();
    return r?.read_key ?? null;
  }

  /** Sets the space's read key (first use, or a rotation). */
  async putReadKey(spaceId: string, key: string, at: string): Promise<void> {
    await this.ctx.exec
      .insertInto('space_storage_keys')
      .values({ space_id: spaceId, read_key: key, rotated_at: at })
      .onConflict((oc) => oc.column('space_id').doUpdateSet({ read_key: key, rotated_at: at }))
      .execute();
  }

  /** Forgets a purged space's objects and read key (their bytes go with the next blob sweep). */
  async deleteForSpace(spaceId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('storage_objects').where('space_id', '=', spaceId).execute();
    await this.ctx.exec.deleteFrom('space_storage_keys').where('space_id', '=', spaceId).execute();
  }
}
