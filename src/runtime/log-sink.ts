import type http from 'node:http';
import { PrivateSocketServer } from './private-socket.ts';

/** The header workerd adds to the tail worker's requests (the token that names the process). */
export const LOG_TOKEN_HEADER = 'x-spaces-log-token';
/** The header the edge gives each request to a worker: the id its log lines carry. */
export const REQUEST_ID_HEADER = 'x-request-id';
/** Bytes of tail events one POST may carry (a burst of lines is cut, not the server). */
const MAX_BODY = 4 * 1024 * 1024;

/**
 * The tail worker's module (one per workerd process, beside the version's worker): workerd hands it
 * each finished request's trace — console calls with their level, uncaught exceptions, the request
 * and its outcome — and it posts them, as they are, to the server's log sink. A request that wrote
 * nothing and ended well is not posted (it would make no line), so most requests cost no second
 * call. Its only outbound service is the sink (it can reach nothing else), and the version's code
 * can't reach it.
 */
export const TAIL_MODULE = `export default {
  async tail(events) {
    const kept = events.filter((e) => (e.logs && e.logs.length) || (e.exceptions && e.exceptions.length) || (e.outcome && e.outcome !== 'ok'));
    if (!kept.length) return;
    await fetch('http://logs/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(kept) });
  },
};
`;

/** What a process's events are about. */
export interface LogSource {
  spaceId: string;
  versionId: string;
  /** The single entry module (`handler.ts`, `_worker.js`), or null for route modules. */
  entry: string | null;
  /** The route patterns of route modules, most specific first (empty for a single entry). */
  routes: string[];
}

/** One trace event as workerd's tail worker receives it (the fields read here). */
export interface TailEvent {
  eventTimestamp?: number | null;
  outcome?: string;
  logs?: Array<{ level?: string; message?: unknown[]; timestamp?: number }>;
  exceptions?: Array<{ name?: string; message?: string; stack?: string; timestamp?: number }>;
  event?: {
    request?: { url?: string; method?: string; headers?: Record<string, string> };
    response?: { status?: number };
  } | null;
}

/**
 * Runtime logs' way in: an HTTP server on a Unix socket this server owns, which the tail worker of
 * every workerd process posts its trace events to, with the token workerd injects. The token says
 * which space and version the events belong to — a version's code can't send lines for another
 * space (it can't reach the sink at all). Events go to `onEvents` (stored by the runtime log).
 */
export class RuntimeLogSink {
  private readonly listener = new PrivateSocketServer('logs', (req, res) => void this.handle(req, res));
  private readonly sources = new Map<string, LogSource>();

  constructor(private readonly onEvents: (source: LogSource, events: TailEvent[]) => Promise<void>) {}

  /** The sink's socket for a process with this token (the sink starts on first use). */
  async register(
    token: string,
    source: LogSource,
  ): Promise<{ socket: string; header: string; token: string }> {
    this.sources.set(token, source);
    const socket = await this.listener.socket();
    return { socket, header: LOG_TOKEN_HEADER, token };
  }

  unregister(token: string): void {
    this.sources.delete(token);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const token = req.headers[LOG_TOKEN_HEADER];
    const source = typeof token === 'string' ? this.sources.get(token) : undefined;
    if (!source || req.method !== 'POST') {
      req.resume();
      res.writeHead(403).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let cut = false;
    req.on('error', () => {});
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) {
        cut = true;
        break;
      }
      chunks.push(chunk as Buffer);
    }
    if (cut) {
      res.writeHead(413).end();
      req.destroy();
      return;
    }
    try {
      const events = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      if (Array.isArray(events)) await this.onEvents(source, events as TailEvent[]);
      res.writeHead(204).end();
    } catch {
      res.writeHead(400).end();
    }
  }

  async close(): Promise<void> {
    await this.listener.close();
  }
}
