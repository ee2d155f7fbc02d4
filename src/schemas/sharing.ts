import { type Static, Type } from '@sinclair/typebox';
import { ConstraintsSchema } from './access.ts';
import { DataEnvelope, DateTime, Nullable } from './common.ts';
import { defineSchema } from './registry.ts';

export const LogoutAllResponse = defineSchema(
  'LogoutAllResponse',
  DataEnvelope(
    Type.Object(
      { epoch: Type.Integer({ description: 'Sessions from before this epoch no longer count' }) },
      { additionalProperties: false },
    ),
  ),
);

const Role2 = Type.Union([Type.Literal('viewer'), Type.Literal('commenter')], {
  description: '`viewer` or `commenter` (default)',
});
const AnyRole = Type.Union(
  ['viewer', 'commenter', 'editor', 'manager'].map((r) => Type.Literal(r)),
  { description: 'Any role (default `viewer`)' },
);
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Landing = Type.String({
  minLength: 1,
  maxLength: 1024,
  pattern: '^/',
  description: 'The path the link opens (default `/`)',
});
const Scope = {
  paths: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
      minItems: 1,
      maxItems: 100,
      description: 'Path globs of the credential’s grant (default `["/**"]`; `!glob` excludes)',
    }),
  ),
  target: Type.Optional(
    Type.String({
      maxLength: 300,
      description: '`live` (default), `all-versions`, `version:<id>`, `branch:<name>`',
    }),
  ),
  constraints: Type.Optional(ConstraintsSchema),
};

const CredentialBase = {
  id: Type.String(),
  spaceId: Type.String(),
  name: Nullable(Type.String()),
  grantId: Type.String({ description: 'The grant this credential opens (see `grants`)' }),
  role: Type.String(),
  paths: Type.Array(Type.String()),
  target: Type.String(),
  constraints: ConstraintsSchema,
  uses: Type.Integer(),
  createdAt: DateTime,
  updatedAt: DateTime,
  lastUsedAt: Nullable(DateTime),
};

export const ShareLinkSchema = Type.Object(
  {
    ...CredentialBase,
    landing: Type.String(),
    url: Type.String({ description: '`https://<host>/<landing>?__=<token>`: the same after edits' }),
  },
  { additionalProperties: false },
);
export type ShareLinkView = Static<typeof ShareLinkSchema>;
export const CreateShareLinkBody = defineSchema(
  'CreateShareLinkRequest',
  Type.Object(
    { name: Type.Optional(Name), role: Type.Optional(Role2), landing: Type.Optional(Landing), ...Scope },
    { additionalProperties: false },
  ),
);
export const UpdateShareLinkBody = defineSchema(
  'UpdateShareLinkRequest',
  Type.Object(
    { name: Type.Optional(Name), role: Type.Optional(Role2), landing: Type.Optional(Landing), ...Scope },
    { additionalProperties: false, minProperties: 1 },
  ),
);
export const ShareLinkResponse = defineSchema('ShareLinkResponse', DataEnvelope(ShareLinkSchema));
export const ShareLinkListResponse = defineSchema('ShareLinkList', DataEnvelope(Type.Array(ShareLinkSchema)));

export const CredentialSchema = Type.Object(
  { ...CredentialBase, kind: Type.Union([Type.Literal('password'), Type.Literal('machine')]) },
  { additionalProperties: false },
);
export type CredentialView = Static<typeof CredentialSchema>;
const CredentialWithSecret = Type.Object(
  {
    ...CredentialSchema.properties,
    token: Type.String({
      description:
        'The machine token (`smc_…`), shown this once: send it as `X-Spaces-Access-Token` (never in the URL)',
    }),
  },
  { additionalProperties: false },
);
export const CreateMachineCredentialBody = defineSchema(
  'CreateMachineCredentialRequest',
  Type.Object(
    { name: Type.Optional(Name), role: Type.Optional(AnyRole), ...Scope },
    { additionalProperties: false },
  ),
);
const Password = Type.String({ minLength: 8, maxLength: 256, description: 'At least 8 characters' });
export const CreatePasswordCredentialBody = defineSchema(
  'CreatePasswordCredentialRequest',
  Type.Object(
    { name: Type.Optional(Name), password: Password, role: Type.Optional(Role2), ...Scope },
    { additionalProperties: false },
  ),
);
export const RotatePasswordBody = defineSchema(
  'RotatePasswordCredentialRequest',
  Type.Object({ password: Password }, { additionalProperties: false }),
);
export const RotateMachineBody = defineSchema(
  'RotateMachineCredentialRequest',
  Type.Object({}, { additionalProperties: false }),
);
export const CredentialResponse = defineSchema('AccessCredentialResponse', DataEnvelope(CredentialSchema));
export const CredentialWithTokenResponse = defineSchema(
  'MachineCredentialWithTokenResponse',
  DataEnvelope(CredentialWithSecret),
);
export const CredentialListResponse = defineSchema(
  'AccessCredentialList',
  DataEnvelope(Type.Array(CredentialSchema)),
);
