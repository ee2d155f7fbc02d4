import { isIP } from 'node:net';
import type { DomainRow } from '../../store/repos/domains/domains.ts';
import type { DnsLookups, Lookup } from './dns.ts';
import { challengeTarget } from './dns-provider.ts';

/** The label of the ownership record: `_spaces-challenge.<host>` holds `spaces-verify=<token>`. */
export const CHALLENGE_LABEL = '_spaces-challenge';
/**
 * A wildcard's routing record (`*.example.com`) can't be asked for by name: the check asks this
 * label under the parent instead, which only the wildcard record answers.
 */
export const WILDCARD_PROBE_LABEL = 'spaces-wildcard-probe';

/**
 * `ok`: DNS holds the value; `missing`: no such record; `mismatch`: records that say something else;
 * `unknown`: DNS could not be asked; `unchecked`: not looked at (yet, or nothing to compare with).
 */
export type RecordState = 'ok' | 'missing' | 'mismatch' | 'unknown' | 'unchecked';

export interface RequiredRecord {
  /**
   * `ownership` proves control; `routing` sends visitors here; `certificate` (a wildcard whose
   * parent is outside the DNS provider's zones) delegates `_acme-challenge` for DNS-01 orders.
   */
  purpose: 'ownership' | 'routing' | 'certificate';
  type: 'TXT' | 'CNAME' | 'A' | 'AAAA';
  /** The owner name to create the record at (A-labels). */
  name: string;
  /** The value it must hold; null when this server can't say (then `note` says why). */
  value: string | null;
  note?: string;
}

export interface DomainRecord extends RequiredRecord {
  state: RecordState;
  /** What DNS answered at the last check. */
  seen: string[];
}

export interface CheckResult {
  records: DomainRecord[];
}

/**
 * The records a domain needs: ownership first, then routing, then (wildcards whose certificates come
 * by DNS-01 through a provider that can't write under the parent) the `_acme-challenge` delegation.
 * A wildcard's ownership record is on its parent (`_spaces-challenge.example.com` for
 * `*.example.com`), as the hosted platforms do.
 */
export function requiredRecords(
  row: Pick<DomainRow, 'hostname' | 'verification_token'>,
  where: {
    target: string | null;
    addresses: readonly string[];
    apex: boolean;
    /** The DNS-01 provider's zones when this server orders wildcard certificates; else null. */
    dns01Zones?: readonly string[] | null;
  },
): RequiredRecord[] {
  const wildcard = row.hostname.startsWith('*.');
  const host = wildcard ? row.hostname.slice(2) : row.hostname;
  const out: RequiredRecord[] = [
    {
      purpose: 'ownership',
      type: 'TXT',
      name: `${CHALLENGE_LABEL}.${host}`,
      value: `spaces-verify=${row.verification_token}`,
    },
  ];
  if (where.apex) {
    if (where.addresses.length === 0) {
      out.push({
        purpose: 'routing',
        type: 'A',
        name: row.hostname,
        value: null,
        note: 'This server has no public addresses configured (SPACES_DOMAIN_ADDRESSES): point the apex at the address your visitors reach it on, or use a subdomain with a CNAME.',
      });
    }
    for (const a of where.addresses) {
      out.push({ purpose: 'routing', type: isIP(a) === 6 ? 'AAAA' : 'A', name: row.hostname, value: a });
    }
  } else {
    out.push({
      purpose: 'routing',
      type: 'CNAME',
      name: row.hostname,
      value: where.target,
      ...(where.target ? {} : { note: 'Bind the domain to a space to learn the target of its CNAME.' }),
    });
  }
  if (wildcard && where.dns01Zones?.length) {
    const challenge = challengeTarget(where.dns01Zones, host);
    if (challenge.delegated) {
      out.push({
        purpose: 'certificate',
        type: 'CNAME',
        name: `_acme-challenge.${host}`,
        value: challenge.name,
        note: 'The certificate of a wildcard is proved by DNS-01: this CNAME lets Spaces publish the proof in its own zone.',
      });
    }
  }
  return out;
}

const bare = (s: string) => s.toLowerCase().replace(/\.$/, '');

function stateOf(
  lookup: Lookup,
  matches: (values: string[]) => boolean,
): { state: RecordState; seen: string[] } {
  if (lookup.kind === 'error') return { state: 'unknown', seen: [] };
  if (lookup.kind === 'none') return { state: 'missing', seen: [] };
  return { state: matches(lookup.values) ? 'ok' : 'mismatch', seen: lookup.values };
}

/** Asks DNS for each required record and says what it found. */
export async function checkRecords(dns: DnsLookups, required: RequiredRecord[]): Promise<CheckResult> {
  const records: DomainRecord[] = [];
  for (const r of required) {
    if (r.value === null) {
      records.push({ ...r, state: 'unchecked', seen: [] });
      continue;
    }
    const value = r.value;
    // A wildcard owner name is asked for through a name only the wildcard answers.
    const asked = r.name.startsWith('*.') ? `${WILDCARD_PROBE_LABEL}.${r.name.slice(2)}` : r.name;
    if (r.type === 'TXT') {
      records.push({ ...r, ...stateOf(await dns.txt(asked), (v) => v.includes(value)) });
    } else if (r.type === 'CNAME') {
      const cname = await dns.cname(asked);
      records.push({ ...r, ...stateOf(cname, (v) => v.some((x) => bare(x) === bare(value))) });
    } else {
      records.push({ ...r, ...stateOf(await dns.addresses(asked), (v) => v.includes(value)) });
    }
  }
  return { records };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * When the check job looks again: a pending domain backs off from a minute to an hour; a verified
 * one is re-checked every six hours (so a lost domain stops being served within that); a domain that
 * lost control is looked at hourly; one that failed verification waits for `verify`.
 */
export function nextCheck(status: string, failures: number, now: Date): string | null {
  let wait: number;
  if (status === 'verified') wait = 6 * HOUR;
  else if (status === 'control_lost') wait = HOUR;
  else if (status === 'verification_failed') return null;
  else wait = Math.min(HOUR, MINUTE * 2 ** Math.min(failures, 10));
  return new Date(now.getTime() + wait).toISOString();
}
