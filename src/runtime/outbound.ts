import type http from 'node:http';
import type { Readable } from 'node:stream';
import { type AllowList, createSafeDispatcher, OutboundRefusedError } from '../net/outbound.ts';
import { undici } from '../net/undici.ts';
import { PrivateSocketServer } from './private-socket.ts';

/** The header workerd adds to every outbound request of a process (its token). */
export const OUTBOUND_TOKEN_HEADER = 'x-spaces-runtime-token';
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/**
 * Outbound `fetch` from workers that hold the `fetch` capability: workerd's `globalOutbound` is an
 * HTTP proxy on a Unix socket this server owns. Each request must carry the token of a running
 * process (workerd injects it); its absolute URL must be http(s) and go, through the same guard as
 * proxy rewrites (`src/net/outbound.ts`, `SPACES_PROXY_ALLOW`), to a public address only — never
 * 127.0.0.1, private ranges or the metadata address. A refusal answers 502 with the reason in
 * `x-spaces-outbound-refused`.
 */
export class OutboundGuard {
  // workerd sends proxy-form requests (`GET https://host/path`) without a Host header.
  private readonly listener = new PrivateSocketServer('out', (req, res) => void this.handle(req, res), {
    requireHostHeader: false,
  });
  private readonly tokens = new Set<string>();
  private agent: ReturnType<typeof createSafeDispatcher> | null = null;

  constructor(private readonly allow: AllowList) {}

  /** The proxy's socket for a process with this token (the proxy starts on first use). */
  async register(token: string): Promise<{ socket: string; header: string; token: string }> {
    this.tokens.add(token);
    const socket = await this.listener.socket();
    return { socket, header: OUTBOUND_TOKEN_HEADER, token };
  }

  unregister(token: string): void {
    this.tokens.delete(token);
  }

  private refuse(res: http.ServerResponse, reason: string): void {
    if (res.headersSent) return void res.destroy();
    res.writeHead(502, {
      'content-type': 'text/plain; charset=utf-8',
      'x-spaces-outbound-refused': reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 300),
    });
    res.end(`outbound request refused: ${reason}\n`);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const token = req.headers[OUTBOUND_TOKEN_HEADER];
    if (typeof token !== 'string' || !this.tokens.has(token)) return this.refuse(res, 'unknown caller');
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return this.refuse(res, 'not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return this.refuse(res, 'only http(s) URLs');
    if (url.username || url.password) return this.refuse(res, 'the URL must not carry credentials');
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && !HOP.has(k) && k !== OUTBOUND_TOKEN_HEADER) headers[k] = v;
    }
    this.agent ??= createSafeDispatcher({ allow: this.allow });
    const { request } = undici();
    try {
      const method = req.method ?? 'GET';
      const up = await request(url, {
        method: method as 'GET',
        headers,
        body: method === 'GET' || method === 'HEAD' ? undefined : (req as Readable),
        dispatcher: this.agent,
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(up.statusCode, out);
      up.body.pipe(res);
      up.body.on('error', () => res.destroy());
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause ?? err;
      if (cause instanceof OutboundRefusedError || err instanceof OutboundRefusedError)
        return this.refuse(res, (cause as OutboundRefusedError).message);
      return this.refuse(res, `upstream failed: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {
    await this.agent?.close();
    await this.listener.close();
  }
}
