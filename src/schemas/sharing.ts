import { Type } from '@sinclair/typebox';
import { DataEnvelope } from './common.ts';
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
