import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, EmailAddress, Nullable, PageEnvelope, PageQuery } from './common.ts';
import { defineSchema } from './registry.ts';

const Role = Type.Union(
  ['viewer', 'commenter', 'editor', 'manager'].map((r) => Type.Literal(r)),
  { description: 'What the person may do on the paths: `viewer` sees pages; `commenter` also comments; …' },
);
const Paths = Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
  minItems: 1,
  maxItems: 50,
  description:
    'Path globs (`*` within a segment, `**` any depth, `!/…` excludes for this grant); default `["/**"]`',
});
const Target = Type.String({
  pattern: '^(live|all-versions|version:[A-Za-z0-9_-]{1,64}|branch:[A-Za-z0-9._/-]{1,200})$',
  description: '`live` (default), `all-versions`, `version:<id>` or `branch:<name>`',
});

export const PersonGrantInput = Type.Object(
  { role: Type.Optional(Role), paths: Type.Optional(Paths), target: Type.Optional(Target) },
  { additionalProperties: false },
);

export const InvitePersonBody = defineSchema(
  'InvitePersonRequest',
  Type.Object(
    {
      email: EmailAddress,
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      role: Type.Optional(Role),
      paths: Type.Optional(Paths),
      target: Type.Optional(Target),
      note: Type.Optional(Type.String({ maxLength: 1000, description: 'Added to the invitation e-mail' })),
    },
    { additionalProperties: false },
  ),
);

export const PutPersonGrantsBody = defineSchema(
  'PutPersonGrantsRequest',
  Type.Object(
    {
      grants: Type.Array(PersonGrantInput, {
        maxItems: 20,
        description: 'The person’s grants, replacing all they had; `[]` leaves them listed with no access',
      }),
    },
    { additionalProperties: false },
  ),
);

const PersonGrant = Type.Object(
  { id: Type.String(), role: Type.String(), paths: Type.Array(Type.String()), target: Type.String() },
  { additionalProperties: false },
);

export const PersonSchema = Type.Object(
  {
    id: Type.String({ description: '`per_…`' }),
    spaceId: Type.String(),
    email: Type.String(),
    name: Nullable(Type.String()),
    status: Type.Union(
      ['invited', 'active'].map((s) => Type.Literal(s)),
      {
        description: '`invited` until the link is first used, then `active`',
      },
    ),
    grants: Type.Array(PersonGrant),
    invitedAt: DateTime,
    lastSentAt: Nullable(DateTime),
    acceptedAt: Nullable(DateTime),
    linkExpiresAt: Nullable(DateTime),
  },
  { additionalProperties: false },
);

export const PersonResponse = defineSchema('PersonResponse', DataEnvelope(PersonSchema));
export const PersonListResponse = defineSchema('PersonList', PageEnvelope(PersonSchema));

export const AccessRequestSchema = Type.Object(
  {
    id: Type.String({ description: '`areq_…`' }),
    spaceId: Type.String(),
    email: Type.String(),
    name: Nullable(Type.String()),
    message: Nullable(Type.String()),
    path: Type.String({ description: 'Where the visitor was refused' }),
    status: Type.Union(['pending', 'approved', 'denied'].map((s) => Type.Literal(s))),
    personId: Nullable(Type.String({ description: 'The person an approval made' })),
    createdAt: DateTime,
    verifiedAt: Nullable(DateTime),
    resolvedAt: Nullable(DateTime),
  },
  { additionalProperties: false },
);

export const AccessRequestResponse = defineSchema('AccessRequestResponse', DataEnvelope(AccessRequestSchema));
export const AccessRequestListResponse = defineSchema('AccessRequestList', PageEnvelope(AccessRequestSchema));
export const AccessRequestListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(
      Type.Union(
        ['pending', 'approved', 'denied'].map((s) => Type.Literal(s)),
        {
          description: 'Only requests in this state (default: every confirmed request)',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ApproveRequestBody = defineSchema(
  'ApproveAccessRequest',
  Type.Object(
    { role: Type.Optional(Role), paths: Type.Optional(Paths), target: Type.Optional(Target) },
    { additionalProperties: false },
  ),
);

export const PersonListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
