import http from 'node:http';
import type { Socket } from 'node:net';
import { isFieldName, isFieldValue } from '../site/field.ts';

/**
 * The edge's fast lane: a small HTTP/1.1 reader and writer on the raw socket for the one kind of
 * request that dominates a static host — a body-less `GET`/`HEAD` whose answer is already in memory.
 *
 * Every connection starts here. Each request head is parsed conservatively (anything unusual is not
 * ours to judge) and offered to the handler; when the handler answers, the response is written
 * straight to the socket as one header block plus the cached body. The first request the lane
 * does not take — an API host, a method with a body, an unusual header, a cold cache the handler
 * declines, a malformed head — hands the whole connection, with every unread byte, to `node:http`,
 * which then owns it to the end. Responses already written precede it on the wire, so order holds
 * even for pipelined requests. `node:http` remains the authority on HTTP edge cases (errors, 400s,
 * 431s, bodies, upgrades); the lane only skips its per-request object machinery on the hot path.
 */

export interface WireRequest {
  method: 'GET' | 'HEAD';
  /** The request target as sent (origin-form: starts with `/`). */
  url: string;
  /** Lowercased names; every name appears once (a repeated header sends the request to node:http). */
  headers: Record<string, string>;
  /** The connection's peer address (for the access log); set by the lane before the handler runs. */
  remoteAddress?: string | undefined;
}

/** An answer may be shared between requests (handlers reuse them): the lane only reads it. */
export interface WireAnswer {
  status: number;
  /** Flat `[name, value, …]`; must not contain Content-Length for bodies unless it is right. */
  headers: readonly string[];
  /** The body; `null` for HEAD, 304 and empty answers. */
  body: Buffer | null;
}

/**
 * `null`: not for the lane (node:http takes the connection from this request on) — an API hostname,
 * or an answer that is not in memory.
 */
export type WireHandler = (req: WireRequest) => WireAnswer | null | Promise<WireAnswer | null>;

export interface FastLane {
  /** Connections currently owned by the lane (for tests and diagnostics). */
  readonly connections: number;
  /** Requests answered by the lane since start. */
  readonly answered: number;
  /** Connections handed to node:http since start. */
  readonly handedOff: number;
}

const CRLF2 = Buffer.from('\r\n\r\n', 'latin1');
/** The buffer of a connection with nothing unread (shared: never written to). */
const EMPTY = Buffer.alloc(0);
/** Unanswered bytes held before the socket stops reading (pipelined requests behind a slow one). */
const HOLD_AT = 64 * 1024;
/** The request target: visible ASCII only (anything else is node:http's to accept or refuse). */
const URL_CHARS = /^\/[\x21-\x7e]*$/;
// Field values: visible ASCII, obs-text, SP and HTAB; any other control byte is node:http's call.
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Headers whose presence means a body, a protocol switch or an interim response: node:http's job. */
const NOT_OURS = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect', 'http2-settings']);

/** A parsed head: the request as the handler sees it, and whether the connection stays open after. */
export interface Parsed extends WireRequest {
  keepAlive: boolean;
}

/**
 * Lowercase names of the request headers browsers and crawlers send, by length: a field whose name
 * matches one (ASCII case-insensitively) is keyed by the constant, with no name string made per
 * request. Other names are sliced, checked and lowercased as before.
 */
const KNOWN_NAMES: readonly (readonly string[])[] = (() => {
  const names = [
    'host',
    'accept',
    'accept-encoding',
    'accept-language',
    'user-agent',
    'connection',
    'cache-control',
    'pragma',
    'referer',
    'cookie',
    'origin',
    'dnt',
    'if-none-match',
    'if-modified-since',
    'upgrade-insecure-requests',
    'sec-fetch-dest',
    'sec-fetch-mode',
    'sec-fetch-site',
    'sec-fetch-user',
    'sec-ch-ua',
    'sec-ch-ua-mobile',
    'sec-ch-ua-platform',
    'priority',
    'te',
    'x-forwarded-for',
    'x-forwarded-proto',
    'x-real-ip',
  ];
  const byLength: string[][] = [];
  for (const n of names) {
    byLength[n.length] ??= [];
    byLength[n.length]!.push(n);
  }
  return byLength;
})();

