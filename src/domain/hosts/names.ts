/**
 * Site host naming, pure: a space answers on `<name>.<base>` (its live channel),
 * `<channel>--<name>.<base>` (a preview channel) and `<versionId>--<name>.<base>` (one immutable
 * version, `ver_…` or, DNS-safe, `ver-…`). Hostnames compare lowercased.
 */

/** The label of a managed hostname (`a--b` in `a--b.localhost`), or null if not one under `baseDomain`. */
export function siteLabelOf(hostname: string, baseDomain: string): string | null {
  const suffixLength = baseDomain.length + 1;
  if (hostname.length <= suffixLength || !hostname.endsWith(baseDomain)) return null;
  if (hostname.charCodeAt(hostname.length - suffixLength) !== 0x2e) return null;
  const label = hostname.slice(0, -suffixLength);
  return label.includes('.') ? null : label;
}

/** A site label (`<name>`, or `<channel or version>--<name>`: the first `--` separates them). */
export function splitSiteLabel(label: string): { prefix: string | null; name: string } {
  const sep = label.indexOf('--');
  return sep === -1
    ? { prefix: null, name: label }
    : { prefix: label.slice(0, sep), name: label.slice(sep + 2) };
}

/** The hostname of a space's name with a channel or version prefix (or none) under `baseDomain`. */
export function siteHostname(prefix: string | null, name: string, baseDomain: string): string {
  return `${prefix ? `${prefix}--` : ''}${name}.${baseDomain}`;
}

const VERSION_PREFIX = /^ver[_-][0-9a-z]{26}$/;

/** What a label's prefix names: a version (`ver_…`/`ver-…`, as its id `ver_…`) or a channel. */
export function prefixTarget(prefix: string | null): { channel: string; versionId: string | null } {
  if (!prefix) return { channel: 'live', versionId: null };
  if (VERSION_PREFIX.test(prefix)) return { channel: 'live', versionId: `ver_${prefix.slice(4)}` };
  return { channel: prefix, versionId: null };
}

/**
 * The hostnames a space answers on: `<name>.<base>`, every `<channel or version>--<name>.<base>`
 * and `extra` (custom domains). Hostnames compare lowercased, without a trailing dot.
 */
export function ownHostMatcher(
  baseDomain: string,
  publicName: string,
  extra: readonly string[] = [],
): (hostname: string) => boolean {
  const base = baseDomain.toLowerCase();
  const others = new Set(extra.map((h) => h.toLowerCase().replace(/\.$/, '')));
  return (hostname) => {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    if (others.has(host)) return true;
    const label = siteLabelOf(host, base);
    return label !== null && splitSiteLabel(label).name === publicName;
  };
}
