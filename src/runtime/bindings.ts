import type http from 'node:http';
import { PrivateSocketServer } from './private-socket.ts';

/** The header workerd adds to every request a worker makes through a binding (its process's token). */
export const BINDINGS_TOKEN_HEADER = 'x-spaces-binding-token';
/** Largest JSON body a binding call may send (a statement and its parameters, or a batch). */
export const MAX_BINDING_CALL_BYTES = 8 * 1024 * 1024;

/** Who is calling: the space and version of the workerd process that holds the token. */
export interface BindingCaller {
  spaceId: string;
  versionId: string;
}

/** An error a binding handler reports to the worker (thrown there as an `Error` with this message). */
export class BindingError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/**
 * One binding's server side: `op` is the path after `/<name>/`, `body` the parsed JSON the shim sent.
 * It answers JSON (any value) or throws ({@link BindingError} for the caller's mistakes).
 */
export type BindingHandler = (caller: BindingCaller, op: string, body: unknown) => Promise<unknown> | unknown;

/**
 * The bindings channel (issue 26): a server-owned HTTP service on a Unix socket that workers reach
 * through service bindings (`env.__SPACES_DB`, …) — workerd's `external` service, which injects this
 * process's token header into every request. The token names the (space, version) the process runs;
 * user code never sees it (it only holds a Fetcher, and the shim hides even that behind `env.DB`).
 * Requests are `POST /<binding>/<op>` with a JSON body; answers are `200 {result}` or
 * `4xx/5xx {error:{code,message}}`. Adding a binding is one {@link register} call.
 */
export class BindingsChannel {
  private readonly listener = new PrivateSocketServer('bind', (req, res) => void this.handle(req, res), {
    requireHostHeader: false,
  });
  private readonly callers = new Map<string, BindingCaller>();
  private readonly handlers = new Map<string, BindingHandler>();

  /** Adds a binding by name (`db`, `storage`): its requests are routed to `handler`. */
  register(name: string, handler: BindingHandler): void {
    if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`bad binding name: ${name}`);
    this.handlers.set(name, handler);
  }

  /** Names of the registered bindings (the worker gets a service binding for each). */
  names(): string[] {
    return [...this.handlers.keys()];
  }

  /** The channel's socket for a process with this token (the channel starts on first use). */
  async attach(
    token: string,
    caller: BindingCaller,
  ): Promise<{ socket: string; header: string; token: string; names: string[] }> {
    this.callers.set(token, caller);
    const socket = await this.listener.socket();
    return { socket, header: BINDINGS_TOKEN_HEADER, token, names: this.names() };
  }

  detach(token: string): void {
    this.callers.delete(token);
  }

  private answer(res: http.ServerResponse, status: number, body: unknown): void {
    if (res.headersSent) return void res.destroy();
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
    });
    res.end(text);
  }

  private fail(res: http.ServerResponse, status: number, code: string, message: string): void {
    this.answer(res, status, { error: { code, message } });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const token = req.headers[BINDINGS_TOKEN_HEADER];
    const caller = typeof token === 'string' ? this.callers.get(token) : undefined;
    if (!caller) {
      req.resume();
      return this.fail(res, 403, 'binding_unknown_caller', 'unknown caller');
    }
    const url = new URL(req.url ?? '/', 'http://bindings');
    const [, name, ...rest] = url.pathname.split('/');
    const handler = name ? this.handlers.get(name) : undefined;
    if (!handler || req.method !== 'POST') {
      req.resume();
      return this.fail(res, 404, 'binding_not_found', `no binding at ${url.pathname}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const c of req as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > MAX_BINDING_CALL_BYTES) {
          return this.fail(res, 413, 'binding_call_too_large', 'the call is larger than 8 MiB');
        }
        chunks.push(c);
      }
    } catch {
      return void res.destroy();
    }
    let body: unknown = null;
    if (size > 0) {
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return this.fail(res, 400, 'binding_bad_call', 'the call body is not JSON');
      }
    }
    try {
      const result = await handler(caller, rest.join('/'), body);
      this.answer(res, 200, { result: result ?? null });
    } catch (err) {
      if (err instanceof BindingError) return this.fail(res, err.status, err.code, err.message);
      return this.fail(res, 500, 'binding_failed', (err as Error).message || 'the binding failed');
    }
  }

  async close(): Promise<void> {
    await this.listener.close();
  }
}
