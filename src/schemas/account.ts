import { Type } from '@sinclair/typebox';
import { API_KEY_PRESET_NAMES, SCOPES } from '../domain/auth/scopes.ts';
import { DataEnvelope, DateTime, EmailAddress, Nullable, PageEnvelope } from './common.ts';
import { defineSchema } from './registry.ts';
import { Invitation, TeamRole } from './teams.ts';

const Password = Type.String({ minLength: 10, maxLength: 1024, description: 'At least 10 characters' });
export const ScopeSchema = Type.Union(SCOPES.map((s) => Type.Literal(s)));

export const User = defineSchema(
  'User',
  Type.Object(
    {
      id: Type.String(),
      email: Type.String(),
      name: Type.String(),
      isAdmin: Type.Boolean(),
      createdAt: DateTime,
    },
    { additionalProperties: false },
  ),
);

export const SignUpBody = defineSchema(
  'SignUpRequest',
  Type.Object(
    { email: EmailAddress, name: Type.String({ minLength: 1, maxLength: 255 }), password: Password },
    { additionalProperties: false },
  ),
);
export const CreateUserBody = defineSchema(
  'CreateUserRequest',
  Type.Object(
    {
      email: EmailAddress,
      name: Type.String({ minLength: 1, maxLength: 255 }),
      password: Password,
      isAdmin: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
);
export const UserResponse = defineSchema('UserResponse', DataEnvelope(User));

export const SignInBody = defineSchema(
  'SignInRequest',
  Type.Object(
    { email: EmailAddress, password: Type.String({ minLength: 1, maxLength: 1024 }) },
    { additionalProperties: false },
  ),
);
export const SessionCreated = defineSchema(
  'SessionCreatedResponse',
  DataEnvelope(
    Type.Object({ token: Type.String(), expiresAt: DateTime, user: User }, { additionalProperties: false }),
  ),
);

export const Account = defineSchema(
  'Account',
  Type.Object(
    {
      user: Nullable(User),
      teams: Type.Array(
        Type.Object(
          { id: Type.String(), slug: Type.String(), name: Type.String(), role: TeamRole },
          { additionalProperties: false },
        ),
      ),
      credential: Type.Object(
        {
          kind: Type.String(),
          id: Type.String(),
          scopes: Type.Array(ScopeSchema),
          teamId: Nullable(Type.String()),
          spaceId: Nullable(Type.String()),
        },
        { additionalProperties: false },
      ),
      invitations: Type.Array(Invitation),
    },
    { additionalProperties: false },
  ),
);
export const AccountResponse = defineSchema('AccountResponse', DataEnvelope(Account));

export const ApiKey = defineSchema(
  'ApiKey',
  Type.Object(
    {
      id: Type.String(),
      name: Type.String(),
      teamId: Type.String(),
      spaceId: Nullable(
        Type.String({ description: 'The one space the key acts on; null when it acts for the whole team' }),
      ),
      preset: Type.String(),
      scopes: Type.Array(ScopeSchema),
      hint: Type.String({ description: 'Last four characters of the key' }),
      createdAt: DateTime,
      expiresAt: Nullable(DateTime),
      lastUsedAt: Nullable(DateTime),
      revokedAt: Nullable(DateTime),
    },
    { additionalProperties: false },
  ),
);
export const ApiKeyCreated = defineSchema(
  'ApiKeyCreated',
  Type.Composite(
    [ApiKey, Type.Object({ token: Type.String({ description: 'The key; shown only in this response' }) })],
    {
      additionalProperties: false,
    },
  ),
);
export const CreateApiKeyBody = defineSchema(
  'CreateApiKeyRequest',
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 255 }),
      team: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 255,
          description: 'Team id or slug; default: your first team (or the team of `space`)',
        }),
      ),
      space: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 255,
          description:
            'Space id or slug: binds the key to this space, which it alone can read and publish to (other spaces answer 404)',
        }),
      ),
      preset: Type.Optional(
        Type.Union(
          API_KEY_PRESET_NAMES.map((p) => Type.Literal(p)),
          { default: 'space_publisher' },
        ),
      ),
      expiresAt: Type.Optional(Nullable(DateTime)),
    },
    { additionalProperties: false },
  ),
);
export const ApiKeyResponse = defineSchema('ApiKeyResponse', DataEnvelope(ApiKey));
export const ApiKeyCreatedResponse = defineSchema('ApiKeyCreatedResponse', DataEnvelope(ApiKeyCreated));
export const ApiKeyListResponse = defineSchema('ApiKeyListResponse', PageEnvelope(ApiKey));