/** The known lowercase name equal to `head[from, to)` ignoring ASCII case, or null. */
function knownName(head: string, from: number, to: number): string | null {
  const candidates = KNOWN_NAMES[to - from];
  if (candidates === undefined) return null;
  for (const name of candidates) {
    let i = 0;
    for (; i < name.length; i++) {
      const want = name.charCodeAt(i);
      const got = head.charCodeAt(from + i);
      // Letters match either case; every other byte (`-`) only itself.
      if (got !== want && !(want >= 0x61 && want <= 0x7a && got === want - 0x20)) break;
    }
    if (i === name.length) return name;
  }
  return null;
}

/** Parses one request head (without the final CRLFCRLF); null when it is anything but plain. */
export function parseHead(head: string): Parsed | null {
  let eol = head.indexOf('\r\n');
  const lineEnd = eol === -1 ? head.length : eol;
  let method: 'GET' | 'HEAD';
  let from: number;
  if (head.startsWith('GET /')) {
    method = 'GET';
    from = 4;
  } else if (head.startsWith('HEAD /')) {
    method = 'HEAD';
    from = 5;
  } else return null;
  const sp = lineEnd - 9;
  if (sp <= from || head.charCodeAt(sp) !== 32 || !head.startsWith('HTTP/1.', sp + 1)) return null;
  const minor = head.charCodeAt(lineEnd - 1);
  if (minor !== 0x30 && minor !== 0x31) return null;
  const url = head.slice(from, sp);
  if (!URL_CHARS.test(url)) return null;
  // A plain object (a null-prototype one is a slow dictionary in V8); a name that collides with an
  // Object.prototype member (`constructor`, `__proto__`, …) reads as a repeat and goes to node:http.
  const headers: Record<string, string> = {};
  let connection = '';
  while (eol !== -1) {
    const start = eol + 2;
    eol = head.indexOf('\r\n', start);
    const end = eol === -1 ? head.length : eol;
    const colon = head.indexOf(':', start);
    if (colon <= start || colon >= end) return null;
    let lower = knownName(head, start, colon);
    if (lower === null) {
      const name = head.slice(start, colon);
      if (!isFieldName(name)) return null;
      lower = name.toLowerCase();
    }
    if (headers[lower] !== undefined || NOT_OURS.has(lower)) return null;
    let a = colon + 1;
    let b = end;
    while (a < b && (head.charCodeAt(a) === 32 || head.charCodeAt(a) === 9)) a++;
    while (b > a && (head.charCodeAt(b - 1) === 32 || head.charCodeAt(b - 1) === 9)) b--;
    const value = head.slice(a, b);
    if (BAD_VALUE.test(value)) return null;
    headers[lower] = value;
    if (lower === 'connection') connection = value.toLowerCase();
  }
  const http10 = minor === 0x30;
  if (!http10 && headers.host === undefined) return null;
  let keepAlive = !http10;
  if (connection === 'keep-alive') keepAlive = true;
  else if (connection === 'close') keepAlive = false;
  else if (connection) {
    const tokens = connection.split(',').map((t) => t.trim());
    if (tokens.includes('upgrade')) return null;
    keepAlive = http10 ? tokens.includes('keep-alive') : !tokens.includes('close');
  }
  return { method, url, headers, keepAlive, remoteAddress: undefined };
}

/** Whether a LF not preceded by CR occurs (an unfinished head is short: a plain scan). */
function hasBareLf(buf: Buffer): boolean {
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) {
    if (i === 0 || buf[i - 1] !== 0x0d) return true;
  }
  return false;
}

const HAS_LENGTH = /^content-length$/i;

/** Status line and headers (without Date/Connection); null for a header node:http would refuse to send. */
function headBlock(status: number, headers: readonly string[], bodyless: boolean): string | null {
  let block = `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Unknown'}\r\n`;
  let length = false;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    const value = headers[i + 1]!;
    // Never a byte outside the field grammar: latin1 would write U+010D as CR. node:http, which then
    // takes the request, refuses the same header and answers 500 (see `fail` in edge.ts).
    if (!isFieldName(name) || !isFieldValue(value)) return null;
    if (HAS_LENGTH.test(name)) length = true;
    block += `${name}: ${value}\r\n`;
  }
  // A body-less answer without a length (a redirect) says so, so the connection can be reused.
  if (!length && bodyless && status !== 304 && status !== 204) block += 'Content-Length: 0\r\n';
  return block;
}

