import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type TenantRow = Selectable<DB['tenants']>;

/** Tenants: the top of the ownership tree (one, "Main", today). */
export class TenantRepository {
  constructor(private readonly ctx: RepoContext) {}

  async create(row: TenantRow): Promise<void> {
    await this.ctx.exec.insertInto('tenants').values(row).execute();
  }

  async byId(id: string): Promise<TenantRow | null> {
    const row = await this.ctx.exec.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
    return row ?? null;
  }
}
