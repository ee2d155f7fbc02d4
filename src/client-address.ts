import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * Who the client is, one rule for the API and the sites (`SPACES_TRUSTED_PROXIES`): the socket peer,
 * unless that peer is a trusted proxy — then `X-Forwarded-For` is read from its right end (the hop
 * nearest to us) leftwards, past every trusted proxy, and the first address that isn't one is the
 * client. Anything further left was written by that client and proves nothing. When every hop is
 * trusted, the leftmost is the client.
 *
 * The API gets the same answer through Fastify's `trustProxy` (given {@link isTrustedProxy}), whose
 * `req.ip` walks the header the same way; the edge, which has no Fastify request, calls
 * {@link clientAddress}. Quotas, rate limits, firewall rules and proxied `X-Forwarded-For` all see
 * this one address.
 */
export class ClientAddresses {
  private readonly trusted: Range[];

  constructor(trustedProxies: readonly string[]) {
    this.trusted = trustedProxies.map((c) =>
      c.includes('/')
        ? ipaddr.parseCIDR(c)
        : ipaddr.parseCIDR(`${c}/${ipaddr.parse(c).kind() === 'ipv4' ? 32 : 128}`),
    );
  }

  /** Whether a peer or hop is one of the configured proxies (an IPv4-mapped IPv6 address counts as IPv4). */
  readonly isTrustedProxy = (address: string | undefined): boolean => {
    if (!address || this.trusted.length === 0) return false;
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      ip = ipaddr.process(address);
    } catch {
      return false;
    }
    return this.trusted.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range, bits));
  };

  /** The client address of a request (see the class comment). */
  clientAddress(req: IncomingMessage): string {
    const peer = req.socket.remoteAddress ?? '';
    if (!this.isTrustedProxy(peer)) return peer;
    const header = req.headers['x-forwarded-for'];
    if (!header) return peer;
    const hops = (Array.isArray(header) ? header.join(',') : header)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!this.isTrustedProxy(hops[i])) return hops[i]!;
    return hops[0] ?? peer;
  }

  /** Whether the request came straight from a trusted proxy (so its `X-Forwarded-*` headers are believed). */
  fromTrustedProxy(req: IncomingMessage): boolean {
    return this.isTrustedProxy(req.socket.remoteAddress);
  }

  /** The scheme the client used: a trusted proxy's `X-Forwarded-Proto`, else the socket's, else `fallback`. */
  scheme(req: IncomingMessage, fallback: 'http' | 'https'): 'http' | 'https' {
    if (this.fromTrustedProxy(req)) {
      const p = String(req.headers['x-forwarded-proto'] ?? '')
        .split(',')[0]!
        .trim();
      if (p === 'https' || p === 'http') return p;
    }
    return (req.socket as { encrypted?: boolean }).encrypted ? 'https' : fallback;
  }
}
