import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Grant } from '../domain/access/model.ts';
import type { HostTarget, SiteSpace } from '../domain/hosts/resolve.ts';
import type { GateVisitor } from './site-gate.ts';

/**
 * One request on the edge's full path: what it asks (host, URL, method, headers), what its host
 * names (the target) and, once known, the site space and whether it is to be indexed. Made once per
 * request and passed along instead of positional parameters. (The fast lane makes none: it answers
 * from the wire request alone.)
 */
export class RequestContext {
  /** The request target as sent (`/path?query`). */
  readonly url: string;
  /** Where the query starts in `url` (`-1`: none). */
  readonly q: number;
  /** The path as sent, undecoded and unnormalised. */
  readonly rawPath: string;
  readonly method: string;
  /** The site space a `site` target serves (set by the edge once the target is a site). */
  space!: SiteSpace;
  /** Not to be indexed: a preview or version hostname, or a space that asks for it. */
  noindex = false;
  /** A space that is not public: the visitor as access control sees them (see gate-entry.ts). */
  gate?: GateVisitor;
  /** The matcher let the request through. */
  gateDone = false;
  /** Let in by a grant that is not public: the answer is `Cache-Control: private`. */
  privateAnswer = false;
  /** The grant the matcher let the request in through (unset on a public space's path). */
  grant?: Grant;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** The request's hostname, lowercased, without port. */
    readonly hostname: string,
    readonly target: HostTarget,
  ) {
    const url = req.url ?? '/';
    this.url = url;
    const q = url.indexOf('?');
    this.q = q;
    this.rawPath = q === -1 ? url : url.slice(0, q);
    this.method = req.method ?? 'GET';
  }

  get headers(): IncomingMessage['headers'] {
    return this.req.headers;
  }

  /** The query string, parsed (a new object each time). */
  query(): URLSearchParams {
    return new URLSearchParams(this.q === -1 ? '' : this.url.slice(this.q + 1));
  }
}
