import type { Static } from '@sinclair/typebox';
import type { DomainView } from '../../domain/domains/service.ts';
import type { DomainSchema } from '../../schemas/domains.ts';

export function presentDomain(v: DomainView): Static<typeof DomainSchema> {
  const r = v.row;
  return {
    id: r.id,
    teamId: r.team_id,
    hostname: v.hostname,
    asciiHostname: r.hostname,
    apex: v.apex,
    wildcard: v.wildcard,
    spaceId: r.space_id,
    role: r.role as 'standard' | 'redirect',
    redirect:
      r.role === 'redirect' && r.redirect_target
        ? { target: r.redirect_target, status: (r.redirect_status ?? 308) as 301 | 302 | 307 | 308 }
        : null,
    status: r.status as 'pending' | 'verified' | 'verification_failed' | 'control_lost',
    verified: r.status === 'verified',
    verifiedAt: r.verified_at,
    records: v.records.map((x) => ({
      purpose: x.purpose,
      type: x.type,
      name: x.name,
      value: x.value,
      state: x.state,
      seen: x.seen,
      ...(x.note ? { note: x.note } : {}),
    })),
    certificate: v.certificate
      ? {
          status: v.certificate.status as 'issued' | 'failed' | 'pending',
          notBefore: v.certificate.not_before,
          notAfter: v.certificate.not_after,
          renewAfter: v.certificate.renew_after,
          lastError: v.certificate.last_error,
          nextAttemptAt: v.certificate.next_attempt_at,
        }
      : null,
    checkedAt: r.checked_at,
    nextCheckAt: r.next_check_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** What a domain still waits for before it is served, and what to do about it. */
export function diagnoseDomain(v: DomainView, httpsEnabled: boolean) {
  const problems: string[] = [];
  const [ownership, ...routing] = v.records;
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
  if (v.certificate?.status === 'failed')
    problems.push(`The last certificate order failed: ${v.certificate.last_error}`);
  let serving: 'ready' | 'waiting_for_dns' | 'waiting_for_certificate' | 'no_https';
  if (v.row.status !== 'verified' || routing.some((r) => r.state !== 'ok')) serving = 'waiting_for_dns';
  else if (!httpsEnabled) serving = 'no_https';
  else serving = v.certificate?.status === 'issued' ? 'ready' : 'waiting_for_certificate';
  return { domain: presentDomain(v), serving, problems };
}
