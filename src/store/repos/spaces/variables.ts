import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type VariableRow = DB['variables'];

/**
 * Space variables as stored: `value` is the plain value or, for secrets, the sealed one. Sealing and
 * opening stay in the domain (VariableService); this repository never sees a secret in clear.
 */
export class VariableRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** A space's variables by name. */
  listForSpace(spaceId: string): Promise<VariableRow[]> {
    return this.ctx.exec
      .selectFrom('variables')
      .selectAll()
      .where('space_id', '=', spaceId)
      .orderBy('name')
      .execute();
  }

  async byName(spaceId: string, name: string): Promise<VariableRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('variables')
        .selectAll()
        .where('space_id', '=', spaceId)
        .where('name', '=', name)
        .executeTakeFirst()) ?? null
    );
  }

  /** Creates the variable or replaces its classification and value (its `created_at` stays). */
  async upsert(row: VariableRow): Promise<void> {
    await this.ctx.exec
      .insertInto('variables')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['space_id', 'name'])
          .doUpdateSet({ secret: row.secret, value: row.value, updated_at: row.updated_at }),
      )
      .execute();
  }

  /** True when the variable existed. */
  async delete(spaceId: string, name: string): Promise<boolean> {
    const r = await this.ctx.exec
      .deleteFrom('variables')
      .where('space_id', '=', spaceId)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Removes a space's variables (its purge). */
  async deleteForSpace(spaceId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('variables').where('space_id', '=', spaceId).execute();
  }
}
