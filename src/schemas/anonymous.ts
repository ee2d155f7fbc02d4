import { Type } from '@sinclair/typebox';
import { ApiKey } from './account.ts';
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
      allowContinuation: Type.Optional(
        Type.Boolean({
          default: false,
          description:
            'Let whoever holds the space key (say, the agent that published) exchange it once for a durable key that publishes to this space only (`POST /v1/claim/exchange`). The key is yours: listed and revocable with your API keys',
        }),
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

export const ContinuationResponse = defineSchema(
  'ClaimExchangeResponse',
  DataEnvelope(
    Type.Object(
      {
        credential: Type.Composite(
          [
            ApiKey,
            Type.Object({
              accessToken: Type.String({
                description: 'The publish key (`sfa_…`) for this space; shown only in this response',
              }),
            }),
          ],
          { additionalProperties: false },
        ),
        space: Type.Object(
          { id: Type.String(), slug: Type.String(), liveUrl: Type.String() },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ),
);
