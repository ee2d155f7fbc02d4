import { sql } from 'kysely';
import type pg from 'pg';
import type { Database } from './db.ts';

/** What changed, for caches on other instances: a space (settings, channels, hostnames, access) or a team's tags. */
export type ChangeKind = 'space' | 'team-tags' | 'events';

export interface Change {
  seq: number;
  kind: ChangeKind;
  /** The space id (`space`), team id (`team-tags`) or event tenant id (`events`). */
  subject: string;
  /** The instance that made the change (it has invalidated its own caches already). */
  origin: string;
  createdAt: string;
}

export interface ChangeFeedStats {
  /** Every change up to this sequence number has been handled. */
  watermark: number;
  /** Changes delivered to subscribers (other instances' only). */
  delivered: number;
  /** Changes found by a catch-up query rather than by their notification. */
  caughtUp: number;
  /** Sequence numbers given up on (a writer's insert that never committed leaves a gap). */
  skippedGaps: number;
  connected: boolean;
  reconnects: number;
  /** Time from a change's commit on its instance to its delivery here, over the last 1,024 changes (ms). */
  lagMs: { p50: number; p99: number; max: number; samples: number };
}

export interface ChangeFeedLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface ChangeFeedOptions {
  database: Database;
  /** This instance's id (random per process). */
  instanceId: string;
  log: ChangeFeedLog;
  /** How often to look for changes whose notification was missed (ms). */
  pollMs?: number;
  /** How long a missing sequence number is waited for before it is skipped (ms). */
  gapTimeoutMs?: number;
  /** Reconnect backoff: first delay and cap (ms). */
  backoffMs?: { min: number; max: number };
}

const CHANNEL = 'spaces_changes';
const LAG_SAMPLES = 1024;
const CATCH_UP_BATCH = 1000;

/**
 * Tells the other instances on one PostgreSQL database what changed, so their caches drop it at
 * once instead of waiting for a TTL.
 *
 * `announce` appends a row to `changes` and, in the same statement, `NOTIFY spaces_changes` with the
 * row (sequence number, kind, subject, origin, time). Every instance holds one dedicated connection
 * that `LISTEN`s and hands other instances' changes to its subscribers in sequence order. A
 * notification can be lost (the listening connection dropped, or two writers committed out of
 * sequence order); the sequence numbers show it: a gap starts a catch-up query, and a poll every
 * `pollMs` compares the newest sequence number with what was handled. A lost connection reconnects
 * with exponential backoff and catches up from where it was. A number that never appears (an insert
 * that rolled back) is skipped after `gapTimeoutMs`.
 *
 * On SQLite there is one process, and the feed does nothing: local events already reach every cache.
 */
export class ChangeFeed {
  private readonly listeners = new Set<(change: Change) => void>();
  private readonly enabled: boolean;
  private readonly pollMs: number;
  private readonly gapTimeoutMs: number;
  private readonly backoff: { min: number; max: number };
  private watermark = 0;
  /** Handled sequence numbers above the watermark (a gap below them is still open). */
  private readonly seen = new Set<number>();
  /** When each open gap's first number was found missing. */
  private gapSince: { seq: number; at: number } | null = null;
  private client: pg.Client | null = null;
  private connected = false;
  private stopped = true;
  private reconnects = 0;
  private attempt = 0;
  private pollTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private catchUpTimer: NodeJS.Timeout | null = null;
  private catchingUp: Promise<void> | null = null;
  private readonly lags: number[] = [];
  private delivered = 0;
  private caughtUp = 0;
  private skippedGaps = 0;

  constructor(private readonly opts: ChangeFeedOptions) {
    this.enabled = opts.database.dialect === 'postgres' && !!opts.database.dedicatedClient;
    this.pollMs = opts.pollMs ?? 2000;
    this.gapTimeoutMs = opts.gapTimeoutMs ?? 5000;
    this.backoff = opts.backoffMs ?? { min: 100, max: 30_000 };
  }

