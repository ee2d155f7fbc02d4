import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Reader } from 'maxmind';

/**
 * Where the visitor attributes the firewall and `_redirects` conditions use come from: an optional
 * MaxMind-format database (`SPACES_GEOIP_DB`: GeoLite2/GeoIP2 Country, City or ASN files) and, from
 * trusted proxies only, request headers named in `SPACES_TRUSTED_PROXY_HEADERS`
 * (`country=cf-ipcountry,asn=x-asn,ja3=x-ja3-fingerprint,ja4=x-ja4-fingerprint`).
 */
export type VisitorAttribute = 'country' | 'asn' | 'ja3' | 'ja4';
export const VISITOR_ATTRIBUTES: VisitorAttribute[] = ['country', 'asn', 'ja3', 'ja4'];

export function parseTrustedHeaders(spec: string): Partial<Record<VisitorAttribute, string>> {
  const out: Partial<Record<VisitorAttribute, string>> = {};
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^(country|asn|ja3|ja4)=([A-Za-z0-9-]{1,64})$/.exec(part);
    if (!m)
      throw new Error(
        `"${part}" is not attribute=header-name (attributes: ${VISITOR_ATTRIBUTES.join(', ')})`,
      );
    out[m[1] as VisitorAttribute] = m[2]!.toLowerCase();
  }
  return out;
}

interface GeoRecord {
  country?: { iso_code?: string };
  registered_country?: { iso_code?: string };
  autonomous_system_number?: number;
}

export class VisitorInfo {
  private readonly reader: { get(ip: string): unknown } | null;

  constructor(
    geoipFile: string | null,
    private readonly headers: Partial<Record<VisitorAttribute, string>>,
  ) {
    this.reader = geoipFile ? (new Reader(fs.readFileSync(geoipFile)) as { get(ip: string): unknown }) : null;
  }

  /** Country (ISO 3166-1 alpha-2), ASN and TLS fingerprints of a request, as far as they are known. */
  attributes(
    req: IncomingMessage,
    ip: string,
    fromTrustedProxy: boolean,
  ): Partial<Record<VisitorAttribute, string | null>> {
    const out: Partial<Record<VisitorAttribute, string | null>> = {};
    if (this.reader && ip) {
      try {
        const rec = this.reader.get(ip.replace(/^::ffff:/, '')) as GeoRecord | null;
        const cc = rec?.country?.iso_code ?? rec?.registered_country?.iso_code;
        if (cc) out.country = cc.toUpperCase();
        if (rec?.autonomous_system_number) out.asn = String(rec.autonomous_system_number);
      } catch {
        // Not an address the database knows: leave the attributes unknown.
      }
    }
    if (fromTrustedProxy) {
      for (const attr of VISITOR_ATTRIBUTES) {
        const name = this.headers[attr];
        const v = name ? req.headers[name] : undefined;
        const value = Array.isArray(v) ? v[0] : v;
        if (value && value.length <= 256)
          out[attr] = attr === 'country' ? value.trim().toUpperCase() : value.trim();
      }
    }
    return out;
  }

  get active(): boolean {
    return this.reader !== null || Object.keys(this.headers).length > 0;
  }
}