/** Bodies up to this size go out in the same buffer as the head: one write, one syscall. */
const JOIN_MAX = 64 * 1024;

interface Built {
  second: number;
  body: Buffer | null;
  head: Buffer;
  whole: Buffer | null;
}
/** Response bytes per header list, status and connection flavour; rebuilt when the second turns. */
const built = new WeakMap<readonly string[], Map<number, Built>>();

/**
 * The bytes of one response: the head (status line, headers, Date, connection headers) and, for
 * small bodies, head and body joined. Reused for every response with the same header list, status,
 * body and connection flavour within the same second (the Date header's resolution).
 */
function responseBytes(
  status: number,
  headers: readonly string[],
  body: Buffer | null,
  close: boolean,
  keepAliveMs: number,
): { head: Buffer; whole: Buffer | null } | null {
  const now = Date.now();
  const second = now - (now % 1000);
  let byKey = built.get(headers);
  if (!byKey) {
    byKey = new Map();
    built.set(headers, byKey);
  }
  const key = status * 2 + (close ? 1 : 0);
  const hit = byKey.get(key);
  if (hit && hit.second === second && hit.body === body) return hit;
  const block = headBlock(status, headers, body === null);
  if (block === null) return null;
  const connection = close
    ? 'Connection: close\r\n'
    : `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n`;
  const date = `Date: ${new Date(second).toUTCString()}\r\n`;
  const head = Buffer.from(`${block}${date}${connection}\r\n`, 'latin1');
  const whole = body === null ? head : body.length <= JOIN_MAX ? Buffer.concat([head, body]) : null;
  const entry: Built = { second, body, head, whole };
  byKey.set(key, entry);
  return entry;
}

interface Conn {
  socket: Socket;
  buf: Buffer;
  /** A request is being answered asynchronously or the socket is draining: don't read the next. */
  busy: boolean;
  /** When the unfinished head in `buf` started arriving (0: none). */
  partialSince: number;
  onData: (chunk: Buffer) => void;
  onError: () => void;
  onTimeout: () => void;
  onClose: () => void;
}

/**
 * Puts the lane in front of `server`'s connection handling. Call once, after every `connection`
 * listener the server will have is installed (node:http's own is added by its constructor). For an
 * HTTPS server pass `secureConnection`: the lane then reads the decrypted stream node:https would.
 */
