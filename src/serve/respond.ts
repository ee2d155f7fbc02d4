import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import type { BlobStore } from '../blobs/port.ts';
import type { ManifestEntry } from '../site/types.ts';
import type { BlobCache } from './blob-cache.ts';
import {
  ALLOW_STATIC,
  defaultCacheControl,
  type ExtraHeaders,
  etagOf,
  httpDate,
  ifNoneMatchHits,
  isHtmlType,
  merge,
  negotiateEncoding,
  normalizeExtra,
  parseRange,
  type ServeFileOptions,
  type Variant,
  withCharset,
} from './http-file.ts';
import { createHtmlInjector, type Injection, injectHtml, isEmptyInjection } from './inject.ts';
import { sendMethodNotAllowed, sendSystemPage } from './pages.ts';
import type { WireAnswer } from './wire.ts';

/**
 * Serving one manifest entry over raw `node:http`, with HTTP done properly: strong ETags, 304s,
 * Last-Modified, single byte ranges, HEAD, Accept-Encoding negotiation over the precomputed variants,
 * and the documented Cache-Control policy. Small blobs come from the in-memory {@link BlobCache} and
 * are answered with one `writeHead` + `end(buffer)`; large ones stream from the blob store. The
 * header arithmetic is in http-file.ts (re-exported here).
 */

export {
  ALLOW_STATIC,
  CACHE_HTML,
  CACHE_IMMUTABLE,
  CACHE_REVALIDATE,
  defaultCacheControl,
  type ExtraHeaders,
  etagOf,
  ifNoneMatchHits,
  isHtmlType,
  looksHashed,
  negotiateEncoding,
  parseRange,
  type RangeResult,
  type ServeFileOptions,
  type Variant,
  withCharset,
} from './http-file.ts';

interface PreparedVariant {
  etag: string;
  sha256: string;
  size: number;
  /** Flat `[name, value, …]` headers shared by 200/206 answers, without Content-Length. */
  headers: string[];
  /** Headers for a 304. */
  notModified: string[];
  /** `headers` plus Content-Length: the whole answer for a plain 200/404 with no routing headers. */
  full: string[];
  /** `full` with a routing header set laid over it, memoised per header-set object. */
  fullWith: WeakMap<object, string[]>;
  /** `notModified` with a routing header set laid over it, memoised per header-set object. */
  notModifiedWith: WeakMap<object, string[]>;
  /**
   * The fast lane's last answers from this variant — [GET, HEAD, 304] — reused while status, headers
   * and body are the same objects (answers are read, never changed, by the lane).
   */
  answers: [WireAnswer | null, WireAnswer | null, WireAnswer | null];
}

/** `answers[slot]` of `v` when it says the same thing, else a new answer kept there. */
function reuseAnswer(
  v: PreparedVariant,
  slot: 0 | 1 | 2,
  status: number,
  headers: string[],
  body: Buffer | null,
): WireAnswer {
  const last = v.answers[slot];
  if (last !== null && last.status === status && last.headers === headers && last.body === body) return last;
  const answer = { status, headers, body };
  v.answers[slot] = answer;
  return answer;
}

interface Prepared {
  lastModifiedMs: number;
  lastModifiedSec: number;
  cacheControl: string;
  html: boolean;
  contentType: string;
  identity: PreparedVariant;
  br?: PreparedVariant;
  gzip?: PreparedVariant;
}

export interface FileResponderOptions {
  blobs: BlobStore;
  cache: BlobCache;
  /** Called when a blob can't be read (missing, I/O error). */
  onError?: (err: unknown, entry: ManifestEntry) => void;
}

/**
 * Serves manifest entries. Header sets are prepared once per entry object (entries live in the
 * in-memory manifest of a version, so the prepared form lives exactly as long as they do).
 */
export class FileResponder {
  private readonly prepared = new WeakMap<ManifestEntry, Prepared>();
  private readonly blobs: BlobStore;
  readonly cache: BlobCache;
  private readonly onError?: (err: unknown, entry: ManifestEntry) => void;

  constructor(opts: FileResponderOptions) {
    this.blobs = opts.blobs;
    this.cache = opts.cache;
    this.onError = opts.onError;
  }

