import type { GrantView } from '../../schemas/access.ts';
import type { GrantRow } from '../../store/repos/access/grants.ts';
import { type AccessRole, type Audience, type Constraints, type Grant, ROLE_CAPABILITIES } from './model.ts';

/** A stored grant as the matcher reads it. */
export function grantOf(row: GrantRow): Grant {
  const constraints = JSON.parse(row.constraints) as Constraints;
  if (row.max_uses !== null) constraints.maxUses = row.max_uses;
  return {
    id: row.id,
    audience: JSON.parse(row.audience) as Audience,
    paths: JSON.parse(row.paths) as string[],
    role: row.role as AccessRole,
    target: row.target,
    constraints,
    uses: row.uses,
    revokedAt: row.revoked_at,
  };
}

export function presentGrant(row: GrantRow): GrantView {
  const g = grantOf(row);
  const audienceType = g.audience.type;
  return {
    id: row.id,
    spaceId: row.space_id,
    audience: g.audience as GrantView['audience'],
    paths: g.paths,
    role: g.role,
    capabilities: [...ROLE_CAPABILITIES[g.role]],
    target: g.target,
    constraints: g.constraints,
    uses: row.uses,
    source:
      row.credential_id &&
      (audienceType === 'link' || audienceType === 'password' || audienceType === 'machine')
        ? audienceType
        : 'grant',
    credentialId: row.credential_id,
    note: row.note,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
