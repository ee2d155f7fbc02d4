import { type TSchema, Type } from '@sinclair/typebox';
import { EMAIL_MAX_LENGTH, EMAIL_PATTERN } from '../domain/accounts/email.ts';
import { defineSchema } from './registry.ts';

export const DateTime = Type.String({ format: 'date-time' });
export const SchemaRef = Type.Optional(Type.String({ format: 'uri' }));

/** Every body field that takes an e-mail address uses this (see `domain/accounts/email.ts`). */
export const EmailAddress = Type.String({
  minLength: 3,
  maxLength: EMAIL_MAX_LENGTH,
  pattern: EMAIL_PATTERN,
  description: 'An e-mail address (`name@host`; a host without dots such as `localhost` is accepted)',
});

export const Problem = defineSchema(
  'Problem',
  Type.Object(
    {
      $schema: SchemaRef,
      type: Type.String(),
      title: Type.String(),
      status: Type.Integer(),
      detail: Type.String(),
      code: Type.String(),
      pointer: Type.Optional(Type.String()),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      suggestions: Type.Optional(Type.Array(Type.String())),
      next: Type.Optional(Type.Array(Type.String())),
      requestId: Type.String(),
    },
    { additionalProperties: false, description: 'RFC 9457 problem document' },
  ),
);

export const Pagination = Type.Object(
  {
    nextCursor: Type.Union([Type.String(), Type.Null()]),
    hasMore: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
};

/** `{ $schema?, data: T }` */
export function DataEnvelope<T extends TSchema>(data: T) {
  return Type.Object({ $schema: SchemaRef, data }, { additionalProperties: false });
}

/** `{ $schema?, data: T[], pagination }` */
export function PageEnvelope<T extends TSchema>(item: T) {
  return Type.Object(
    { $schema: SchemaRef, data: Type.Array(item), pagination: Pagination },
    { additionalProperties: false },
  );
}

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
