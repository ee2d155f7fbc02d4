import type { DB } from '../../schema.ts';
import type { RepoContext } from '../index.ts';

export type BuildLogRow = DB['build_logs'];

/** A build's log lines; ids are time-ordered, so id order is the order they were written. */
export class BuildLogRepository {
  constructor(private readonly ctx: RepoContext) {}

  async append(rows: BuildLogRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 200) {
      await this.ctx.exec
        .insertInto('build_logs')
        .values(rows.slice(i, i + 200))
        .execute();
    }
  }

  /** Newest first, with ids below `after` (keyset paging). */
  listNewestFirst(buildId: string, after: string | null, n: number): Promise<BuildLogRow[]> {
    let q = this.ctx.exec.selectFrom('build_logs').selectAll().where('build_id', '=', buildId);
    if (after) q = q.where('id', '<', after);
    return q.orderBy('id', 'desc').limit(n).execute();
  }

  /** Oldest first, with ids above `after` (what a follower reads next). */
  listAfter(buildId: string, after: string | null, n: number): Promise<BuildLogRow[]> {
    let q = this.ctx.exec.selectFrom('build_logs').selectAll().where('build_id', '=', buildId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id', 'asc').limit(n).execute();
  }
}
