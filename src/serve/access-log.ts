import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientAddresses } from '../client-address.ts';
import type { AccessLogRecorder } from '../domain/analytics/recorder.ts';
import { versionIdOf } from './decide.ts';
import type { SiteDirectory } from './directory.ts';
import type { WireAnswer, WireRequest } from './wire.ts';

/**
 * The edge's side of the access log: turns a finished request (full path) or a fast-lane answer into
 * one record for the ring. No I/O and no hashing here — the recorder's flush does that off the path.
 * Country and request id come from headers only when the peer is a trusted proxy.
 */
/**
 * Responses the edge answered `unseen` (a private space to a visitor holding nothing, exactly as for a
 * hostname with no space). They are not recorded: recording them for the space and not for an unknown
 * hostname made the private answer measurably slower (behaviour §3.4: never revealed, timing included).
 */
const unseenAnswers = new WeakSet<object>();

/** Marks a response as an `unseen` answer (see {@link unseenAnswers}). */
export function markUnseen(res: object): void {
  unseenAnswers.add(res);
}

export class EdgeAccessLog {
  constructor(
    private readonly recorder: AccessLogRecorder,
    private readonly directory: SiteDirectory,
    private readonly addresses: ClientAddresses,
    private readonly countryHeader: string | null,
  ) {}

  /** Records the lane's answer once it is known (a promise is followed, not awaited). */
  fastAnswered(
    req: WireRequest,
    hostname: string,
    out: WireAnswer | Promise<WireAnswer | null>,
  ): WireAnswer | Promise<WireAnswer | null> {
    const t = Date.now();
    if (!(out instanceof Promise)) {
      this.fast(req, hostname, out, t);
      return out;
    }
    return out.then((a) => {
      if (a) this.fast(req, hostname, a, t);
      return a;
    });
  }

  /** Records a fast-lane answer: one small object into the ring (bytes are the body's, duration ~0). */
  fast(req: WireRequest, hostname: string, a: WireAnswer, t: number): void {
    const target = this.directory.peek(hostname);
    if (target?.kind !== 'site') return;
    const addresses = this.addresses;
    const peer = req.remoteAddress ?? '';
    const fromProxy = addresses.isTrustedProxy(peer);
    this.recorder.record({
      t,
      spaceId: target.space.id,
      versionId: versionIdOf(target, target.space),
      host: hostname,
      method: req.method,
      path: req.url,
      status: a.status,
      bytes: a.body ? a.body.length : 0,
      durationMs: Date.now() - t,
      referrer: req.headers.referer,
      userAgent: req.headers['user-agent'],
      country: fromProxy && this.countryHeader ? req.headers[this.countryHeader] : undefined,
      requestId: fromProxy ? req.headers['x-request-id'] : undefined,
      ip: fromProxy
        ? addresses.clientAddress({ socket: { remoteAddress: peer }, headers: req.headers } as never)
        : peer,
    });
  }

  /** Records a full-path request once its response is sent (only requests for a site space). */
  onFinish(req: IncomingMessage, res: ServerResponse, hostname: string): void {
    const t = Date.now();
    const written = req.socket.bytesWritten;
    res.once('finish', () => {
      // An `unseen` answer belongs to no space (it must cost what a hostname with no space costs).
      if (unseenAnswers.has(res)) return;
      const target = this.directory.peek(hostname);
      if (!target || (target.kind !== 'site' && target.kind !== 'redirect')) return;
      const space = target.space;
      if (space.deleted) return;
      const addresses = this.addresses;
      const fromProxy = addresses.fromTrustedProxy(req);
      const len = Number(res.getHeader('content-length'));
      const header = (name: string) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      this.recorder.record({
        t,
        spaceId: space.id,
        versionId: target.kind === 'site' ? versionIdOf(target, target.space) : null,
        host: hostname,
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        status: res.statusCode,
        bytes:
          req.method === 'HEAD'
            ? 0
            : Number.isFinite(len)
              ? len
              : Math.max(0, (req.socket?.bytesWritten ?? written) - written),
        durationMs: Date.now() - t,
        referrer: header('referer'),
        userAgent: header('user-agent'),
        country: fromProxy && this.countryHeader ? header(this.countryHeader) : undefined,
        requestId: fromProxy ? header('x-request-id') : undefined,
        ip: addresses.clientAddress(req),
      });
    });
  }
}
