/**
 * The DNS provider port: what DNS-01 certificate orders (wildcards, the base domain's wildcard) need
 * from a DNS service that Spaces may write to — put a TXT value at a name, take it away again. One
 * implementation ships: RFC 2136 dynamic update, TSIG-signed (rfc2136.ts), which BIND, Knot, PowerDNS
 * and most managed primaries accept.
 */
export interface DnsProvider {
  /** The zones the provider may change (lower case, no trailing dot), as configured. */
  readonly zones: readonly string[];
  /** Adds `value` to the TXT records at `name` (other values there stay). */
  addTxt(name: string, value: string): Promise<void>;
  /** Removes exactly that TXT value at `name` (absent already is fine). */
  removeTxt(name: string, value: string): Promise<void>;
}

const bare = (s: string) => s.toLowerCase().replace(/\.$/, '');

/** The zone of `zones` that `name` falls in (the longest that contains it), or null. */
export function zoneOf(zones: readonly string[], name: string): string | null {
  const n = bare(name);
  const inside = zones.filter((z) => n === z || n.endsWith(`.${z}`));
  return inside.sort((a, b) => b.length - a.length)[0] ?? null;
}

/**
 * Where the DNS-01 TXT value for `host` (a wildcard's parent, or a name itself) is written: at
 * `_acme-challenge.<host>` when that name is in one of the provider's zones; otherwise at
 * `<host>.<first zone>`, which the domain's owner delegates to with a CNAME from
 * `_acme-challenge.<host>` (CAs follow it, as Let's Encrypt's does).
 */
export function challengeTarget(
  zones: readonly string[],
  host: string,
): { name: string; delegated: boolean } {
  const name = `_acme-challenge.${bare(host)}`;
  if (zoneOf(zones, name)) return { name, delegated: false };
  return { name: `${bare(host)}.${zones[0]}`, delegated: true };
}