  private prepare(entry: ManifestEntry, lastModified: Date): Prepared {
    const ms = lastModified.getTime();
    const existing = this.prepared.get(entry);
    if (existing && existing.lastModifiedMs === ms) return existing;
    const contentType = withCharset(entry.contentType || 'application/octet-stream');
    const cacheControl = defaultCacheControl(entry.path, entry.contentType);
    const lastModifiedStr = httpDate(ms);
    const vary = entry.encodings?.br || entry.encodings?.gzip ? 'Accept-Encoding' : null;
    const variant = (v: Variant, sha256: string, size: number): PreparedVariant => {
      const etag = etagOf(entry, v);
      const common = ['ETag', etag, 'Last-Modified', lastModifiedStr, 'Cache-Control', cacheControl];
      if (vary) common.push('Vary', vary);
      const headers = [
        'Content-Type',
        contentType,
        ...common,
        'Accept-Ranges',
        'bytes',
        'X-Content-Type-Options',
        'nosniff',
      ];
      if (v !== 'identity') headers.push('Content-Encoding', v);
      return {
        etag,
        sha256,
        size,
        headers,
        notModified: common,
        full: [...headers, 'Content-Length', String(size)],
        fullWith: new WeakMap(),
        notModifiedWith: new WeakMap(),
        answers: [null, null, null],
      };
    };
    const p: Prepared = {
      lastModifiedMs: ms,
      lastModifiedSec: Math.floor(ms / 1000) * 1000,
      cacheControl,
      html: isHtmlType(entry.contentType),
      contentType,
      identity: variant('identity', entry.sha256, entry.size),
    };
    if (entry.encodings?.br) p.br = variant('br', entry.encodings.br.sha256, entry.encodings.br.size);
    if (entry.encodings?.gzip)
      p.gzip = variant('gzip', entry.encodings.gzip.sha256, entry.encodings.gzip.size);
    this.prepared.set(entry, p);
    return p;
  }

  /** Answers `req` with `opts.entry`. Resolves when the response has been handed to the socket. */
  serve(req: IncomingMessage, res: ServerResponse, opts: ServeFileOptions): Promise<void> | undefined {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') {
      sendMethodNotAllowed(req, res, ALLOW_STATIC);
      return;
    }
    const head = method === 'HEAD';
    const entry = opts.entry;
    const p = this.prepare(entry, opts.lastModified);
    const status = opts.status ?? 200;
    const injection = p.html && opts.injection && !isEmptyInjection(opts.injection) ? opts.injection : null;
    if (injection) return this.serveInjected(req, res, opts, p, injection, status, head);

    const v = this.pick(req.headers['accept-encoding'], p);
    const extra = opts.headers ? this.extraOf(opts.headers) : null;

