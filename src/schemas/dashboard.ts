import { Type } from '@sinclair/typebox';
import { User } from './account.ts';
import { DataEnvelope, DateTime } from './common.ts';
import { defineSchema } from './registry.ts';

/** A browser session: its token is in the `spaces_session` cookie, never in the body. */
export const BrowserSessionCreated = defineSchema(
  'BrowserSessionCreatedResponse',
  DataEnvelope(Type.Object({ expiresAt: DateTime, user: User }, { additionalProperties: false })),
);