  /** Whether this feed carries other instances' changes (PostgreSQL with a listening connection). */
  get active(): boolean {
    return this.enabled;
  }

  /** Starts listening from the newest change (caches start empty: nothing older matters). */
  async start(): Promise<void> {
    if (!this.enabled || !this.stopped) return;
    this.stopped = false;
    this.watermark = await this.newestSeq();
    await this.connect().catch((err) => {
      this.opts.log.warn({ err }, 'change feed: could not listen; retrying');
      this.scheduleReconnect();
    });
    this.pollTimer = setInterval(() => this.poll(), this.pollMs);
    this.pollTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of [this.pollTimer, this.reconnectTimer, this.catchUpTimer]) if (t) clearTimeout(t);
    this.pollTimer = this.reconnectTimer = this.catchUpTimer = null;
    const c = this.client;
    this.client = null;
    this.connected = false;
    await this.catchingUp?.catch(() => {});
    if (c) await c.end().catch(() => {});
  }

  /** Subscribes to other instances' changes; returns the unsubscribe. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Records a change and notifies every instance listening (after the statement commits). */
  async announce(kind: ChangeKind, subject: string, at = new Date()): Promise<void> {
    if (!this.enabled) return;
    const createdAt = at.toISOString();
    await sql`
      with c as (
        insert into changes (kind, subject, origin, created_at)
        values (${kind}, ${subject}, ${this.opts.instanceId}, ${createdAt})
        returning seq
      )
      select pg_notify(${CHANNEL}, json_build_object('s', seq, 'k', ${kind}::text, 'j', ${subject}::text,
        'o', ${this.opts.instanceId}::text, 't', ${createdAt}::text)::text) from c`.execute(
      this.opts.database.db,
    );
  }

  /** Deletes changes older than `before` (only a listener that fell far behind would read them). */
  async prune(before: Date): Promise<number> {
    if (!this.enabled) return 0;
    const r = await this.opts.database.db
      .deleteFrom('changes')
      .where('created_at', '<', before.toISOString())
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** The PostgreSQL backend process id of the listening connection (diagnostics: `pg_stat_activity`). */
  listenerPid(): number | null {
    const c = this.client as (pg.Client & { processID?: number }) | null;
    return this.connected && c?.processID ? c.processID : null;
  }

  stats(): ChangeFeedStats {
    const sorted = [...this.lags].sort((a, b) => a - b);
    const at = (q: number) =>
      sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
    return {
      watermark: this.watermark,
      delivered: this.delivered,
      caughtUp: this.caughtUp,
      skippedGaps: this.skippedGaps,
      connected: this.connected,
      reconnects: this.reconnects,
      lagMs: { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0, samples: sorted.length },
    };
  }

  private async newestSeq(): Promise<number> {
    const r = await this.opts.database.db
      .selectFrom('changes')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .executeTakeFirst();
    return Number(r?.seq ?? 0);
  }

  private async connect(): Promise<void> {
    const c = this.opts.database.dedicatedClient!();
    // Errors are handled by reconnecting; an unhandled 'error' would end the process.
    c.on('error', (err) => this.lost(c, err));
    c.on('end', () => this.lost(c, null));
    c.on('notification', (n) => {
      if (n.channel === CHANNEL && n.payload) this.onPayload(n.payload);
    });
    this.client = c;
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    if (this.stopped || this.client !== c) {
      await c.end().catch(() => {});
      return;
    }
    this.connected = true;
    this.attempt = 0;
    // Whatever was announced while not listening.
    this.catchUp();
  }

  private lost(c: pg.Client, err: Error | null): void {
    if (this.client !== c) return;
    this.client = null;
    this.connected = false;
    c.end().catch(() => {});
    if (this.stopped) return;
    this.opts.log.warn({ err }, 'change feed: listening connection lost; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const base = Math.min(this.backoff.max, this.backoff.min * 2 ** this.attempt);
    this.attempt++;
    const delay = base / 2 + Math.random() * (base / 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.reconnects++;
      this.connect().catch((err) => {
        this.opts.log.warn({ err, attempt: this.attempt }, 'change feed: reconnect failed');
        this.client = null;
        this.scheduleReconnect();
      });
    }, delay);
    this.reconnectTimer.unref();
  }

  private onPayload(payload: string): void {
    let p: { s?: unknown; k?: unknown; j?: unknown; o?: unknown; t?: unknown };
    try {
      p = JSON.parse(payload);
    } catch {
      return;
    }
    if (typeof p.s !== 'number' || typeof p.k !== 'string' || typeof p.j !== 'string') return;
    this.handle({
      seq: p.s,
      kind: p.k as ChangeKind,
      subject: p.j,
      origin: String(p.o ?? ''),
      createdAt: String(p.t ?? ''),
    });
    if (this.seen.size) this.scheduleCatchUp();
  }

  /** Delivers a change once, and moves the watermark over every contiguous handled number. */
  private handle(change: Change): boolean {
    if (change.seq <= this.watermark || this.seen.has(change.seq)) return false;
    this.seen.add(change.seq);
    while (this.seen.delete(this.watermark + 1)) this.watermark++;
    if (change.origin !== this.opts.instanceId) {
      const lag = Date.now() - Date.parse(change.createdAt);
      if (Number.isFinite(lag)) {
        this.lags.push(Math.max(0, lag));
        if (this.lags.length > LAG_SAMPLES) this.lags.shift();
      }
      this.delivered++;
      for (const l of this.listeners) {
        try {
          l(change);
        } catch (err) {
          this.opts.log.warn({ err, change }, 'change feed: a subscriber failed');
        }
      }
    }
    return true;
  }

  /** Soon after a gap shows; every 250 ms while one stays open (until it fills or times out). */
  private scheduleCatchUp(delayMs = 50): void {
    if (this.catchUpTimer || this.stopped) return;
    this.catchUpTimer = setTimeout(() => {
      this.catchUpTimer = null;
      this.catchUp();
    }, delayMs);
    this.catchUpTimer.unref();
  }

  private poll(): void {
    if (this.stopped) return;
    this.newestSeq().then(
      (newest) => {
        if (newest > this.watermark) this.catchUp();
      },
      (err) => this.opts.log.warn({ err }, 'change feed: poll failed'),
    );
  }

  /** Reads the changes after the watermark and delivers those not handled yet. */
  private catchUp(): void {
    if (this.catchingUp || this.stopped) return;
    this.catchingUp = (async () => {
      for (;;) {
        const rows = await this.opts.database.db
          .selectFrom('changes')
          .selectAll()
          .where('seq', '>', this.watermark)
          .orderBy('seq')
          .limit(CATCH_UP_BATCH)
          .execute();
        for (const r of rows) {
          const handled = this.handle({
            seq: Number(r.seq),
            kind: r.kind as ChangeKind,
            subject: r.subject,
            origin: r.origin,
            createdAt: r.created_at,
          });
          if (handled) this.caughtUp++;
        }
        this.closeOldGap();
        if (rows.length < CATCH_UP_BATCH) break;
      }
    })()
      .catch((err) => this.opts.log.warn({ err }, 'change feed: catch-up failed'))
      .finally(() => {
        this.catchingUp = null;
        if (this.seen.size) this.scheduleCatchUp(250);
      });
  }

  /** A number still missing below handled ones after `gapTimeoutMs` never committed: skip it. */
  private closeOldGap(): void {
    if (!this.seen.size) {
      this.gapSince = null;
      return;
    }
    const missing = this.watermark + 1;
    const now = Date.now();
    if (!this.gapSince || this.gapSince.seq !== missing) {
      this.gapSince = { seq: missing, at: now };
      return;
    }
    if (now - this.gapSince.at < this.gapTimeoutMs) return;
    this.skippedGaps++;
    this.watermark = missing;
    while (this.seen.delete(this.watermark + 1)) this.watermark++;
    this.gapSince = null;
  }
}