export function installFastLane(
  server: http.Server,
  handler: WireHandler,
  event: 'connection' | 'secureConnection' = 'connection',
): FastLane {
  const downstream = server.listeners(event) as ((socket: Socket) => void)[];
  server.removeAllListeners(event);
  const conns = new Set<Conn>();
  const stats = { answered: 0, handedOff: 0 };
  let closing = false;
  const maxHead = http.maxHeaderSize;

  const release = (c: Conn) => {
    const s = c.socket;
    s.removeListener('data', c.onData);
    s.removeListener('error', c.onError);
    s.removeListener('timeout', c.onTimeout);
    s.removeListener('close', c.onClose);
    conns.delete(c);
  };

  const handOff = (c: Conn) => {
    release(c);
    stats.handedOff++;
    const s = c.socket;
    s.setTimeout(0);
    if (c.buf.length) s.unshift(c.buf);
    c.buf = EMPTY;
    if (s.isPaused()) s.resume();
    for (const l of downstream) l.call(server, s);
  };

  const write = (c: Conn, p: Parsed, a: WireAnswer): boolean => {
    const body = p.method === 'HEAD' || a.status === 304 || a.status === 204 ? null : a.body;
    const close = closing || !p.keepAlive;
    const out = responseBytes(a.status, a.headers, body, close, server.keepAliveTimeout);
    if (out === null) return false;
    if (out.whole) c.socket.write(out.whole);
    else {
      // One writev for head and a big body.
      c.socket.cork();
      c.socket.write(out.head);
      c.socket.write(body!);
      c.socket.uncork();
    }
    stats.answered++;
    if (close) {
      release(c);
      c.socket.end();
    }
    return true;
  };

  /** Answers every complete head in the buffer, in order, until one needs waiting or node:http. */
  const pump = (c: Conn): void => {
    const s = c.socket;
    if (s.isPaused()) s.resume();
    let corked = false;
    try {
      while (!c.busy && conns.has(c)) {
        const end = c.buf.indexOf(CRLF2);
        if (end === -1) {
          // Too long, or lines ending in a bare LF (which node:http may accept): not ours.
          if (c.buf.length > maxHead || hasBareLf(c.buf)) handOff(c);
          else if (c.buf.length) c.partialSince ||= Date.now();
          return;
        }
        if (end > maxHead) return void handOff(c);
        const p = parseHead(c.buf.toString('latin1', 0, end));
        if (!p) return void handOff(c);
        p.remoteAddress = s.remoteAddress;
        let out: ReturnType<WireHandler>;
        try {
          out = handler(p);
        } catch {
          out = null;
        }
        if (out === null) return void handOff(c);
        if (out instanceof Promise) {
          c.busy = true;
          s.setTimeout(0);
          out.then(
            (a) => finish(c, p, end, a),
            () => finish(c, p, end, null),
          );
          return;
        }
        // Pipelined requests behind this one: gather their answers into one write.
        if (!corked && c.buf.length > end + 4) {
          s.cork();
          corked = true;
        }
        if (!write(c, p, out)) return void handOff(c);
        c.buf = end + 4 === c.buf.length ? EMPTY : c.buf.subarray(end + 4);
        c.partialSince = 0;
        if (s.writableNeedDrain && conns.has(c)) {
          c.busy = true;
          s.once('drain', () => {
            c.busy = false;
            pump(c);
          });
        }
      }
    } finally {
      if (corked) s.uncork();
    }
  };

  const finish = (c: Conn, p: Parsed, end: number, a: WireAnswer | null) => {
    c.busy = false;
    if (!conns.has(c) || c.socket.destroyed) return;
    c.socket.setTimeout(server.keepAliveTimeout);
    if (a === null || !write(c, p, a)) return void handOff(c);
    c.buf = end + 4 === c.buf.length ? EMPTY : c.buf.subarray(end + 4);
    c.partialSince = 0;
    pump(c);
  };

  server.on(event, (socket: Socket) => {
    if (closing) {
      for (const l of downstream) l.call(server, socket);
      return;
    }
    const c: Conn = {
      socket,
      buf: EMPTY,
      busy: false,
      partialSince: 0,
      onData: (chunk) => {
        c.buf = c.buf.length ? Buffer.concat([c.buf, chunk]) : chunk;
        // A client that keeps sending while an answer waits (or its socket drains) is held off.
        if (c.busy && c.buf.length > HOLD_AT) socket.pause();
        if (c.partialSince && Date.now() - c.partialSince > server.headersTimeout) {
          release(c);
          socket.destroy();
          return;
        }
        if (!c.busy) pump(c);
      },
      onError: () => {
        release(c);
        socket.destroy();
      },
      onTimeout: () => {
        release(c);
        socket.destroy();
      },
      onClose: () => release(c),
    };
    conns.add(c);
    socket.on('data', c.onData);
    socket.on('error', c.onError);
    socket.on('timeout', c.onTimeout);
    socket.on('close', c.onClose);
    socket.setTimeout(server.keepAliveTimeout);
  });

  /** Closing: idle lane connections go at once; busy ones after their answer (Connection: close). */
  const shutIdle = () => {
    closing = true;
    for (const c of [...conns]) {
      if (!c.busy && c.buf.length === 0) {
        release(c);
        c.socket.destroy();
      }
    }
  };
  const close = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => {
    shutIdle();
    return close(cb);
  }) as typeof server.close;
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    shutIdle();
    closeIdle();
  };
  const closeAll = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    closing = true;
    for (const c of [...conns]) {
      release(c);
      c.socket.destroy();
    }
    closeAll();
  };

  return {
    get connections() {
      return conns.size;
    },
    get answered() {
      return stats.answered;
    },
    get handedOff() {
      return stats.handedOff;
    },
  };
}
