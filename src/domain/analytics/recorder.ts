import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../../ids.ts';
import type { AccessLogLine } from '../../store/repos/analytics/access-log.ts';
import type { HourlyDelta, TopDelta } from '../../store/repos/analytics/access-rollups.ts';
import type { Store } from '../../store/repos/index.ts';

/** One request as the edge hands it over: one small object, nothing computed on the request path. */
export interface AccessRecord {
  /** Epoch ms when the request arrived. */
  t: number;
  spaceId: string;
  versionId: string | null;
  host: string;
  method: string;
  path: string;
  status: number;
  bytes: number;
  durationMs: number;
  referrer: string | undefined;
  userAgent: string | undefined;
  country: string | undefined;
  requestId: string | undefined;
  /** The client address: kept in memory until the flush hashes it, never stored. */
  ip: string;
}

export interface RecorderOptions {
  /** Records held before the oldest are dropped. */
  capacity?: number;
  /** A flush starts once this many are waiting (and on the timer). */
  batch?: number;
  intervalMs?: number;
  /** Keys per (space, day, kind) a flush adds to the top tables. */
  topPerFlush?: number;
  onError?: (err: unknown) => void;
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;
/** Longest stored path/referrer/user agent (a line stays small whatever a client sends). */
const MAX_TEXT = 1024;

const clip = (s: string | undefined): string | null =>
  s === undefined || s === '' ? null : s.slice(0, MAX_TEXT);

/**
 * The access log's write side: a bounded ring the edge appends to (O(1), one record per request),
 * flushed in batches off the request path — on a timer and when a batch is waiting — into
 * `access_log` plus the hourly/visitor/top rollups, in one transaction. When the ring is full the
 * oldest record is overwritten and counted in `dropped`.
 *
 * Visitors are a hash of (daily salt, IP, user agent). Salts are random, live in memory only and are
 * forgotten when their day is over, so yesterday's hashes can no longer be linked to an address.
 */
export class AccessLogRecorder {
  private readonly ring: Array<AccessRecord | undefined>;
  private head = 0;
  private size = 0;
  private flushing: Promise<void> | null = null;
  private scheduled = false;
  private readonly timer: NodeJS.Timeout;
  private readonly salts = new Map<number, Buffer>();
  readonly capacity: number;
  private readonly batch: number;
  private readonly topPerFlush: number;
  /** Records overwritten before they were flushed. */
  dropped = 0;
  /** Records written to the store. */
  written = 0;

  constructor(
    private readonly store: Store,
    private readonly options: RecorderOptions = {},
  ) {
    this.capacity = options.capacity ?? 65_536;
    this.batch = options.batch ?? 2_000;
    this.topPerFlush = options.topPerFlush ?? 50;
    this.ring = new Array(this.capacity);
    this.timer = setInterval(() => void this.flush(), options.intervalMs ?? 1_000);
    this.timer.unref();
  }

