import type { Static } from '@sinclair/typebox';
import type { Access } from '../../domain/spaces/service.ts';
import type { InvitationRow, TeamView } from '../../domain/teams/service.ts';
import type { Invitation, TeamCreated, TeamDetail, TeamListItem } from '../../schemas/teams.ts';

type Partner = { enabledAt: string } | null;

function common(v: TeamView) {
  const t = v.team;
  return {
    id: t.id,
    name: t.name,
    slug: t.slug,
    role: v.role,
    plan: t.plan as Static<typeof TeamListItem>['plan'],
    partner: (t.partner_enabled_at ? { enabledAt: t.partner_enabled_at } : null) as Partner,
    defaultDataLocation: t.default_data_location,
    defaultAccess: t.default_space_access as Access,
    createdAt: t.created_at,
    updatedAt: t.updated_at,
  };
}

export function presentTeamListItem(v: TeamView): Static<typeof TeamListItem> {
  const c = common(v);
  return { ...c, tenantId: v.team.tenant_id };
}

export function presentTeamCreated(v: TeamView): Static<typeof TeamCreated> {
  const t = v.team;
  return {
    ...common(v),
    logo: t.logo,
    metadata: t.metadata,
    billingCustomerId: t.billing_customer_id,
    systemSpaceId: t.system_space_id,
    manifestStatus: { items: [], sourceVersionId: null },
    presentation: t.presentation ? JSON.parse(t.presentation) : null,
  };
}

export function presentTeamDetail(v: TeamView): Static<typeof TeamDetail> {
  return { ...presentTeamCreated(v), tenantId: v.team.tenant_id };
}

export function presentInvitation(
  i: InvitationRow & { team_slug?: string; team_name?: string },
): Static<typeof Invitation> {
  return {
    id: i.id,
    teamId: i.team_id,
    ...(i.team_slug ? { teamSlug: i.team_slug } : {}),
    ...(i.team_name ? { teamName: i.team_name } : {}),
    email: i.email,
    role: i.role as Static<typeof Invitation>['role'],
    status: i.status as Static<typeof Invitation>['status'],
    createdAt: i.created_at,
    expiresAt: i.expires_at,
    respondedAt: i.responded_at,
  };
}
