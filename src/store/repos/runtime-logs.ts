import type { DB } from '../schema.ts';
import type { RepoContext } from './index.ts';

export type RuntimeLogRow = DB['runtime_logs'];

export interface RuntimeLogFilter {
  since?: string;
  until?: string;
  requestId?: string;
  level?: string;
  handler?: string;
}

/** Rows per INSERT (11 columns each: under both databases' bound-parameter limits). */
const CHUNK = 500;

/** Runtime log lines: appends from the log sink, newest-first reads, follow, retention. */
export class RuntimeLogRepository {
  constructor(private readonly ctx: RepoContext) {}

  async insertMany(rows: readonly RuntimeLogRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK)
      await this.ctx.exec
        .insertInto('runtime_logs')
        .values(rows.slice(i, i + CHUNK))
        .execute();
  }

  /** A space's lines, newest first, with id < `after` when given. */
  async list(
    spaceId: string,
    filter: RuntimeLogFilter,
    after: string | null,
    limit: number,
  ): Promise<RuntimeLogRow[]> {
    let q = this.ctx.exec.selectFrom('runtime_logs').selectAll().where('space_id', '=', spaceId);
    if (after) q = q.where('id', '<', after);
    if (filter.since) q = q.where('at', '>=', filter.since);
    if (filter.until) q = q.where('at', '<', filter.until);
    if (filter.requestId) q = q.where('request_id', '=', filter.requestId);
    if (filter.level) q = q.where('level', '=', filter.level);
    if (filter.handler) q = q.where('handler', '=', filter.handler);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  /** A space's lines after `after` (an id), oldest first: what a follower has not seen. */
  async newer(
    spaceId: string,
    after: string,
    limit: number,
    filter: RuntimeLogFilter = {},
  ): Promise<RuntimeLogRow[]> {
    let q = this.ctx.exec
      .selectFrom('runtime_logs')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('id', '>', after);
    if (filter.requestId) q = q.where('request_id', '=', filter.requestId);
    if (filter.level) q = q.where('level', '=', filter.level);
    if (filter.handler) q = q.where('handler', '=', filter.handler);
    return q.orderBy('id', 'asc').limit(limit).execute();
  }

  /** Removes lines older than `before`. */
  async sweep(before: string): Promise<number> {
    const r = await this.ctx.exec.deleteFrom('runtime_logs').where('at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Forgets a purged space's runtime log lines. */
  async deleteForSpace(spaceId: string): Promise<void> {
    await this.ctx.exec.deleteFrom('runtime_logs').where('space_id', '=', spaceId).execute();
  }
}
