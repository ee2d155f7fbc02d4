import type { IncomingMessage } from 'node:http';

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
