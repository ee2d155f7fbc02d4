import { Type } from '@sinclair/typebox';
import { DataEnvelope, DateTime, Nullable } from './common.ts';
import { defineSchema } from './registry.ts';

/** Spec: "Diagnostic record" — a Diagnostic entry plus `id`, `versionId`, `createdAt`. */
export const DiagnosticRecord = defineSchema(
  'DiagnosticRecord',
  Type.Object(
    {
      id: Type.String({ description: 'Stable record id' }),
      versionId: Type.String(),
      createdAt: DateTime,
      code: Type.String({ pattern: '^[a-z0-9]+(_[a-z0-9]+)*$' }),
      severity: Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('error')]),
      message: Type.String(),
      path: Type.Optional(Nullable(Type.String())),
      provider: Type.Optional(
        Nullable(Type.Union(['infra', 'dns', 'registrar', 'runtime'].map((p) => Type.Literal(p)))),
      ),
      details: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
      fix: Type.Optional(Nullable(Type.String())),
      retryable: Type.Optional(Nullable(Type.Boolean())),
    },
    { additionalProperties: false },
  ),
);

export const DiagnosticsResponse = defineSchema(
  'DiagnosticsResponse',
  DataEnvelope(Type.Array(DiagnosticRecord)),
);
