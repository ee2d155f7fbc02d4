import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import type { RepoContext } from '../index.ts';

/** One site request as the edge recorded it. */
export interface AccessLogLine {
  id: string;
  spaceId: string;
  versionId: string | null;
  at: string;
  host: string;
  method: string;
  path: string;
  status: number;
  bytes: number;
  durationMs: number;
  referrer: string | null;
  userAgent: string | null;
  country: string | null;
  requestId: string | null;
  visitor: string;
}

export interface AccessLogFilter {
  since?: string;
  until?: string;
  /** An exact status, or a class 1–5 (`4` = 400–499). */
  status?: number;
  statusClass?: number;
  pathPrefix?: string;
  requestId?: string;
}

/** Rows per INSERT: 15 columns each, well under SQLite's and PostgreSQL's bound-parameter limits. */
const CHUNK = 400;

const INSERT_LINE =
  'insert into access_log (id, space_id, version_id, at, host, method, path, status, bytes, duration_ms, referrer, user_agent, country, request_id, visitor) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
/** The prepared INSERT per SQLite connection (compiled once, run per line). */
const statements = new WeakMap<SQLite.Database, SQLite.Statement>();

type Row = {
  id: string;
  space_id: string;
  version_id: string | null;
  at: string;
  host: string;
  method: string;
  path: string;
  status: number;
  bytes: number | string;
  duration_ms: number;
  referrer: string | null;
  user_agent: string | null;
  country: string | null;
  request_id: string | null;
  visitor: string;
};

function lineOf(r: Row): AccessLogLine {
  return {
    id: r.id,
    spaceId: r.space_id,
    versionId: r.version_id,
    at: r.at,
    host: r.host,
    method: r.method,
    path: r.path,
    status: Number(r.status),
    bytes: Number(r.bytes),
    durationMs: Number(r.duration_ms),
    referrer: r.referrer,
    userAgent: r.user_agent,
    country: r.country,
    requestId: r.request_id,
    visitor: r.visitor,
  };
}

/** The raw access log: bulk appends from the edge's ring, filtered newest-first reads, retention. */
export class AccessLogRepository {
  constructor(private readonly ctx: RepoContext) {}

  /**
   * Appends lines. On SQLite inside a transaction (the flush's), one prepared statement runs per line
   * on the connection the transaction holds: building and compiling 400-row INSERTs cost more CPU
   * than SQLite spent storing them, on the process that also serves. Elsewhere, multi-row INSERTs.
   */
  async insertMany(lines: readonly AccessLogLine[]): Promise<void> {
    const sqlite = this.ctx.inTransaction ? this.ctx.database.sqlite : undefined;
    if (sqlite) {
      let st = statements.get(sqlite);
      if (!st) {
        st = sqlite.prepare(INSERT_LINE);
        statements.set(sqlite, st);
      }
      for (const l of lines) {
        st.run(
          l.id,
          l.spaceId,
          l.versionId,
          l.at,
          l.host,
          l.method,
          l.path,
          l.status,
          l.bytes,
          l.durationMs,
          l.referrer,
          l.userAgent,
          l.country,
          l.requestId,
          l.visitor,
        );
      }
      return;
    }
    for (let i = 0; i < lines.length; i += CHUNK) {
      const rows: Row[] = lines.slice(i, i + CHUNK).map((l) => ({
        id: l.id,
        space_id: l.spaceId,
        version_id: l.versionId,
        at: l.at,
        host: l.host,
        method: l.method,
        path: l.path,
        status: l.status,
        bytes: l.bytes,
        duration_ms: l.durationMs,
        referrer: l.referrer,
        user_agent: l.userAgent,
        country: l.country,
        request_id: l.requestId,
        visitor: l.visitor,
      }));
      await this.ctx.exec.insertInto('access_log').values(rows).execute();
    }
  }

  /** Lines of a space, newest first, with id < `after` when given. */
  async list(
    spaceId: string,
    filter: AccessLogFilter,
    after: string | null,
    limit: number,
  ): Promise<AccessLogLine[]> {
    let q = this.ctx.exec.selectFrom('access_log').selectAll().where('space_id', '=', spaceId);
    if (after) q = q.where('id', '<', after);
    if (filter.since) q = q.where('at', '>=', filter.since);
    if (filter.until) q = q.where('at', '<', filter.until);
    if (filter.status !== undefined) q = q.where('status', '=', filter.status);
    if (filter.statusClass !== undefined) {
      q = q
        .where('status', '>=', filter.statusClass * 100)
        .where('status', '<', filter.statusClass * 100 + 100);
    }
    if (filter.pathPrefix) {
      // A range, not LIKE: no wildcard escaping, and the same on both databases.
      q = q.where('path', '>=', filter.pathPrefix).where('path', '<', `${filter.pathPrefix}\uffff`);
    }
    if (filter.requestId) q = q.where('request_id', '=', filter.requestId);
    const rows = await q.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(lineOf);
  }

  /** Lines of a space newer than `after` (id order), for follow. */
  async newer(spaceId: string, after: string, limit: number): Promise<AccessLogLine[]> {
    const rows = await this.ctx.exec
      .selectFrom('access_log')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('id', '>', after)
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(lineOf);
  }

  /** Removes lines older than `before`; answers how many. */
  async prune(before: string): Promise<number> {
    const r = await this.ctx.exec.deleteFrom('access_log').where('at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows ?? 0);
  }

  /** Ever served (a line or a rollup exists). */
  async anyFor(spaceId: string): Promise<boolean> {
    const r = await this.ctx.exec
      .selectFrom('access_hourly')
      .select(sql<number>`1`.as('one'))
      .where('space_id', '=', spaceId)
      .limit(1)
      .executeTakeFirst();
    return r !== undefined;
  }
}
