import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type TagVersionRow = DB['tag_versions'];

/** A graph's JSON and the counts listed beside it. */
export interface TagGraphWrite {
  graph: string;
  tag_count: number;
  trigger_count: number;
  variable_count: number;
}

/** Versions of a team's tag graph. Every read is scoped to the team. */
export class TagVersionRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insert(row: TagVersionRow): Promise<void> {
    await this.ctx.exec.insertInto('tag_versions').values(row).execute();
  }

  /** A version of the team, or null (another team's version is not found). */
  async byId(teamId: string, id: string): Promise<TagVersionRow | null> {
    return (
      (await this.ctx.exec
        .selectFrom('tag_versions')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .executeTakeFirst()) ?? null
    );
  }

  /** The team's versions, newest first, `n` after the id `after`. */
  listForTeam(teamId: string, after: string | null, n: number): Promise<TagVersionRow[]> {
    let q = this.ctx.exec.selectFrom('tag_versions').selectAll().where('team_id', '=', teamId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /**
   * Replaces a draft's graph and bumps its revision, only while it is a draft at `expectedRevision`:
   * of two writers holding the same revision exactly one gets true.
   */
  async replaceGraph(
    id: string,
    expectedRevision: number,
    write: TagGraphWrite,
    at: string,
  ): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('tag_versions')
      .set((eb) => ({ ...write, graph_revision: eb('graph_revision', '+', 1), updated_at: at }))
      .where('id', '=', id)
      .where('status', '=', 'draft')
      .where('graph_revision', '=', expectedRevision)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Moves a version of the team to a new status when it is in one of `from`; false otherwise. */
  async transition(
    teamId: string,
    id: string,
    from: readonly string[],
    set: Partial<Omit<TagVersionRow, 'id' | 'team_id'>>,
  ): Promise<boolean> {
    const res = await this.ctx.exec
      .updateTable('tag_versions')
      .set(set)
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .where('status', 'in', [...from])
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
}
