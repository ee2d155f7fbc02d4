import type { Selectable } from 'kysely';
import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type MetaRow = Selectable<DB['meta']>;

/** Server-wide key/value settings (the main tenant's id, server secrets: see store/meta.ts). */
export class MetaRepository {
  constructor(private readonly ctx: RepoContext) {}

  async get(key: string): Promise<string | null> {
    const row = await this.ctx.exec
      .selectFrom('meta')
      .select('value')
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value ?? null;
  }

  /** Adds a key; throws a unique violation when it exists (the caller decides who won). */
  async insert(key: string, value: string): Promise<void> {
    await this.ctx.exec.insertInto('meta').values({ key, value }).execute();
  }
}
