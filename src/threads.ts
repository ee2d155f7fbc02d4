import { Worker, type WorkerOptions } from 'node:worker_threads';

/** A reply from a worker: the request's `id`, and either an error or the worker's answer. */
export interface WorkerReply {
  id: number;
  error?: unknown;
  [key: string]: unknown;
}

/**
 * A worker thread answering requests `{ id, ...msg }` with replies `{ id, error? , ... }`. Started on
 * first use; keeps the process alive only while it has work. A crash or exit rejects every pending
 * request, and the next call starts a new thread.
 */
export class WorkerThread<T = void> {
  private worker: Worker | null = null;
  private readonly jobs = new Map<number, { resolve: (v: T) => void; reject: (e: Error) => void }>();
  private seq = 0;

  /**
   * `decode` turns a reply into the call's result, or throws; by default a reply with an `error`
   * (a string, or `{ message, code, syscall }`) rejects and any other resolves.
   */
  constructor(
    private readonly url: URL,
    private readonly name: string,
    private readonly options?: WorkerOptions,
    private readonly decode: (reply: WorkerReply) => T = defaultDecode as (reply: WorkerReply) => T,
  ) {}

  /** Whether the thread is running (started and not exited or terminated). */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Requests sent and not answered yet. */
  get pending(): number {
    return this.jobs.size;
  }

  call(msg: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<T> {
    const w = this.start();
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.jobs.set(id, { resolve, reject });
      // A busy worker keeps the process alive until it answers; an idle one never does.
      w.ref();
      w.postMessage({ ...msg, id }, transfer);
    });
  }

  async terminate(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    await w?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(this.url, this.options);
    w.unref();
    const failAll = (err: Error) => {
      if (this.worker === w) this.worker = null;
      for (const j of this.jobs.values()) j.reject(err);
      this.jobs.clear();
    };
    w.on('message', (m: WorkerReply) => {
      const job = this.jobs.get(m.id);
      if (!job) return;
      this.jobs.delete(m.id);
      if (!this.jobs.size) w.unref();
      try {
        job.resolve(this.decode(m));
      } catch (err) {
        job.reject(err as Error);
      }
    });
    w.on('error', failAll);
    w.on('exit', (code) => failAll(new Error(`${this.name} exited (${code})`)));
    this.worker = w;
    return w;
  }
}

function defaultDecode(m: WorkerReply): void {
  if (m.error === undefined) return;
  const e = m.error as string | { message: string };
  throw typeof e === 'string' ? new Error(e) : Object.assign(new Error(e.message), e);
}

/**
 * Buffers copied back to back into one transferable buffer (thousands of small files, one message).
 * Its own ArrayBuffer, exactly filled, not zeroed first (every byte is written here).
 */
export function packBuffers(buffers: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const packed = Buffer.allocUnsafeSlow(buffers.reduce((n, b) => n + b.length, 0)) as Uint8Array<ArrayBuffer>;
  let off = 0;
  for (const b of buffers) {
    packed.set(b, off);
    off += b.length;
  }
  return packed;
}
