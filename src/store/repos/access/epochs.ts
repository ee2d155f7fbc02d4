import type { RepoContext } from '../index.ts';

/** Per space, the epoch visitor sessions carry: logout-all bumps it and every older session ends. */
export class AccessEpochRepository {
  constructor(private readonly ctx: RepoContext) {}

  async get(spaceId: string): Promise<number> {
    const r = await this.ctx.exec
      .selectFrom('access_epochs')
      .select('epoch')
      .where('space_id', '=', spaceId)
      .executeTakeFirst();
    return r?.epoch ?? 0;
  }

  /** One more epoch (atomic); answers the new one. */
  async bump(spaceId: string, at: string): Promise<number> {
    await this.ctx.exec
      .insertInto('access_epochs')
      .values({ space_id: spaceId, epoch: 1, updated_at: at })
      .onConflict((oc) =>
        oc
          .column('space_id')
          .doUpdateSet((eb) => ({ epoch: eb('access_epochs.epoch', '+', 1), updated_at: at })),
      )
      .execute();
    return this.get(spaceId);
  }
}
