import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, EmailAddress, Nullable, PageEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';
import { AccessLevel } from './spaces.ts';

export const TeamRole = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);
export const Plan = Type.Union(
  ['free', 'go', 'plus', 'gold', 'enterprise', 'internal'].map((p) => Type.Literal(p)),
);
/** behaviour §15 "Future-space access default": what a new space of the team starts as. */
const DefaultAccess = {
  ...AccessLevel,
  description:
    'Access a new space of this team starts with when its creator names none: `private` (owners and admins, and its creator), `team` (every member; the default for new teams) or `public` (anyone)',
};
const Partner = Nullable(Type.Object({ enabledAt: DateTime }, { additionalProperties: false }));

const ManifestItem = Type.Object(
  {
    key: Type.String(),
    state: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('failed')]),
    detail: Type.Optional(Type.String()),
    since: DateTime,
    challenge: Type.Optional(Type.String()),
    audience: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const HttpsUrl = Type.String({ minLength: 1, maxLength: 2048, pattern: '^https://[^\\s"\'<>\\\\*]*$' });
const Presentation = Nullable(
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      logo: Type.Optional(HttpsUrl),
      supportUrl: Type.Optional(HttpsUrl),
      claimOrigin: Type.Optional(HttpsUrl),
      accessHandoffOrigin: Type.Optional(HttpsUrl),
      problemDocsBaseUrl: Type.Optional(HttpsUrl),
      contacts: Type.Optional(Type.Record(Type.String(), Type.String())),
    },
    { additionalProperties: false },
  ),
);

/** Team, list variant (spec: "In list"). */
export const TeamListItem = defineSchema(
  'TeamListItem',
  Type.Object(
    {
      id: Type.String(),
      tenantId: Type.String(),
      name: Type.String(),
      slug: Type.String(),
      role: TeamRole,
      plan: Plan,
      partner: Partner,
      defaultDataLocation: Type.String(),
      defaultAccess: DefaultAccess,
      createdAt: DateTime,
      updatedAt: DateTime,
    },
    { additionalProperties: false },
  ),
);

/** Team, create variant (spec: "In create response"). */
export const TeamCreated = defineSchema(
  'TeamCreated',
  Type.Object(
    {
      id: Type.String(),
      name: Type.String(),
      slug: Type.String(),
      role: TeamRole,
      plan: Plan,
      partner: Partner,
      defaultDataLocation: Type.String(),
      defaultAccess: DefaultAccess,
      createdAt: DateTime,
      updatedAt: DateTime,
      logo: Nullable(Type.String()),
      metadata: Nullable(Type.String()),
      billingCustomerId: Nullable(Type.String()),
      systemSpaceId: Nullable(Type.String()),
      manifestStatus: Type.Object(
        { items: Type.Array(ManifestItem), sourceVersionId: Nullable(Type.String()) },
        { additionalProperties: false },
      ),
      presentation: Presentation,
    },
    { additionalProperties: false },
  ),
);

/** A single team read (`GET /v1/teams/{teamId}`): the create variant plus `tenantId`. */
export const TeamDetail = defineSchema(
  'TeamDetail',
  Type.Composite([TeamCreated, Type.Object({ tenantId: Type.String() })], { additionalProperties: false }),
);

export const TeamSlug = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$',
  description: 'Lowercase letters, digits and hyphens, starting and ending with a letter or digit',
});

export const CreateTeamBody = defineSchema(
  'CreateTeamRequest',
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 255 }),
      slug: Type.Optional(TeamSlug),
    },
    { additionalProperties: false },
  ),
);

export const UpdateTeamBody = defineSchema(
  'UpdateTeamRequest',
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      slug: Type.Optional(TeamSlug),
      logo: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
      metadata: Type.Optional(Nullable(Type.String({ maxLength: 65536 }))),
      defaultDataLocation: Type.Optional(
        Type.Union(['auto', 'ams', 'bur', 'dca', 'dfw'].map((l) => Type.Literal(l))),
      ),
      defaultAccess: Type.Optional(DefaultAccess),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
);

export const TeamCreateResponse = defineSchema('TeamCreateResponse', DataEnvelope(TeamCreated));
export const TeamDetailResponse = defineSchema('TeamDetailResponse', DataEnvelope(TeamDetail));
export const TeamListResponse = defineSchema('TeamListResponse', PageEnvelope(TeamListItem));

export const Member = defineSchema(
  'TeamMember',
  Type.Object(
    {
      userId: Type.String(),
      email: Type.String(),
      name: Type.String(),
      role: TeamRole,
      createdAt: DateTime,
      updatedAt: DateTime,
    },
    { additionalProperties: false },
  ),
);
export const MemberResponse = defineSchema('TeamMemberResponse', DataEnvelope(Member));
export const MemberListResponse = defineSchema('TeamMemberListResponse', PageEnvelope(Member));
export const UpdateMemberBody = defineSchema(
  'UpdateTeamMemberRequest',
  Type.Object({ role: TeamRole }, { additionalProperties: false }),
);

export const Invitation = defineSchema(
  'TeamInvitation',
  Type.Object(
    {
      id: Type.String(),
      teamId: Type.String(),
      teamSlug: Type.Optional(Type.String()),
      teamName: Type.Optional(Type.String()),
      email: Type.String(),
      role: TeamRole,
      status: Type.Union(['pending', 'accepted', 'declined', 'canceled'].map((s) => Type.Literal(s))),
      createdAt: DateTime,
      expiresAt: DateTime,
      respondedAt: Nullable(DateTime),
    },
    { additionalProperties: false },
  ),
);
export const InvitationResponse = defineSchema('TeamInvitationResponse', DataEnvelope(Invitation));
export const InvitationListResponse = defineSchema('TeamInvitationListResponse', PageEnvelope(Invitation));
export const CreateInvitationBody = defineSchema(
  'CreateTeamInvitationRequest',
  Type.Object(
    {
      email: EmailAddress,
      role: Type.Optional(TeamRole),
    },
    { additionalProperties: false },
  ),
);
