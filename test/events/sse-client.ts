import http from 'node:http';

export interface SseEvent {
  id: string | null;
  event: string | null;
  data: any;
}

export interface SseStream {
  status: number;
  contentType: string;
  events: SseEvent[];
  comments: string[];
  /** Resolves once at least `n` events arrived (rejects after `ms`). */
  waitForEvents(n: number, ms?: number): Promise<void>;
  waitForComment(match: RegExp, ms?: number): Promise<void>;
  /** Cuts the connection from the client side (no orderly end). */
  destroy(): void;
  closed: Promise<void>;
}

/** A minimal EventSource over node:http: parses `id`, `event`, `data` and comment lines. */
export function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let buf = '';
      const check = () => {
        for (const w of [...waiters]) w();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        for (;;) {
          const end = buf.indexOf('\n\n');
          if (end < 0) break;
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          let id: string | null = null;
          let event: string | null = null;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length) events.push({ id, event, data: JSON.parse(data.join('\n')) });
        }
        check();
      });
      const closed = new Promise<void>((r) => {
        res.on('close', () => r());
        res.on('error', () => r());
      });
      const wait = (ok: () => boolean, what: string, ms: number) =>
        new Promise<void>((done, fail) => {
          if (ok()) return done();
          const timer = setTimeout(() => {
            waiters.delete(w);
            fail(new Error(`timed out waiting for ${what}; got ${events.length} events`));
          }, ms);
          const w = () => {
            if (!ok()) return;
            clearTimeout(timer);
            waiters.delete(w);
            done();
          };
          waiters.add(w);
        });
      resolve({
        status: res.statusCode ?? 0,
        contentType: String(res.headers['content-type'] ?? ''),
        events,
        comments,
        waitForEvents: (n, ms = 20_000) => wait(() => events.length >= n, `${n} events`, ms),
        waitForComment: (match, ms = 20_000) =>
          wait(() => comments.some((c) => match.test(c)), `a comment ${match}`, ms),
        destroy: () => req.destroy(),
        closed,
      });
    });
    req.on('error', reject);
  });
}