  /** Appends one record (the request path's only cost). */
  record(r: AccessRecord): void {
    const cap = this.capacity;
    if (this.size === cap) {
      this.ring[this.head] = r;
      this.head = (this.head + 1) % cap;
      this.dropped++;
    } else {
      this.ring[(this.head + this.size) % cap] = r;
      this.size++;
    }
    if (this.size >= this.batch && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.flush();
      });
    }
  }

  get pending(): number {
    return this.size;
  }

  /** Writes everything waiting; concurrent calls share one flush. Never rejects. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.size ? this.flush() : undefined));
    if (this.size === 0) return Promise.resolve();
    const taken: AccessRecord[] = new Array(this.size);
    for (let i = 0; i < taken.length; i++) {
      const at = (this.head + i) % this.capacity;
      taken[i] = this.ring[at]!;
      this.ring[at] = undefined;
    }
    this.head = 0;
    this.size = 0;
    this.flushing = this.write(taken)
      .then(() => {
        this.written += taken.length;
      })
      .catch((err) => this.options.onError?.(err))
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }

  /** Stops the timer and writes what is waiting. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private saltOf(day: number): Buffer {
    let salt = this.salts.get(day);
    if (!salt) {
      salt = randomBytes(32);
      this.salts.set(day, salt);
      // Keep today's and yesterday's (a record from just before midnight): older salts are gone.
      for (const d of this.salts.keys()) if (d < day - 1) this.salts.delete(d);
    }
    return salt;
  }

  private async write(records: AccessRecord[]): Promise<void> {
    const lines: AccessLogLine[] = [];
    const hourly = new Map<string, HourlyDelta>();
    const visitors = new Map<string, { spaceId: string; day: string; visitor: string }>();
    const top = new Map<string, Map<string, number>>();
    const hashes = new Map<string, string>();
    const bump = (spaceId: string, day: string, kind: TopDelta['kind'], key: string | null) => {
      if (!key) return;
      const k = `${spaceId}\n${day}\n${kind}`;
      let m = top.get(k);
      if (!m) {
        m = new Map();
        top.set(k, m);
      }
      m.set(key, (m.get(key) ?? 0) + 1);
    };
    for (const r of records) {
      const iso = new Date(r.t).toISOString();
      const dayNo = Math.floor(r.t / DAY);
      const day = iso.slice(0, 10);
      const hour = iso.slice(0, 13);
      // A visitor's requests usually come together: hash each (day, address, user agent) once a flush.
      const vk = `${dayNo}\n${r.ip}\n${r.userAgent ?? ''}`;
      let visitor = hashes.get(vk);
      if (visitor === undefined) {
        visitor = createHash('sha256')
          .update(this.saltOf(dayNo))
          .update(r.ip)
          .update('\n')
          .update(r.userAgent ?? '')
          .digest('base64url')
          .slice(0, 22);
        hashes.set(vk, visitor);
      }
      const path = clip(r.path) ?? '/';
      const referrer = clip(r.referrer);
      const country = r.country ? r.country.slice(0, 8) : null;
      lines.push({
        id: newId('acc', r.t),
        spaceId: r.spaceId,
        versionId: r.versionId,
        at: iso,
        host: r.host.slice(0, 253),
        method: r.method,
        path,
        status: r.status,
        bytes: r.bytes,
        durationMs: Math.max(0, Math.round(r.durationMs)),
        referrer,
        userAgent: clip(r.userAgent),
        country,
        requestId: r.requestId ?? null,
        visitor,
      });
      const hk = `${r.spaceId}\n${hour}`;
      let h = hourly.get(hk);
      if (!h) {
        h = { spaceId: r.spaceId, hour, requests: 0, bytes: 0, s2xx: 0, s3xx: 0, s4xx: 0, s5xx: 0 };
        hourly.set(hk, h);
      }
      h.requests++;
      h.bytes += r.bytes;
      if (r.status >= 500) h.s5xx++;
      else if (r.status >= 400) h.s4xx++;
      else if (r.status >= 300) h.s3xx++;
      else if (r.status >= 200) h.s2xx++;
      visitors.set(`${r.spaceId}\n${day}\n${visitor}`, { spaceId: r.spaceId, day, visitor });
      const q = path.indexOf('?');
      bump(r.spaceId, day, 'path', q === -1 ? path : path.slice(0, q));
      bump(r.spaceId, day, 'referrer', referrer);
      bump(r.spaceId, day, 'country', country);
    }
    const topDeltas: TopDelta[] = [];
    for (const [k, m] of top) {
      const [spaceId, day, kind] = k.split('\n') as [string, string, TopDelta['kind']];
      // Bounded: a flush adds its most requested keys only (the long tail of one batch is dropped).
      const best = [...m].sort((a, b) => b[1] - a[1]).slice(0, this.topPerFlush);
      for (const [key, requests] of best) topDeltas.push({ spaceId, day, kind, key, requests });
    }
    await this.store.transaction(async (repos) => {
      await repos.accessLog.insertMany(lines);
      await repos.accessRollups.addHourly([...hourly.values()]);
      await repos.accessRollups.addVisitors([...visitors.values()]);
      await repos.accessRollups.addTop(topDeltas);
    });
  }
}
