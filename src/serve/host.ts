import type { IncomingMessage } from 'node:http';

/*
 * Reading the Host of a request. Site host naming (`<name>.<base>`, `<channel>--<name>`, …) is
 * src/domain/hosts/names.ts.
 */

/** The request's hostname without port, lowercased (`[::1]:8080` → `::1`). */
export function requestHostname(req: IncomingMessage): string {
  return hostnameOf(req.headers.host ?? '');
}

/** The last Host value asked about and its answer: keep-alive traffic repeats it request after request. */
let lastHeader = '';
let lastHostname = '';

/** A Host header value's hostname without port, lowercased. */
export function hostnameOf(hostHeader: string): string {
  if (hostHeader === lastHeader) return lastHostname;
  const host = hostHeader.toLowerCase();
  let hostname: string;
  if (host.startsWith('[')) hostname = host.slice(1, host.indexOf(']'));
  else {
    const colon = host.lastIndexOf(':');
    hostname = colon === -1 ? host : host.slice(0, colon);
  }
  lastHeader = hostHeader;
  lastHostname = hostname;
  return hostname;
}

/** `host` in any case, without making a lowercase copy of every header name. */
function isHostName(name: string): boolean {
  return name.length === 4 && (name === 'Host' || name === 'host' || name.toLowerCase() === 'host');
}

const ABSOLUTE_FORM = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/;
const DEFAULT_PORT: Readonly<Record<string, string>> = { http: ':80', https: ':443' };

/**
 * False when a request names its host ambiguously (RFC 9112 §3.2, §3.2.2): two `Host` fields, or an
 * absolute-form target whose authority is not the `Host` it sends. The API, the edge and anything in
 * front of them could each pick a different one, so such a request is refused (400) rather than
 * served for whichever came first. An absolute-form target that agrees is rewritten to origin-form,
 * so everything after sees the usual `/path?query` and one `Host`.
 */
export function checkRequestHost(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (isHostName(raw[i]!)) hosts++;
  if (hosts > 1) return false;
  const url = req.url ?? '/';
  if (url.charCodeAt(0) === 0x2f) return true;
  const m = ABSOLUTE_FORM.exec(url);
  if (!m) return true;
  const scheme = m[1]!.toLowerCase();
  const authority = m[2]!.toLowerCase();
  const strip = (a: string) => {
    const port = DEFAULT_PORT[scheme];
    return port && a.endsWith(port) ? a.slice(0, -port.length) : a;
  };
  if (authority === '' || authority.includes('@')) return false;
  const host = req.headers.host;
  if (host !== undefined && strip(host.toLowerCase()) !== strip(authority)) return false;
  if (host === undefined) req.headers.host = authority;
  const rest = url.slice(m[0].length);
  req.url = rest.startsWith('/') ? rest : `/${rest}`;
  return true;
}
