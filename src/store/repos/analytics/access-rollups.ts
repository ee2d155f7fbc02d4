import { sql } from 'kysely';
import type { RepoContext } from '../index.ts';

export interface HourlyDelta {
  spaceId: string;
  hour: string;
  requests: number;
  bytes: number;
  s2xx: number;
  s3xx: number;
  s4xx: number;
  s5xx: number;
}

export interface TopDelta {
  spaceId: string;
  day: string;
  kind: 'path' | 'referrer' | 'country';
  key: string;
  requests: number;
}

export interface HourlyRow extends Omit<HourlyDelta, 'spaceId'> {}

const CHUNK = 400;
const n = (v: number | string | null | undefined) => Number(v ?? 0);

/**
 * The rollups analytics and usage read: hourly counters, distinct visitor hashes per day and the
 * per-day top keys. Written by adding deltas (an upsert that sums), so flushes from several
 * instances add up.
 */
export class AccessRollupRepository {
  constructor(private readonly ctx: RepoContext) {}

  async addHourly(deltas: readonly HourlyDelta[]): Promise<void> {
    for (let i = 0; i < deltas.length; i += CHUNK) {
      const rows = deltas.slice(i, i + CHUNK).map((d) => ({
        space_id: d.spaceId,
        hour: d.hour,
        requests: d.requests,
        bytes: d.bytes,
        s2xx: d.s2xx,
        s3xx: d.s3xx,
        s4xx: d.s4xx,
        s5xx: d.s5xx,
      }));
      await this.ctx.exec
        .insertInto('access_hourly')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['space_id', 'hour']).doUpdateSet({
            requests: sql`access_hourly.requests + excluded.requests`,
            bytes: sql`access_hourly.bytes + excluded.bytes`,
            s2xx: sql`access_hourly.s2xx + excluded.s2xx`,
            s3xx: sql`access_hourly.s3xx + excluded.s3xx`,
            s4xx: sql`access_hourly.s4xx + excluded.s4xx`,
            s5xx: sql`access_hourly.s5xx + excluded.s5xx`,
          }),
        )
        .execute();
    }
  }

  /**
   * Adds visitor hashes (a hash already there that day is skipped) and adds the number that were new
   * to the day's count in `access_daily`, which is what analytics sums.
   */
  async addVisitors(rows: ReadonlyArray<{ spaceId: string; day: string; visitor: string }>): Promise<void> {
    const byDay = new Map<string, Array<{ space_id: string; day: string; visitor: string }>>();
    for (const r of rows) {
      const k = `${r.spaceId}\n${r.day}`;
      let list = byDay.get(k);
      if (!list) {
        list = [];
        byDay.set(k, list);
      }
      list.push({ space_id: r.spaceId, day: r.day, visitor: r.visitor });
    }
    const added: Array<{ space_id: string; day: string; visitors: number }> = [];
    for (const list of byDay.values()) {
      let inserted = 0;
      for (let i = 0; i < list.length; i += CHUNK) {
        const r = await this.ctx.exec
          .insertInto('access_visitors')
          .values(list.slice(i, i + CHUNK))
          .onConflict((oc) => oc.doNothing())
          .executeTakeFirst();
        inserted += Number(r.numInsertedOrUpdatedRows ?? 0);
      }
      if (inserted > 0) added.push({ space_id: list[0]!.space_id, day: list[0]!.day, visitors: inserted });
    }
    for (let i = 0; i < added.length; i += CHUNK) {
      await this.ctx.exec
        .insertInto('access_daily')
        .values(added.slice(i, i + CHUNK))
        .onConflict((oc) =>
          oc.columns(['space_id', 'day']).doUpdateSet({
            visitors: sql`access_daily.visitors + excluded.visitors`,
          }),
        )
        .execute();
    }
  }

  async addTop(deltas: readonly TopDelta[]): Promise<void> {
    for (let i = 0; i < deltas.length; i += CHUNK) {
      await this.ctx.exec
        .insertInto('access_top')
        .values(
          deltas.slice(i, i + CHUNK).map((d) => ({
            space_id: d.spaceId,
            day: d.day,
            kind: d.kind,
            key: d.key,
            requests: d.requests,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['space_id', 'day', 'kind', 'key']).doUpdateSet({
            requests: sql`access_top.requests + excluded.requests`,
          }),
        )
        .execute();
    }
  }

  /** Hourly rows of a space from `fromHour` (inclusive), in hour order. */
  async hourly(spaceId: string, fromHour: string): Promise<HourlyRow[]> {
    const rows = await this.ctx.exec
      .selectFrom('access_hourly')
      .selectAll()
      .where('space_id', '=', spaceId)
      .where('hour', '>=', fromHour)
      .orderBy('hour')
      .execute();
    return rows.map((r) => ({
      hour: r.hour,
      requests: n(r.requests),
      bytes: n(r.bytes),
      s2xx: n(r.s2xx),
      s3xx: n(r.s3xx),
      s4xx: n(r.s4xx),
      s5xx: n(r.s5xx),
    }));
  }

  /**
   * Distinct visitor hashes per day summed over days from `fromDay` (a visitor counts once a day),
   * from the per-day counts: one row a day, however many visitors.
   */
  async visitors(spaceId: string, fromDay: string): Promise<number> {
    const r = await this.ctx.exec
      .selectFrom('access_daily')
      .select((eb) => eb.fn.sum<number | string>('visitors').as('c'))
      .where('space_id', '=', spaceId)
      .where('day', '>=', fromDay)
      .executeTakeFirst();
    return n(r?.c);
  }

  /** The `limit` keys of a kind with the most requests over days from `fromDay`. */
  async top(
    spaceId: string,
    kind: TopDelta['kind'],
    fromDay: string,
    limit: number,
  ): Promise<Array<{ key: string; requests: number }>> {
    const rows = await this.ctx.exec
      .selectFrom('access_top')
      .select(['key', (eb) => eb.fn.sum<number | string>('requests').as('total')])
      .where('space_id', '=', spaceId)
      .where('kind', '=', kind)
      .where('day', '>=', fromDay)
      .groupBy('key')
      .orderBy('total', 'desc')
      .orderBy('key')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ key: r.key, requests: n(r.total) }));
  }

  /** Requests and bytes over spaces from `fromHour`. */
  async totals(spaceIds: readonly string[], fromHour: string): Promise<{ requests: number; bytes: number }> {
    if (spaceIds.length === 0) return { requests: 0, bytes: 0 };
    const r = await this.ctx.exec
      .selectFrom('access_hourly')
      .select((eb) => [
        eb.fn.sum<number | string>('requests').as('r'),
        eb.fn.sum<number | string>('bytes').as('b'),
      ])
      .where('space_id', 'in', spaceIds)
      .where('hour', '>=', fromHour)
      .executeTakeFirst();
    return { requests: n(r?.r), bytes: n(r?.b) };
  }

  /**
   * Drops rollups older than `beforeDay` (visitor hashes, their daily counts and top keys) — hourly
   * counters are kept.
   */
  async prune(beforeDay: string): Promise<number> {
    const a = await this.ctx.exec
      .deleteFrom('access_visitors')
      .where('day', '<', beforeDay)
      .executeTakeFirst();
    const b = await this.ctx.exec.deleteFrom('access_top').where('day', '<', beforeDay).executeTakeFirst();
    await this.ctx.exec.deleteFrom('access_daily').where('day', '<', beforeDay).execute();
    return Number(a.numDeletedRows ?? 0) + Number(b.numDeletedRows ?? 0);
  }

  /**
   * Keeps the `keep` most requested keys of each (space, day, kind) for days in [fromDay, beforeDay)
   * and deletes the rest, so a 30-day top list reads at most `keep` rows a day. Answers how many went.
   */
  async compactTop(fromDay: string, beforeDay: string, keep: number): Promise<number> {
    const r = await sql`delete from access_top
      where day >= ${fromDay} and day < ${beforeDay}
      and (space_id, day, kind, key) in (
        select space_id, day, kind, key from (
          select space_id, day, kind, key,
            row_number() over (partition by space_id, day, kind order by requests desc, key) as rn
          from access_top where day >= ${fromDay} and day < ${beforeDay}
        ) ranked where rn > ${keep}
      )`.execute(this.ctx.exec);
    return Number(r.numAffectedRows ?? 0);
  }
}
