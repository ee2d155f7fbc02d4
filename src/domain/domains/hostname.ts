import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { parse as parseDomain } from 'tldts';
import { ApiError } from '../../errors/problem.ts';

/** A custom domain's hostname, normalised: A-labels for storage and lookups, U-labels for people. */
export interface DomainName {
  /** Lower case, A-labels (`www.xn--bcher-kva.example`), no trailing dot; `*.` kept for a wildcard. */
  ascii: string;
  /** The same name in U-labels (`www.bücher.example`), as shown to people. */
  unicode: string;
  wildcard: boolean;
  /** True for a registrable domain itself (`example.com`): it needs A/AAAA records, not a CNAME. */
  apex: boolean;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** Names that are never anyone's on the public internet (RFC 6761, RFC 6762, and the like). */
const SPECIAL_SUFFIXES = ['localhost', 'local', 'invalid', 'onion', 'arpa', 'internal', 'home.arpa'];

function invalid(detail: string, pointer: string): ApiError {
  return new ApiError('invalid_domain_name', detail, { pointer });
}

/**
 * Reads a hostname as a person types it and refuses, with a pointer at the field, everything a
 * custom domain cannot be: a URL, a port, a trailing dot, an IP literal, `localhost`, a bare public
 * suffix (`co.uk`, `github.io`), a name under this server's base domain, or a wildcard anywhere but
 * one leading `*.` label. IDNs are accepted and stored as A-labels.
 */
export function normaliseHostname(
  input: string,
  options: {
    baseDomain: string;
    allowWildcard: boolean;
    pointer?: string;
    /** Names under the base domain (the managed hosts) are taken as they are, not refused: redirect targets. */
    allowBaseDomain?: boolean;
  },
): DomainName {
  const pointer = options.pointer ?? '/hostname';
  const raw = input.trim();
  if (raw === '') throw invalid('The hostname is empty.', pointer);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) || raw.includes('/')) {
    throw invalid(`"${raw}" is a URL; give the hostname alone, like www.example.com.`, pointer);
  }
  if (raw.startsWith('[') || isIP(raw) !== 0) {
    throw invalid(`"${raw}" is an IP address; a custom domain is a DNS name.`, pointer);
  }
  if (/:\d*$/.test(raw)) throw invalid(`"${raw}" names a port; give the hostname alone.`, pointer);
  if (raw.endsWith('.')) {
    throw invalid(
      `"${raw}" ends with a dot; give the name without it (${raw.replace(/\.+$/, '')}).`,
      pointer,
    );
  }
  let rest = raw;
  let wildcard = false;
  if (rest.startsWith('*.')) {
    wildcard = true;
    rest = rest.slice(2);
  }
  if (rest.includes('*')) {
    throw new ApiError('domain_wildcard_label', `"${raw}": a wildcard may only be one leading "*." label.`, {
      pointer,
    });
  }
  const ascii = domainToASCII(rest.toLowerCase());
  if (ascii === '' || ascii.length > 253) throw invalid(`"${raw}" is not a valid DNS name.`, pointer);
  const labels = ascii.split('.');
  if (labels.length < 2 || labels.some((l) => !LABEL.test(l))) {
    throw invalid(`"${raw}" is not a valid DNS name (labels of letters, digits and inner hyphens).`, pointer);
  }
  const base = options.baseDomain.toLowerCase();
  if (ascii === base || ascii.endsWith(`.${base}`)) {
    if (options.allowBaseDomain)
      return { ascii, unicode: domainToUnicode(ascii), wildcard: false, apex: false };
    throw new ApiError(
      'domain_reserved_suffix',
      `"${raw}" is under ${base}, which this server manages; each space already answers at <name>.${base}.`,
      { pointer },
    );
  }
  if (SPECIAL_SUFFIXES.some((s) => ascii === s || ascii.endsWith(`.${s}`))) {
    throw invalid(`"${raw}" is a special-use name that no one can point at this server publicly.`, pointer);
  }
  const parsed = parseDomain(ascii, { allowPrivateDomains: true });
  if (!parsed.domain) {
    throw invalid(`"${raw}" is a public suffix (like co.uk): add a name registered under it.`, pointer);
  }
  if (wildcard && !options.allowWildcard) {
    throw new ApiError('domain_wildcard_not_enabled', `"${raw}": a wildcard is not accepted here.`, {
      pointer,
    });
  }
  const full = wildcard ? `*.${ascii}` : ascii;
  const unicode = domainToUnicode(ascii);
  return {
    ascii: full,
    unicode: wildcard ? `*.${unicode}` : unicode,
    wildcard,
    apex: !wildcard && parsed.domain === ascii,
  };
}

/** The U-label form of a stored hostname. */
export function unicodeHostname(ascii: string): string {
  if (ascii.startsWith('*.')) return `*.${domainToUnicode(ascii.slice(2))}`;
  return domainToUnicode(ascii);
}

/** Whether a stored hostname is a registrable domain itself (needs A/AAAA rather than a CNAME). */
export function isApex(ascii: string): boolean {
  if (ascii.startsWith('*.')) return false;
  return parseDomain(ascii, { allowPrivateDomains: true }).domain === ascii;
}
