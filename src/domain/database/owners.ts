import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import { request } from 'undici';
import type { BlobStore } from '../../blobs/port.ts';
import type { Store } from '../../store/repos/index.ts';
import type { SpaceDatabases } from '../../store/space-db/space-db.ts';
import { SpaceDbError } from '../../store/space-db/space-db.ts';
import { type DbOp, READ_OPS, runOp, type SpaceDbHost } from './host.ts';

/** The internal route another instance forwards a call to (see http/routes/database.ts). */
export const FORWARD_PATH = '/v1/internal/space-db';
export const FORWARD_AUTH_HEADER = 'x-spaces-instance-auth';
const AUTH_SKEW_MS = 60_000;
/** A space database nobody called for this long is handed back (snapshot, release, file closed). */
export const IDLE_RELEASE_MS = 10 * 60_000;

/** The signature of a forwarded call: `<ms>.<hmac(key, ms|space|op|sha256(body))>`. */
export function signForward(key: Buffer, spaceId: string, op: string, body: string, at: number): string {
  const digest = createHash('sha256').update(body).digest('hex');
  return `${at}.${createHmac('sha256', key).update(`${at}|${spaceId}|${op}|${digest}`).digest('hex')}`;
}

/** Whether a forwarded call was signed with this cluster's key within the allowed skew. */
export function verifyForward(
  key: Buffer,
  header: string | undefined,
  spaceId: string,
  op: string,
  body: string,
  now: number,
): boolean {
  const m = /^(\d{10,16})\.([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const at = Number(m[1]);
  if (Math.abs(now - at) > AUTH_SKEW_MS) return false;
  const want = Buffer.from(signForward(key, spaceId, op, body, at).split('.')[1]!, 'hex');
  return timingSafeEqual(want, Buffer.from(m[2]!, 'hex'));
}

interface Held {
  until: number;
  /** A write happened since the last snapshot; the snapshot is due at this time (0: not dirty). */
  snapshotDue: number;
  generation: number;
  /** When a call last used it (a lease unused for {@link IDLE_RELEASE_MS} is given up). */
  lastUsed: number;
  /** How long the last snapshot took: the next waits ten times that, so copying stays under ~10% of the time. */
  lastCostMs: number;
}

export interface OwnedHostOptions {
  store: Store;
  blobs: BlobStore;
  log: Logger;
  databases: SpaceDatabases;
  instanceId: string;
  /** This instance's internal base URL (null until it listens: calls wait for an owner then). */
  address: () => string | null;
  /** The cluster's shared key (derived from the secret key every instance has). */
  key: Buffer;
  leaseMs?: number;
  /** How long after a write the snapshot is taken (writes in between share it). */
  snapshotDelayMs?: number;
}

/**
 * Space databases with several instances (issue 26): each space's SQLite file has one owner at a
 * time — the instance holding its lease in `space_db_owners` — which serves every call on it; the
 * others forward calls to the owner's internal address, signed with the cluster key. The owner keeps
 * the file on its own disk and copies it to the blob store shortly after writes (a consistent
 * SQLite backup); an instance that takes over a lease (the owner stopped, or died and its lease ran
 * out) restores the latest copy before it serves the space. So the file has one writer, and what
 * an instance's disk loses is at most the writes of the last `snapshotDelayMs` before it died.
 */
export class OwnedSpaceDbHost implements SpaceDbHost {
  private readonly held = new Map<string, Held>();
  private readonly claiming = new Map<string, Promise<string | null>>();
  private readonly leaseMs: number;
  private readonly snapshotDelayMs: number;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: OwnedHostOptions) {
    this.leaseMs = o.leaseMs ?? 30_000;
    this.snapshotDelayMs = o.snapshotDelayMs ?? 2_000;
  }

  /** Leases are compared across instances: wall-clock time, never a test's frozen clock. */
  private now(): number {
    return Date.now();
  }

  private iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  private start(): void {
    if (this.timer || this.closed) return;
    const every = Math.max(50, Math.min(this.snapshotDelayMs, Math.floor(this.leaseMs / 3)));
    this.timer = setInterval(() => {
      this.ticking = this.ticking
        .then(() => this.tick())
        .catch((err) => this.o.log.warn({ err }, 'space db tick'));
    }, every);
    this.timer.unref();
  }

  /**
   * Renews the leases it holds (dropping the ones lost), takes the snapshots that are due and hands
   * back the databases nobody called for {@link IDLE_RELEASE_MS}.
   */
  async tick(): Promise<void> {
    const now = this.now();
    const renewBefore = now + (this.leaseMs * 2) / 3;
    const due = [...this.held].filter(([, h]) => h.until < renewBefore).map(([id]) => id);
    if (due.length) {
      const until = now + this.leaseMs;
      const kept = new Set(
        await this.o.store.repos.spaceDbOwners.renew(due, this.o.instanceId, this.iso(until)),
      );
      for (const id of due) {
        if (kept.has(id)) this.held.get(id)!.until = until;
        else this.drop(id);
      }
    }
    for (const [id, h] of [...this.held]) {
      const idle = now - h.lastUsed > IDLE_RELEASE_MS;
      try {
        if (h.snapshotDue && (h.snapshotDue <= now || idle)) await this.snapshot(id, h);
        if (idle && !h.snapshotDue && this.held.get(id) === h) {
          await this.o.store.repos.spaceDbOwners.release(id, this.o.instanceId, this.iso(now));
          this.drop(id);
        }
      } catch (err) {
        this.o.log.warn({ err, spaceId: id }, 'space db snapshot or release failed');
      }
    }
  }

  /**
   * Forgets a space this instance no longer owns, with its local copy: only the owner keeps a copy
   * (the blob store's snapshot is the durable one), so a former owner never serves or keeps stale rows.
   */
  private drop(spaceId: string): void {
    this.held.delete(spaceId);
    this.o.databases.remove(spaceId);
  }

  /** Copies the file to the blob store and records it as the space's latest snapshot. */
  private async snapshot(spaceId: string, h: Held): Promise<void> {
    const due = h.snapshotDue;
    h.snapshotDue = 0;
    const started = Date.now();
    const file = this.o.databases.fileOf(spaceId);
    const tmp = `${file}.snap-${process.pid}`;
    try {
      await this.o.databases.get(spaceId).db.backup(tmp);
      const hash = createHash('sha256');
      await pipeline(fs.createReadStream(tmp), hash);
      const sha256 = hash.digest('hex');
      const size = fs.statSync(tmp).size;
      await this.o.blobs.put(sha256, size, fs.createReadStream(tmp));
      const generation = h.generation + 1;
      const ok = await this.o.store.repos.spaceDbOwners.recordSnapshot(spaceId, this.o.instanceId, {
        sha256,
        size,
        generation,
        at: this.iso(this.now()),
      });
      if (!ok) return this.drop(spaceId);
      h.generation = generation;
      this.o.databases.writeGeneration(spaceId, generation);
    } catch (err) {
      // Not copied: still due (and the local file must not be given up).
      h.snapshotDue = due || this.now();
      throw err;
    } finally {
      h.lastCostMs = Date.now() - started;
      fs.rmSync(tmp, { force: true });
    }
  }

  /** The owner's address when another instance owns the space; null when this one does (after taking it). */
  private async ownerOf(spaceId: string): Promise<string | null> {
    const mine = this.held.get(spaceId);
    if (mine && mine.until > this.now() + 1000) return null;
    let p = this.claiming.get(spaceId);
    if (!p) {
      p = this.claim(spaceId).finally(() => this.claiming.delete(spaceId));
      this.claiming.set(spaceId, p);
    }
    return p;
  }

  private async claim(spaceId: string): Promise<string | null> {
    const address = this.o.address();
    if (!address) throw new SpaceDbError('db_owner_unavailable', 'this instance is still starting');
    const now = this.now();
    const row = await this.o.store.repos.spaceDbOwners.claim(
      spaceId,
      this.o.instanceId,
      address,
      this.iso(now),
      this.iso(now + this.leaseMs),
    );
    if (row.instance_id !== this.o.instanceId) {
      if (this.held.has(spaceId)) this.drop(spaceId);
      return row.address;
    }
    const held = this.held.get(spaceId);
    if (held) {
      held.until = now + this.leaseMs;
      return null;
    }
    // Newly taken: restore the latest snapshot unless this disk has it (or something newer of its own).
    const local = this.o.databases.readGeneration(spaceId);
    if (row.snapshot_sha256 && row.snapshot_generation > local) {
      this.o.databases.closeOne(spaceId);
      await this.restore(spaceId, row.snapshot_sha256);
      this.o.databases.writeGeneration(spaceId, row.snapshot_generation);
    }
    this.held.set(spaceId, {
      until: now + this.leaseMs,
      snapshotDue: 0,
      generation: Math.max(local, row.snapshot_generation),
      lastUsed: now,
      lastCostMs: 0,
    });
    this.start();
    return null;
  }

  private async restore(spaceId: string, sha256: string): Promise<void> {
    const file = this.o.databases.fileOf(spaceId);
    fs.mkdirSync(this.o.databases.dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.restore-${process.pid}`;
    await pipeline(await this.o.blobs.get(sha256), fs.createWriteStream(tmp, { mode: 0o600 }));
    for (const suffix of ['-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
    fs.renameSync(tmp, file);
    this.o.log.info({ spaceId, sha256 }, 'space database restored from its snapshot');
  }

  get forwardKey(): Buffer {
    return this.o.key;
  }

  async call(spaceId: string, op: DbOp, args: unknown, opts: { forwarded?: boolean } = {}): Promise<unknown> {
    if (this.closed) throw new SpaceDbError('db_owner_unavailable', 'this instance is stopping');
    // A forwarded purge: the space is gone (its lease row too), so only the local copy is left to remove.
    if (op === 'forget') return this.drop(spaceId);
    const owner = await this.ownerOf(spaceId);
    if (owner !== null && opts.forwarded)
      throw new SpaceDbError(
        'db_owner_unavailable',
        'the database changed owner while the call was on its way',
      );
    if (owner === null) {
      const result = runOp(this.o.databases.get(spaceId), op, args, this.iso(this.now()));
      const h = this.held.get(spaceId);
      if (h) h.lastUsed = this.now();
      if (h && !READ_OPS.has(op) && !h.snapshotDue)
        h.snapshotDue = this.now() + Math.max(this.snapshotDelayMs, h.lastCostMs * 10);
      return result;
    }
    return this.forward(owner, spaceId, op, args);
  }

  private async forward(
    address: string,
    spaceId: string,
    op: DbOp | 'forget',
    args: unknown,
  ): Promise<unknown> {
    const body = JSON.stringify(args ?? null);
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${address}${FORWARD_PATH}/${encodeURIComponent(spaceId)}/${op}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [FORWARD_AUTH_HEADER]: signForward(this.o.key, spaceId, op, body, Date.now()),
        },
        body,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      });
    } catch (err) {
      throw new SpaceDbError(
        'db_owner_unavailable',
        `the instance that owns this database (${address}) did not answer: ${(err as Error).message}`,
      );
    }
    const text = await res.body.text();
    let parsed: { result?: unknown; error?: { code: string; message: string; pointer?: string } };
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new SpaceDbError('db_owner_unavailable', `the owning instance answered ${res.statusCode}`);
    }
    if (parsed.error) throw new SpaceDbError(parsed.error.code, parsed.error.message, parsed.error.pointer);
    return parsed.result;
  }

  /** A purged space: its local copy goes, here or (forwarded) on the instance that owned it. */
  async forget(spaceId: string, ownerAddress: string | null): Promise<void> {
    this.drop(spaceId);
    const mine = this.o.address();
    if (ownerAddress && ownerAddress !== mine) await this.forward(ownerAddress, spaceId, 'forget', null);
  }

  /** Takes the due snapshots, gives up every lease (another instance takes over at once) and closes the files. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    const at = this.iso(this.now());
    for (const [id, h] of [...this.held]) {
      try {
        if (h.snapshotDue) await this.snapshot(id, h);
        await this.o.store.repos.spaceDbOwners.release(id, this.o.instanceId, at);
        // Copied and handed over: the next owner restores the copy, so this disk keeps none.
        if (!h.snapshotDue) this.drop(id);
      } catch (err) {
        this.o.log.warn({ err, spaceId: id }, 'space db lease not handed over');
      }
    }
    this.held.clear();
    this.o.databases.closeAll();
  }
}
