import { type Static, Type } from '@sinclair/typebox';
import { CAPABILITIES, ROLES, TARGET_PATTERN } from '../domain/access/model.ts';
import { DataEnvelope, DateTime, Nullable } from './common.ts';
import { defineSchema } from './registry.ts';

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Role = Type.Union(
  ROLES.map((r) => Type.Literal(r)),
  {
    description:
      '`viewer` (page.view), `commenter` (+ comments.read, comments.write), `editor` (+ content.publish), `manager` (+ access.manage)',
  },
);
const Capability = Type.Union(CAPABILITIES.map((c) => Type.Literal(c)));

export const AudienceSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('public') }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('team') }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('person'),
        userId: Type.Optional(Id),
        email: Type.Optional(Type.String({ minLength: 3, maxLength: 320, format: 'email' })),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Union([Type.Literal('link'), Type.Literal('password'), Type.Literal('machine')]),
        credentialId: Id,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('external'),
        issuer: Type.String({ minLength: 1, maxLength: 500 }),
        subject: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'Who the grant is for. `link`, `password` and `machine` grants are made by their credential’s own endpoint; `external` is held by the model (no issuer connects yet).',
  },
);

const Country = Type.String({ pattern: '^[A-Za-z]{2}$' });
export const ConstraintsSchema = Type.Object(
  {
    notBefore: Type.Optional(
      Type.String({ format: 'date-time', description: 'Inactive before this instant' }),
    ),
    expiresAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Inactive from this instant (the instant itself is expired)',
      }),
    ),
    maxUses: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000_000,
        description: 'Visitor sessions started (or machine requests) the grant allows; counted atomically',
      }),
    ),
    verifiedEmail: Type.Optional(
      Type.Boolean({ description: 'The visitor’s e-mail address must be verified' }),
    ),
    emailDomains: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 50 })),
    ip: Type.Optional(
      Type.Array(Type.String({ minLength: 2, maxLength: 64 }), {
        maxItems: 100,
        description: 'IPv4/IPv6 addresses or CIDR ranges',
      }),
    ),
    countryAllow: Type.Optional(Type.Array(Country, { maxItems: 250 })),
    countryDeny: Type.Optional(Type.Array(Country, { maxItems: 250 })),
    uaDeny: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 50,
        description: 'Case-insensitive User-Agent substrings refused',
      }),
    ),
  },
  { additionalProperties: false },
);

const Paths = Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
  minItems: 1,
  maxItems: 100,
  description:
    'Path globs: `*` within a segment, `**` any segments; `!glob` excludes (for this grant only). Default `["/**"]`.',
});
const Target = Type.String({
  pattern: TARGET_PATTERN,
  description: '`live` (default), `all-versions`, `version:<id>` or `branch:<name>`',
});

export const GrantInputSchema = Type.Object(
  {
    audience: AudienceSchema,
    paths: Type.Optional(Paths),
    role: Type.Optional(Role),
    target: Type.Optional(Target),
    constraints: Type.Optional(ConstraintsSchema),
    note: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false },
);
export type GrantInput = Static<typeof GrantInputSchema>;
export const CreateGrantBody = defineSchema('CreateGrantRequest', GrantInputSchema);
export const PutGrantBody = defineSchema('PutGrantRequest', GrantInputSchema);

export const GrantSchema = Type.Object(
  {
    id: Type.String({ description: '`grt_…`' }),
    spaceId: Type.String(),
    audience: AudienceSchema,
    paths: Type.Array(Type.String()),
    role: Role,
    capabilities: Type.Array(Capability),
    target: Type.String(),
    constraints: ConstraintsSchema,
    uses: Type.Integer({ minimum: 0 }),
    source: Type.Union(
      ['grant', 'link', 'password', 'machine'].map((s) => Type.Literal(s)),
      {
        description: '`grant` (made here) or the credential kind that owns it',
      },
    ),
    credentialId: Nullable(Type.String()),
    note: Nullable(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { additionalProperties: false },
);
export type GrantView = Static<typeof GrantSchema>;

export const GrantResponse = defineSchema('GrantResponse', DataEnvelope(GrantSchema));
export const GrantListResponse = defineSchema('GrantList', DataEnvelope(Type.Array(GrantSchema)));

export const GrantCheckQuery = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'A URL on one of the space’s hostnames, or a path',
    }),
    capability: Type.Optional(Capability),
    userId: Type.Optional(Id),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    emailVerified: Type.Optional(Type.Boolean()),
    teamMember: Type.Optional(
      Type.Boolean({ description: 'The visitor is signed in as a member the space’s own access lets in' }),
    ),
    credential: Type.Optional(
      Type.String({
        maxLength: 300,
        description: '`link:<id>`, `password:<id>` or `machine:<id>` the visitor holds',
      }),
    ),
    ip: Type.Optional(Type.String({ maxLength: 64 })),
    country: Type.Optional(Country),
    userAgent: Type.Optional(Type.String({ maxLength: 1000 })),
    at: Type.Optional(Type.String({ format: 'date-time', description: 'When (default now)' })),
  },
  { additionalProperties: false },
);
export type GrantCheckInput = Static<typeof GrantCheckQuery>;

export const GrantCheckSchema = Type.Object(
  {
    allowed: Type.Boolean(),
    via: Nullable(
      Type.Union(
        ['grant', 'space_access', 'config'].map((s) => Type.Literal(s)),
        {
          description: '`space_access`: the space’s own `access`; `config`: the settings file’s `access` key',
        },
      ),
    ),
    grantId: Nullable(Type.String()),
    path: Type.String(),
    target: Type.String({ description: 'What the URL serves: `live`, `branch:<name>` or `version:<id>`' }),
    capability: Capability,
    misses: Type.Array(
      Type.Object({ grantId: Type.String(), miss: Type.String() }, { additionalProperties: false }),
      { description: 'Why each grant that did not let the visitor in did not' },
    ),
  },
  { additionalProperties: false },
);
export type GrantCheckView = Static<typeof GrantCheckSchema>;
export const GrantCheckResponse = defineSchema('GrantCheckResponse', DataEnvelope(GrantCheckSchema));
