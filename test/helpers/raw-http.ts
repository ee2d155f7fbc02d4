import net from 'node:net';

/** One response read off a raw socket: status, header lines as sent, body. */
export interface RawResponse {
  status: number;
  /** `[name, value]` pairs in wire order, names as sent. */
  lines: Array<[string, string]>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** Bytes after the last whole response (an injected extra response would be here or above). */
  rest: string;
  /** Everything the server sent, as latin1. */
  wire: string;
}

/** `lines`' value of `name` (case-insensitive), or all of them with `all`. */
export function header(r: RawResponse, name: string): string | undefined {
  return r.lines.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
}

/**
 * Writes `data` (raw bytes, latin1) to the server and reads until it closes the connection: make the
 * last request `Connection: close`. Responses are split by Content-Length (none for HEAD, 204, 304)
 * or, for an empty chunked body, at its last chunk.
 */
export function exchange(port: number, data: string | Buffer, heads: boolean[] = []): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = net.connect(port, '127.0.0.1', () =>
      sock.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data),
    );
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no close after 5 s; got ${Buffer.concat(chunks).toString('latin1')}`));
    }, 5000);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', reject);
    sock.on('close', () => {
      clearTimeout(timer);
      const wire = Buffer.concat(chunks);
      const responses: RawResponse[] = [];
      let at = 0;
      for (;;) {
        const end = wire.indexOf('\r\n\r\n', at);
        if (end === -1) break;
        const [statusLine, ...rest] = wire.toString('latin1', at, end).split('\r\n');
        const status = Number(statusLine!.split(' ')[1]);
        const lines = rest.map((l): [string, string] => {
          const i = l.indexOf(':');
          return [l.slice(0, i), l.slice(i + 1).trim()];
        });
        const r: RawResponse = { status, lines, body: '' };
        const bodyless = heads[responses.length] === true || status === 204 || status === 304;
        if (!bodyless && header(r, 'transfer-encoding') === 'chunked') {
          // Only empty or single-chunk bodies occur here (`res.end()` on a redirect).
          const term = wire.indexOf('0\r\n\r\n', end + 4);
          if (term === -1) break;
          responses.push(r);
          at = term + 5;
          continue;
        }
        const length = bodyless ? 0 : Number(header(r, 'content-length') ?? 0);
        r.body = wire.toString('utf8', end + 4, end + 4 + length);
        responses.push(r);
        at = end + 4 + length;
      }
      resolve({ responses, rest: wire.toString('latin1', at), wire: wire.toString('latin1') });
    });
  });
}

/** A request head; `close` marks the last one of an exchange. */
export function get(host: string, path: string, close = false, extra = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}${close ? 'Connection: close\r\n' : ''}\r\n`;
}
