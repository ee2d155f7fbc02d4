import type { IncomingMessage } from 'node:http';

/** The request's hostname without port, lowercased (`[::1]:8080` → `::1`). */
export function requestHostname(req: IncomingMessage): string {
  return hostnameOf(req.headers.host ?? '');
}

/** A Host header value's hostname without port, lowercased. */
export function hostnameOf(hostHeader: string): string {
  const host = hostHeader.toLowerCase();
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}
