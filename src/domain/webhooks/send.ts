import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { undici } from '../../net/undici.ts';

/** What one POST to a webhook's URL came to. */
export interface SendOutcome {
  /** A 2xx answer: the receiver acknowledged the event. */
  ok: boolean;
  status: number | null;
  error: string | null;
  /** The first bytes of the answer, as text (at most `EXCERPT_BYTES`). */
  excerpt: string | null;
  durationMs: number;
}

export const EXCERPT_BYTES = 1024;

export interface SendOptions {
  dispatcher: Dispatcher;
  /** The whole exchange, connect to the last byte read (10 s in production). */
  timeoutMs: number;
  /** Response bytes read at most; the rest is not read (64 KiB). */
  maxResponseBytes: number;
}

/**
 * POSTs a signed body once. Redirects are never followed (undici's `request` follows none; a 3xx
 * is a failure like any other non-2xx), at most `maxResponseBytes` of the answer are read before the
 * connection is dropped, and the whole exchange has one deadline.
 */
export async function postOnce(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendOutcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(options.timeoutMs);
  const done = (o: Omit<SendOutcome, 'durationMs'>): SendOutcome => ({
    ...o,
    durationMs: Math.round(performance.now() - started),
  });
  try {
    const res = await undici().request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: options.dispatcher,
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const chunks: Buffer[] = [];
    let read = 0;
    for await (const chunk of res.body) {
      const b = chunk as Buffer;
      const room = options.maxResponseBytes - read;
      chunks.push(b.length > room ? b.subarray(0, room) : b);
      read += Math.min(b.length, room);
      if (read >= options.maxResponseBytes) break;
    }
    // Leaving the loop early destroys the stream: the rest of a large answer is never read.
    res.body.destroy();
    const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') || null;
    const status = res.statusCode;
    if (status >= 200 && status < 300) return done({ ok: true, status, error: null, excerpt });
    const location = res.headers.location;
    const error =
      status >= 300 && status < 400
        ? `Answered ${status} (redirects are not followed${location ? `; Location: ${String(location)}` : ''}).`
        : `Answered ${status}.`;
    return done({ ok: false, status, error, excerpt });
  } catch (err) {
    const e = err as Error & { code?: string; cause?: Error & { reason?: string } };
    if (signal.aborted || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
      return done({
        ok: false,
        status: null,
        error: `No answer within ${options.timeoutMs} ms.`,
        excerpt: null,
      });
    }
    const refused = findRefusal(e);
    const error = refused
      ? `Refused: ${refused}.`
      : `Could not deliver: ${e.code ? `${e.code} ` : ''}${e.message}`.slice(0, 500);
    return done({ ok: false, status: null, error, excerpt: null });
  }
}

function findRefusal(err: unknown): string | null {
  for (
    let e = err as { code?: string; reason?: string; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    i++
  ) {
    if (e.code === 'OUTBOUND_TARGET_REFUSED') return e.reason ?? 'not a public address';
    e = e.cause as typeof e;
  }
  return null;
}
