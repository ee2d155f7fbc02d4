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
