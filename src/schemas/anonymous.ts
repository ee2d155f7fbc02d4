import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable } from './common.ts';
import { defineSchema } from './registry.ts';
import { Space } from './spaces.ts';

export const ClaimStatus = defineSchema(
  'ClaimStatus',
  Type.Object(
    {
      spaceId: Type.String(),
      title: Type.String(),
      slug: Type.String(),
      liveUrl: Type.String(),
      claimed: Type.Boolean(),
      expired: Type.Boolean(),
      expiresAt: Nullable(DateTime),
      extendedTo: Nullable(DateTime),
      purgeAfter: Nullable(DateTime),
      secondsLeft: Type.Integer({ minimum: 0 }),
      signupOpen: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
);
export const ClaimStatusResponse = defineSchema('ClaimStatusResponse', DataEnvelope(ClaimStatus));

export const ClaimBody = defineSchema(
  'ClaimRequest',
  Type.Object(
    {
      key: Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'The space key (`sfc_…`) from the claim link',
      }),
      team: Type.Optional(
        Type.String({ minLength: 1, description: 'Team id or slug; default: your own team' }),
      ),
    },
    { additionalProperties: false },
  ),
);
export const ClaimResponse = defineSchema(
  'ClaimResponse',
  DataEnvelope(Type.Object({ space: Space }, { additionalProperties: false })),
);
export const RotateResponse = defineSchema(
  'ClaimRotateResponse',
  DataEnvelope(
    Type.Object(
      {
        key: Type.String({ description: 'The new space key; shown only here' }),
        claimUrl: Type.String(),
        spaceId: Type.String(),
      },
      { additionalProperties: false },
    ),
  ),
);