    if (status === 200) {
      if (this.preconditionFailed(req, p, v.etag)) {
        res.writeHead(412, merge(v.notModified, extra).concat('Content-Length', '0'));
        res.end();
        return;
      }
      if (this.notModified(req.headers, p, v.etag)) {
        res.writeHead(304, this.notModifiedHeaders(v, opts.headers));
        res.end();
        return;
      }
      const rangeHeader = req.headers.range;
      if (rangeHeader !== undefined && !head && this.ifRangeHolds(req, p)) {
        const range = parseRange(rangeHeader, entry.size);
        if (range === 'unsatisfiable') {
          const body = `Range not satisfiable: this file has ${entry.size} bytes.\n`;
          res.writeHead(
            416,
            merge(
              [
                'Content-Range',
                `bytes */${entry.size}`,
                'Content-Type',
                'text/plain; charset=utf-8',
                'Content-Length',
                String(Buffer.byteLength(body)),
                'X-Content-Type-Options',
                'nosniff',
                'Cache-Control',
                'no-store',
              ],
              null,
            ),
          );
          res.end(body);
          return;
        }
        if (range) return this.sendRange(req, res, entry, p, extra, range.start, range.end);
      }
    }
    const headers = this.fullHeaders(v, opts.headers);
    if (head) {
      res.writeHead(status, headers);
      res.end();
      return;
    }
    if (this.cache.accepts(v.size)) {
      const hit = this.cache.get(v.sha256);
      if (hit) {
        res.writeHead(status, headers);
        res.end(hit);
        return;
      }
      return this.cache.load(this.blobs, v.sha256, v.size).then(
        (buf) => {
          res.writeHead(status, headers);
          res.end(buf);
        },
        (err) => this.fail(req, res, err, entry),
      );
    }
    return this.stream(req, res, entry, v.sha256, undefined, status, headers);
  }

  /**
   * The same answer as {@link serve} for the plain cases, as data for the edge's fast lane: a 200 (or
   * the routed status) from the blob cache, a 304, or a HEAD. `null` when the request needs the full
   * path — HTML injection, ranges, `If-Match`/`If-Unmodified-Since`, a body too big to hold in memory
   * or a blob that cannot be read — so node:http answers it exactly as before.
   */
  answer(
    method: 'GET' | 'HEAD',
    reqHeaders: Readonly<Record<string, string | undefined>>,
    opts: ServeFileOptions,
  ): WireAnswer | null | Promise<WireAnswer | null> {
    const p = this.prepare(opts.entry, opts.lastModified);
    if (p.html && opts.injection && !isEmptyInjection(opts.injection)) return null;
    if (
      reqHeaders.range !== undefined ||
      reqHeaders['if-match'] !== undefined ||
      reqHeaders['if-unmodified-since'] !== undefined
    ) {
      return null;
    }
    const status = opts.status ?? 200;
    const v = this.pick(reqHeaders['accept-encoding'], p);
    if (status === 200 && this.notModified(reqHeaders, p, v.etag)) {
      return reuseAnswer(v, 2, 304, this.notModifiedHeaders(v, opts.headers), null);
    }
    const headers = this.fullHeaders(v, opts.headers);
    if (method === 'HEAD') return reuseAnswer(v, 1, status, headers, null);
    if (!this.cache.accepts(v.size)) return null;
    const hit = this.cache.get(v.sha256);
    if (hit) return reuseAnswer(v, 0, status, headers, hit);
    return this.cache.load(this.blobs, v.sha256, v.size).then(
      (body) => ({ status, headers, body }),
      () => null,
    );
  }

  /** The variant to send for this Accept-Encoding among those the entry has. */
  private pick(acceptEncoding: string | undefined, p: Prepared): PreparedVariant {
    if (!p.br && !p.gzip) return p.identity;
    const enc = this.encodingFor(acceptEncoding, p);
    if (enc === 'br' && p.br) return p.br;
    if (enc === 'gzip' && p.gzip) return p.gzip;
    return p.identity;
  }

  /** A 200's headers with the routing header set laid over them, memoised per header-set object. */
  private fullHeaders(v: PreparedVariant, routed: ExtraHeaders | null | undefined): string[] {
    if (!routed) return v.full;
    let headers = v.fullWith.get(routed);
    if (!headers) {
      headers = merge(v.full, this.extraOf(routed));
      v.fullWith.set(routed, headers);
    }
    return headers;
  }

  /** A 304's headers with the routing header set laid over them, memoised per header-set object. */
  private notModifiedHeaders(v: PreparedVariant, routed: ExtraHeaders | null | undefined): string[] {
    if (!routed) return v.notModified;
    let headers = v.notModifiedWith.get(routed);
    if (!headers) {
      headers = merge(v.notModified, this.extraOf(routed));
      v.notModifiedWith.set(routed, headers);
    }
    return headers;
  }

  private readonly normalized = new WeakMap<object, string[] | null>();

  /** A routing header set as a flat list, memoised per object (compiled rule sets are reused). */
  private extraOf(h: ExtraHeaders): string[] | null {
    let out = this.normalized.get(h);
    if (out === undefined) {
      out = normalizeExtra(h);
      this.normalized.set(h, out);
    }
    return out;
  }

  /** Accept-Encoding values repeat endlessly (a handful of browsers); parse each once. */
  private readonly encodingMemo = new Map<string, Variant>();

  private encodingFor(header: string | undefined, p: Prepared): Variant {
    if (!header) return 'identity';
    const key = `${p.br ? 'b' : ''}${p.gzip ? 'g' : ''}|${header}`;
    let v = this.encodingMemo.get(key);
    if (v === undefined) {
      v = negotiateEncoding(header, { br: p.br, gzip: p.gzip });
      if (this.encodingMemo.size >= 256) this.encodingMemo.clear();
      this.encodingMemo.set(key, v);
    }
    return v;
  }

  /**
   * `If-Match` (strong comparison) and `If-Unmodified-Since` (only without `If-Match`), RFC 9110
   * §13.1.1/§13.1.4: a failed precondition answers 412.
   */
  private preconditionFailed(req: IncomingMessage, p: Prepared, etag: string): boolean {
    const im = req.headers['if-match'];
    if (im !== undefined) {
      const v = im.trim();
      if (v === '*') return false;
      const re = /(W\/)?("[^"]*")/g;
      for (let m = re.exec(v); m !== null; m = re.exec(v)) {
        if (!m[1] && (m[2] === etag || m[2] === p.identity.etag)) return false;
      }
      return true;
    }
    const ius = req.headers['if-unmodified-since'];
    if (ius !== undefined) {
      const t = Date.parse(ius);
      return !Number.isNaN(t) && p.lastModifiedSec > t;
    }
    return false;
  }

  private notModified(
    headers: { 'if-none-match'?: string; 'if-modified-since'?: string },
    p: Prepared,
    etag: string,
  ): boolean {
    const inm = headers['if-none-match'];
    if (inm !== undefined) return ifNoneMatchHits(inm, etag);
    const ims = headers['if-modified-since'];
    if (ims !== undefined) {
      const t = Date.parse(ims);
      return !Number.isNaN(t) && p.lastModifiedSec <= t;
    }
    return false;
  }

  /** `If-Range`: the range applies only if the validator still matches (strongly, for an ETag). */
  private ifRangeHolds(req: IncomingMessage, p: Prepared): boolean {
    const ir = req.headers['if-range'];
    if (ir === undefined) return true;
    const v = String(ir).trim();
    if (v.startsWith('"') || v.startsWith('W/')) return v === p.identity.etag;
    const t = Date.parse(v);
    return !Number.isNaN(t) && t === p.lastModifiedSec;
  }

  private sendRange(
    req: IncomingMessage,
    res: ServerResponse,
    entry: ManifestEntry,
    p: Prepared,
    extra: string[] | null,
    start: number,
    end: number,
  ): Promise<void> | undefined {
    const v = p.identity;
    const headers = merge(v.headers, extra);
    headers.push(
      'Content-Range',
      `bytes ${start}-${end}/${v.size}`,
      'Content-Length',
      String(end - start + 1),
    );
    const cached = this.cache.accepts(v.size) ? this.cache.get(v.sha256) : undefined;
    if (cached) {
      res.writeHead(206, headers);
      res.end(cached.subarray(start, end + 1));
      return;
    }
    return this.stream(req, res, entry, v.sha256, { start, end }, 206, headers);
  }

  private serveInjected(
    req: IncomingMessage,
    res: ServerResponse,
    opts: ServeFileOptions,
    p: Prepared,
    injection: Injection,
    status: number,
    head: boolean,
  ): Promise<void> | undefined {
    const entry = opts.entry;
    const etag = `"${entry.sha256}.i${injection.key}"`;
    const extra = opts.headers ? this.extraOf(opts.headers) : null;
    const common = [
      'ETag',
      etag,
      'Last-Modified',
      httpDate(p.lastModifiedMs),
      'Cache-Control',
      p.cacheControl,
    ];
    if (status === 200 && this.notModified(req.headers, p, etag)) {
      res.writeHead(304, merge(common, extra));
      res.end();
      return;
    }
    const headers = merge(
      ['Content-Type', p.contentType, ...common, 'X-Content-Type-Options', 'nosniff'],
      extra,
    );
    if (!this.cache.accepts(entry.size)) {
      // Too big to hold: stream through the injector (chunked, no Content-Length, no ranges).
      if (head) {
        res.writeHead(status, headers);
        res.end();
        return;
      }
      return this.stream(req, res, entry, entry.sha256, undefined, status, headers, injection);
    }
    const key = `${entry.sha256}:i${injection.key}`;
    const send = (body: Buffer) => {
      headers.push('Content-Length', String(body.length));
      res.writeHead(status, headers);
      if (head) res.end();
      else res.end(body);
    };
    const hit = this.cache.get(key);
    if (hit) {
      send(hit);
      return;
    }
    return this.cache.load(this.blobs, entry.sha256, entry.size).then(
      (buf) => {
        const body = injectHtml(buf, injection);
        this.cache.set(key, body);
        send(body);
      },
      (err) => this.fail(req, res, err, entry),
    );
  }

  private stream(
    req: IncomingMessage,
    res: ServerResponse,
    entry: ManifestEntry,
    sha256: string,
    range: { start: number; end: number } | undefined,
    status: number,
    headers: string[],
    injection?: Injection,
  ): Promise<void> {
    return this.blobs.get(sha256, range).then(
      (source) =>
        new Promise<void>((resolve) => {
          res.writeHead(status, headers);
          const done = (err: NodeJS.ErrnoException | null | undefined) => {
            // A client that goes away mid-body is normal; anything else is the store's fault.
            if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') this.onError?.(err, entry);
            resolve();
          };
          if (injection) pipeline(source, createHtmlInjector(injection), res, done);
          else pipeline(source, res, done);
        }),
      (err) => this.fail(req, res, err, entry),
    );
  }

  private fail(req: IncomingMessage, res: ServerResponse, err: unknown, entry: ManifestEntry): void {
    this.onError?.(err, entry);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendSystemPage(req, res, { kind: 'error' });
  }
}
