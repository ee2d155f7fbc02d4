import { sql } from 'kysely';
import type { DB } from '../../schema.ts';
import type { Executor, RepoContext } from '../index.ts';

export type EventRow = DB['events'];

/** Which events a listing wants. Codes: exact codes, and prefixes (`space.` for `space.*`). */
export interface EventFilter {
  tenantIds: string[];
  spaceId?: string;
  codes?: string[];
  codePrefixes?: string[];
  /** Inclusive lower bound on `created_at` (ISO). */
  since?: string;
  /** Exclusive upper bound on `created_at` (ISO). */
  until?: string;
}

/**
 * The event log (outbox). `nextSequence` and `insert` run inside the transaction of the change the
 * event records; the counter row's lock orders a tenant's writers, so sequences commit in order and
 * a reader that asks for "after sequence n" never skips an event that commits later.
 */
export class EventRepository {
  constructor(private readonly ctx: RepoContext) {}

  /** The executor this repository runs on (handed to event subscribers, which write in the same transaction). */
  get executor(): Executor {
    return this.ctx.exec;
  }

  get inTransaction(): boolean {
    return this.ctx.inTransaction;
  }

  /** Runs `fn` once the surrounding `Store.transaction` committed (at once outside of one). */
  afterCommit(fn: () => void): void {
    if (this.ctx.afterCommit) this.ctx.afterCommit.push(fn);
    else queueMicrotask(fn);
  }

  /** Takes the tenant's next sequence number (locks the tenant's counter until the transaction ends). */
  async nextSequence(tenantId: string): Promise<number> {
    const row = await this.ctx.exec
      .insertInto('event_sequences')
      .values({ tenant_id: tenantId, last_sequence: 1 })
      .onConflict((oc) =>
        oc.column('tenant_id').doUpdateSet({ last_sequence: sql`event_sequences.last_sequence + 1` }),
      )
      .returning('last_sequence')
      .executeTakeFirstOrThrow();
    return Number(row.last_sequence);
  }

  async insert(row: EventRow): Promise<void> {
    await this.ctx.exec.insertInto('events').values(row).execute();
  }

  /** Newest first (by id), up to `limit`, with id < `beforeId` when given. */
  async list(filter: EventFilter, beforeId: string | null, limit: number): Promise<EventRow[]> {
    if (filter.tenantIds.length === 0) return [];
    let q = this.ctx.exec.selectFrom('events').selectAll().where('tenant_id', 'in', filter.tenantIds);
    if (filter.spaceId) q = q.where('space_id', '=', filter.spaceId);
    const codes = filter.codes ?? [];
    const prefixes = filter.codePrefixes ?? [];
    if (codes.length > 0 || prefixes.length > 0) {
      q = q.where((eb) =>
        eb.or([
          ...(codes.length > 0 ? [eb('code', 'in', codes)] : []),
          // A prefix match without LIKE's wildcards (`_` is one) or collation-dependent ranges.
          ...prefixes.map((p) => eb(eb.fn('substr', ['code', eb.val(1), eb.val(p.length)]), '=', p)),
        ]),
      );
    }
    if (filter.since) q = q.where('created_at', '>=', filter.since);
    if (filter.until) q = q.where('created_at', '<', filter.until);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  }

  /** A tenant's events (or one space's) with sequence > `afterSequence`, oldest first. */
  async after(
    tenantId: string,
    spaceId: string | null,
    afterSequence: number,
    limit: number,
  ): Promise<EventRow[]> {
    let q = this.ctx.exec
      .selectFrom('events')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('sequence', '>', afterSequence);
    if (spaceId) q = q.where('space_id', '=', spaceId);
    const rows = await q.orderBy('sequence', 'asc').limit(limit).execute();
    return rows.map((r) => ({ ...r, sequence: Number(r.sequence) }));
  }

  /** The tenant's newest sequence number (0 before its first event). */
  async lastSequence(tenantId: string): Promise<number> {
    const row = await this.ctx.exec
      .selectFrom('event_sequences')
      .select('last_sequence')
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return row ? Number(row.last_sequence) : 0;
  }

  /** How many events a tenant has (of one code, when given). */
  async countFor(tenantId: string, code?: string): Promise<number> {
    let q = this.ctx.exec
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId);
    if (code) q = q.where('code', '=', code);
    const row = await q.executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
