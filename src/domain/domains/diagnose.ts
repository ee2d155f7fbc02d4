import type { DomainView } from './service.ts';

export type DomainServing = 'ready' | 'waiting_for_dns' | 'waiting_for_certificate' | 'no_https';

/** What a domain still waits for before it is served, and what to fix, in the order to fix it. */
export function diagnose(
  v: DomainView,
  httpsEnabled: boolean,
): { serving: DomainServing; problems: string[] } {
  const problems: string[] = [];
  const [ownership, ...rest] = v.records;
  const routing = rest.filter((r) => r.purpose === 'routing');
  const certificate = rest.filter((r) => r.purpose === 'certificate');
  if (v.row.status !== 'verified') {
    problems.push(
      ownership?.state === 'mismatch'
        ? `The TXT record ${ownership.name} holds other values; add ${ownership.value}.`
        : `Create the TXT record ${ownership?.name} with ${ownership?.value}, then verify.`,
    );
  }
  for (const r of routing) {
    if (r.state === 'ok') continue;
    if (r.value === null) problems.push(r.note ?? `The ${r.type} record of ${r.name} has no value to check.`);
    else if (r.state === 'mismatch')
      problems.push(`${r.name} points elsewhere (${r.seen.join(', ')}); set ${r.type} ${r.value}.`);
    else if (r.state !== 'unchecked') problems.push(`Create ${r.type} ${r.name} → ${r.value}.`);
  }
  for (const r of certificate) {
    if (r.state === 'ok') continue;
    problems.push(
      r.state === 'mismatch'
        ? `${r.name} points elsewhere (${r.seen.join(', ')}); set CNAME ${r.value} for the wildcard's certificate.`
        : `Create CNAME ${r.name} → ${r.value} for the wildcard's certificate (DNS-01).`,
    );
  }
  if (v.certificate?.status === 'failed')
    problems.push(`The last certificate order failed: ${v.certificate.last_error}`);
  let serving: DomainServing;
  if (v.row.status !== 'verified' || routing.some((r) => r.state !== 'ok')) serving = 'waiting_for_dns';
  else if (!httpsEnabled) serving = 'no_https';
  else serving = v.certificate?.status === 'issued' ? 'ready' : 'waiting_for_certificate';
  return { serving, problems };
}
